"""MCP019 invalid-server-field-type: a server entry value of the wrong type."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.mcp_entries import Entry, entries
from quiver.lint.support.text import describe
from quiver.model import JSON, Finding


def _str(value: JSON) -> bool:
    return isinstance(value, str)


def _str_list(value: JSON) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _str_map(value: JSON) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _positive_int(value: JSON) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _bool(value: JSON) -> bool:
    return isinstance(value, bool)


def _tools(value: JSON) -> bool:
    return _str(value) or _str_list(value)


TYPES: Mapping[str, tuple[str, Callable[[JSON], bool]]] = {
    "command": ("a string", _str),
    "args": ("a list of strings", _str_list),
    "env": ("a mapping of names to string values", _str_map),
    "cwd": ("a string", _str),
    "url": ("a string", _str),
    "headers": ("a mapping of names to string values", _str_map),
    "tools": ("a list of tool names", _tools),
    "timeout": ("a positive whole number of milliseconds", _positive_int),
    "description": ("a string", _str),
    "envFile": ("a string", _str),
    "alwaysLoad": ("`true` or `false`", _bool),
    "disableToolCache": ("`true` or `false`", _bool),
    "slowConnectionThresholdMs": ("a positive whole number of milliseconds", _positive_int),
}


def _types(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    for key, value in server.raw.items():
        spec = TYPES.get(key)
        if spec is None or spec[1](value):
            continue
        if key in ("env", "headers") and isinstance(value, dict):
            odd = next(k for k, v in value.items() if not isinstance(v, str))
            actual = f"`{odd}` = {describe(value[odd])}"
            advice = "quote the value"
        else:
            actual = describe(value)
            advice = "put the executable in `command` and its arguments in `args`" if key == "command" else ""
        yield INVALID_SERVER_FIELD_TYPE.finding(
            location=server.key_locations.get(key, server.location),
            agent=entry.agent,
            server=entry.name,
            key=key,
            expected=spec[0],
            actual=actual,
            advice=advice or f"write `{key}` as {spec[0]}",
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    for entry in entries(ctx):
        yield from _types(entry)


INVALID_SERVER_FIELD_TYPE = Rule(
    code="MCP019",
    name="invalid-server-field-type",
    severity="error",
    check=check,
    message="`{key}` of server `{server}` must be {expected}, not {actual}",
    hint="{advice}",
    doc="""\
## What it does
Flags a server field of the wrong type. For example: `command`, `url`, `cwd` or `description` that is not a string,
`args` that is not a list of strings, `env` or `headers` that is not a mapping of strings, `tools` that
is not a list of strings, a `timeout` that is not a positive whole number of milliseconds.

## Why is this bad?
Hosts reject or drop the value: an unquoted `PORT: 8080` in YAML `env` is a number, not a string, and
a `command` written as a list is not executed.

## Example
```yaml
env:
  DEBUG: true
```
Use instead:
```yaml
env:
  DEBUG: "true"
```

## Fix
Quote scalar values in `env` and `headers`; put the executable in `command` and the rest in `args`.

## References
Copilot CLI command reference, MCP server configuration.
""",
)


RULES: tuple[Rule, ...] = (INVALID_SERVER_FIELD_TYPE,)
