"""MCP001 invalid-server-type: a server `type` the host does not know."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.mcp_entries import Entry, entries
from quiver.lint.support.text import describe
from quiver.model import Finding
from quiver.sources.mcp_config import Reader
from quiver.suggest import did_you_mean

VSCODE_TYPES = ("stdio", "http", "sse")


COPILOT_TYPES = ("local", "stdio", "http", "sse", "streamable-http")


def _type(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    if "type" not in server.raw:
        return
    value = server.raw["type"]
    allowed = VSCODE_TYPES if entry.host == Reader.VSCODE else COPILOT_TYPES
    if isinstance(value, str) and value in allowed:
        return
    if isinstance(value, str) and value.lower() in allowed:
        advice = f"write it in lower case: `{value.lower()}`"
    elif entry.host == Reader.VSCODE and value == "local":
        advice = "VS Code calls a local server `stdio`"
    elif isinstance(value, str) and (guess := did_you_mean(value, allowed, "")):
        advice = guess
    elif "url" in server.raw:
        advice = "a server reached by `url` is `http` (or `sse`)"
    elif "command" in server.raw:
        advice = "a server started by `command` is `stdio`"
    else:
        advice = "use `stdio` with `command`, or `http` with `url`"
    shown = f"`{value}`" if isinstance(value, str) else describe(value)
    yield INVALID_SERVER_TYPE.finding(
        location=server.key_locations.get("type", server.location),
        agent=entry.agent,
        server=entry.name,
        value=shown,
        allowed=", ".join(f"`{t}`" for t in allowed),
        advice=advice,
    )


def check(ctx: LintContext) -> Iterator[Finding]:
    for entry in entries(ctx):
        yield from _type(entry)


INVALID_SERVER_TYPE = Rule(
    code="MCP001",
    name="invalid-server-type",
    severity="error",
    check=check,
    message="server `{server}` has `type` {value}, which is not one of {allowed}",
    hint="{advice}",
    doc="""\
## What it does
Flags a server `type` that the host does not know: anything but `stdio`, `http` and `sse` in VS Code
(`.vscode/mcp.json`), and anything but `local`, `stdio`, `http`, `sse` and `streamable-http` in the
`mcpServers` files and agent `mcp-servers`. Values are case-sensitive.

## Why is this bad?
The host skips the server (the Copilot CLI drops invalid entries one by one; the cloud agent rejects
the whole configuration), so none of its tools exist for the agents that rely on them.

## Example
```yaml
mcp-servers:
  docs:
    type: remote
    url: https://example.com/mcp
```
Use instead:
```yaml
mcp-servers:
  docs:
    type: http
    url: https://example.com/mcp
```

## Fix
A server reached by URL is `http` (streamable HTTP) or `sse`; a command started locally is `stdio`
(`local` in Copilot files).

## References
Copilot CLI command reference, MCP server configuration; VS Code MCP configuration reference.
""",
)


RULES: tuple[Rule, ...] = (INVALID_SERVER_TYPE,)
