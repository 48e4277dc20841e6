"""MCP015-017: the loading settings quiver reads on a server: `deferTools`, `preload`, `preload_tools`."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.mcp_entries import Entry, entries
from quiver.lint.support.text import describe
from quiver.model import JSON, Finding
from quiver.suggest import did_you_mean


def _tool_names(value: JSON) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _loading(entry: Entry) -> Iterator[Finding]:
    server, raw = entry.server, entry.server.raw
    keys = server.key_locations
    if "deferTools" in raw and raw["deferTools"] not in ("auto", "never"):
        value = raw["deferTools"]
        if isinstance(value, str):
            advice = did_you_mean(value, ("auto", "never"), 'use "never" to keep the tools loaded, else "auto"')
        else:
            advice = 'write the string "never" to keep the tools loaded, "auto" to follow the threshold'
        yield INVALID_DEFER_TOOLS.finding(
            location=keys["deferTools"], agent=entry.agent, server=entry.name, actual=describe(value), advice=advice
        )
    if "preload" in raw and not isinstance(raw["preload"], bool):
        yield INVALID_PRELOAD_SETTING.finding(
            location=keys["preload"],
            agent=entry.agent,
            server=entry.name,
            key="preload",
            expected="`true` or `false`",
            actual=describe(raw["preload"]),
            advice="write a JSON boolean, without quotes",
        )
    if "preload_tools" in raw and not _tool_names(raw["preload_tools"]):
        yield INVALID_PRELOAD_SETTING.finding(
            location=keys["preload_tools"],
            agent=entry.agent,
            server=entry.name,
            key="preload_tools",
            expected="a list of tool names",
            actual=describe(raw["preload_tools"]),
            advice='write a list, e.g. ["search_issues"]',
        )
    if raw.get("preload") is False and raw.get("deferTools") == "never":
        yield CONTRADICTORY_PRELOAD.finding(location=keys["preload"], agent=entry.agent, server=entry.name)


def check(ctx: LintContext) -> Iterator[Finding]:
    for entry in entries(ctx):
        yield from _loading(entry)


INVALID_DEFER_TOOLS = Rule(
    code="MCP015",
    name="invalid-defer-tools",
    severity="error",
    check=check,
    message='`deferTools` of server `{server}` is {actual}; it must be `"auto"` or `"never"`',
    hint="{advice}",
    doc="""\
## What it does
Flags a `deferTools` value other than the strings `"auto"` and `"never"`.

## Why is this bad?
The host ignores the setting, so a server meant to stay loaded (`"never"`) is deferred behind tool
search, or the reverse.

## Example
```json
{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"], "deferTools": false}}}
```
Use instead:
```json
{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"], "deferTools": "never"}}}
```

## Fix
`"never"` keeps every tool of the server loaded; `"auto"` (the default) follows the threshold.

## References
Copilot CLI command reference, `deferTools`.
""",
)


INVALID_PRELOAD_SETTING = Rule(
    code="MCP016",
    name="invalid-preload-setting",
    severity="error",
    check=check,
    message="`{key}` of server `{server}` must be {expected}, not {actual}",
    hint="{advice}",
    doc="""\
## What it does
Flags a `preload` that is not `true`/`false`, and a `preload_tools` that is not a list of tool names.

## Why is this bad?
quiver ignores the setting: tools meant to be loaded up front are deferred (or the server is not
deferred when it should be), and the manifest's budget is wrong.

## Example
```json
{"mcp_servers": [{"name": "github", "preload_tools": "search_issues"}]}
```
Use instead:
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["search_issues"]}]}
```

## Fix
Write `preload` as a JSON boolean and `preload_tools` as a list of strings.

## References
DESIGN §2 and §3, `preload` and `preload_tools`.
""",
)


CONTRADICTORY_PRELOAD = Rule(
    code="MCP017",
    name="contradictory-preload",
    severity="warning",
    check=check,
    message='server `{server}` sets both `preload: false` and `deferTools: "never"`; `deferTools` wins',
    hint='remove one: `preload: false` defers the server, `deferTools: "never"` keeps it loaded',
    doc="""\
## What it does
Flags a server that asks both to be deferred (`preload: false`) and never to be deferred
(`deferTools: "never"`).

## Why is this bad?
One of the two settings is a mistake; quiver (like the Copilot CLI) honours `deferTools: "never"`, so
every tool of the server is loaded up front despite the `preload: false` the author may have meant.

## Example
```json
{"mcpServers": {"notion": {"command": "npx", "args": ["-y", "@notionhq/notion-mcp-server"],
  "preload": false, "deferTools": "never"}}}
```
Use instead:
```json
{"mcpServers": {"notion": {"command": "npx", "args": ["-y", "@notionhq/notion-mcp-server"],
  "preload": false}}}
```

## Fix
Keep the setting you mean and delete the other.

## References
DESIGN §3, preload rules 2 and the explicit `preload: false`.
""",
)


RULES: tuple[Rule, ...] = (INVALID_DEFER_TOOLS, INVALID_PRELOAD_SETTING, CONTRADICTORY_PRELOAD)
