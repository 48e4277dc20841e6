"""MCP018-020, one pass over each server entry's keys: unknown keys, wrong value types, and keys its
transport ignores."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.mcp_entries import HOST_NAMES, Entry, entries
from quiver.lint.support.text import describe
from quiver.model import JSON, Finding
from quiver.suggest import did_you_mean

# Keys quiver reads in every dialect (DESIGN §2), then each host's own (formats research §2).
QUIVER_KEYS = frozenset(
    {"type", "command", "args", "env", "cwd", "url", "headers", "tools", "deferTools", "preload", "preload_tools"}
    | {"timeout", "description"}
)
COPILOT_KEYS = frozenset(
    {"disableToolCache", "slowConnectionThresholdMs", "oauthClientId", "oauthScopes", "oauthPublicClient"}
    | {"oauthGrantType", "oidc", "filterMapping"}
)
CLAUDE_KEYS = frozenset({"alwaysLoad"})
VSCODE_KEYS = frozenset({"envFile", "sandboxEnabled", "sandbox", "dev", "oauth", "gallery", "version"})
KNOWN_KEYS: Mapping[str, frozenset[str]] = {
    "vscode": QUIVER_KEYS | VSCODE_KEYS,
    "agent": QUIVER_KEYS | COPILOT_KEYS,
    "copilot": QUIVER_KEYS | COPILOT_KEYS,
    "shared": QUIVER_KEYS | COPILOT_KEYS | CLAUDE_KEYS,
    "other": QUIVER_KEYS | COPILOT_KEYS | CLAUDE_KEYS | VSCODE_KEYS | {"auth"},
    "quiver": QUIVER_KEYS | COPILOT_KEYS | {"name"},
}
LOCAL_ONLY = ("command", "args", "env", "cwd", "envFile")
REMOTE_ONLY = ("url", "headers", "oauth")


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


def _keys(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    known = KNOWN_KEYS[entry.host]
    for key in server.raw:
        if key not in known:
            fallback = f"{HOST_NAMES[entry.host]} do not read it; remove it"
            if entry.host == "vscode":
                fallback = "VS Code does not read it; remove it"
            yield UNKNOWN_SERVER_KEY.finding(
                location=server.key_locations.get(key, server.location),
                agent=entry.agent,
                server=entry.name,
                key=key,
                suggestion=did_you_mean(key, known, fallback),
            )


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


def _transport(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    if server.type is None:
        return
    remote = server.type in ("http", "sse")
    for key in REMOTE_ONLY if not remote else LOCAL_ONLY:
        if key in server.raw:
            if remote:
                advice = "pass credentials in `headers`" if key == "env" else "remove it"
            else:
                advice = "remove it, or make the server remote (`type: http`) if `url` is its endpoint"
            yield KEY_IGNORED_BY_TRANSPORT.finding(
                location=server.key_locations.get(key, server.location),
                agent=entry.agent,
                server=entry.name,
                key=key,
                transport="remote" if remote else "local",
                advice=advice,
            )


def check(ctx: LintContext) -> Iterator[Finding]:
    for entry in entries(ctx):
        yield from _keys(entry)
        yield from _types(entry)
        yield from _transport(entry)


UNKNOWN_SERVER_KEY = Rule(
    code="MCP018",
    name="unknown-server-key",
    severity="warning",
    check=check,
    message="server `{server}` has unknown key `{key}`",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a server key that neither quiver nor the host reading the file knows. Each dialect has its own
set: VS Code adds `envFile`, `sandbox`, `dev`, `oauth`; Copilot adds `disableToolCache`, `oauth*`,
`filterMapping`; Claude Code adds `alwaysLoad`; quiver's `preload`, `preload_tools`, `deferTools`,
`timeout` and `description` are accepted everywhere.

## Why is this bad?
A misspelt key (`evn`, `header`, `defer_tools`) is silently ignored: the server starts without its
environment or headers, or with the wrong loading behaviour.

## Example
```json
{"mcpServers": {"docs": {"type": "http", "url": "https://example.com/mcp", "header": {}}}}
```
Use instead:
```json
{"mcpServers": {"docs": {"type": "http", "url": "https://example.com/mcp", "headers": {}}}}
```

## Fix
The hint names the closest known key. A key read by a host quiver does not know about can be
suppressed (`// quiver: ignore[MCP018]` in `.vscode/mcp.json`).

## References
Copilot CLI command reference; VS Code MCP configuration reference; formats research §2.
""",
)


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


KEY_IGNORED_BY_TRANSPORT = Rule(
    code="MCP020",
    name="key-ignored-by-transport",
    severity="warning",
    check=check,
    message="`{key}` has no effect on {transport} server `{server}`",
    hint="{advice}",
    doc="""\
## What it does
Flags keys of the other transport: `command`, `args`, `env`, `cwd` or `envFile` on a remote (`http`,
`sse`) server, `url`, `headers` or `oauth` on a local (`stdio`) one.

## Why is this bad?
The host ignores the key. Usually the entry mixes two set-ups: a token in `env` that never reaches a
remote server, or a `url` on a server that is in fact started locally.

## Example
```yaml
docs:
  type: http
  url: https://example.com/mcp
  env: {API_KEY: "${API_KEY}"}
```
Use instead:
```yaml
docs:
  type: http
  url: https://example.com/mcp
  headers: {Authorization: "Bearer ${API_KEY}"}
```

## Fix
Remove the key, or move the setting to the transport's own key (`headers` for remote servers,
`env` for local ones).

## References
Copilot CLI command reference, MCP server configuration (local vs remote fields).
""",
)


RULES: tuple[Rule, ...] = (UNKNOWN_SERVER_KEY, INVALID_SERVER_FIELD_TYPE, KEY_IGNORED_BY_TRANSPORT)
