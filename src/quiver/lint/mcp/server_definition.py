"""MCP002-004: a server entry that cannot start or that its host rejects: stdio without `command`, remote
without `url`, and Copilot entries without the `tools` allow-list they require."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.mcp_entries import Entry, entries
from quiver.model import Finding
from quiver.sources.mcp_config import Reader

REQUIRES_TOOLS = (Reader.AGENT, Reader.COPILOT)  # hosts whose server entries must carry a `tools` allow-list


def _definition(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    raw = server.raw
    if entry.overlay:
        return
    where = server.key_locations.get("type", server.location)
    if "type" not in raw:
        if "command" not in raw and "url" not in raw:
            yield STDIO_SERVER_WITHOUT_COMMAND.finding(location=server.location, agent=entry.agent, server=entry.name)
    elif server.type == "stdio" and "command" not in raw:
        yield STDIO_SERVER_WITHOUT_COMMAND.finding(location=where, agent=entry.agent, server=entry.name)
    elif server.type in ("http", "sse") and "url" not in raw:
        yield REMOTE_SERVER_WITHOUT_URL.finding(
            location=where, agent=entry.agent, server=entry.name, type=f"`{server.raw_type}`"
        )
    if entry.host in REQUIRES_TOOLS and "tools" not in raw:
        host = "agent `mcp-servers`" if entry.host == Reader.AGENT else f"Copilot files such as `{entry.file}`"
        yield MISSING_SERVER_TOOLS.finding(location=server.location, agent=entry.agent, server=entry.name, host=host)


def check(ctx: LintContext) -> Iterator[Finding]:
    for entry in entries(ctx):
        yield from _definition(entry)


STDIO_SERVER_WITHOUT_COMMAND = Rule(
    code="MCP002",
    name="stdio-server-without-command",
    severity="error",
    check=check,
    message="stdio server `{server}` has no `command`",
    hint="add `command` (and `args`), or give a remote server `type: http` and a `url`",
    doc="""\
## What it does
Flags a local server (`type` `stdio` or `local`, or no `type`, which defaults to local) without a
`command`. Entries that only adjust the loading of a server defined in another file (an overlay with
no `type`, `command` or `url`) are not flagged.

## Why is this bad?
The host has nothing to start: the server fails at start-up and its tools are missing.

## Example
```json
{"mcpServers": {"git": {"type": "stdio", "args": ["mcp-server-git"]}}}
```
Use instead:
```json
{"mcpServers": {"git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]}}}
```

## Fix
Add the executable as `command` and its arguments as `args`.

## References
Copilot CLI command reference, MCP server configuration (`command` required for local servers).
""",
)


REMOTE_SERVER_WITHOUT_URL = Rule(
    code="MCP003",
    name="remote-server-without-url",
    severity="error",
    check=check,
    message="{type} server `{server}` has no `url`",
    hint="add the server's endpoint as `url`",
    doc="""\
## What it does
Flags a remote server (`type` `http`, `sse` or `streamable-http`) without a `url`.

## Why is this bad?
The host cannot connect anywhere; the server and its tools are missing.

## Example
```json
{"servers": {"docs": {"type": "http"}}}
```
Use instead:
```json
{"servers": {"docs": {"type": "http", "url": "https://example.com/mcp"}}}
```

## Fix
Add `url`. If the server is really a local command, use `type: stdio` and `command`.

## References
Copilot CLI command reference and VS Code MCP configuration reference (`url` required).
""",
)


MISSING_SERVER_TOOLS = Rule(
    code="MCP004",
    name="missing-server-tools",
    severity="error",
    check=check,
    message="server `{server}` has no `tools` allow-list, which {host} require",
    hint='add `tools: ["*"]` for every tool, or list the tools the agent needs',
    doc="""\
## What it does
Flags a server definition without a `tools` allow-list in a file whose host requires one. Required in:
- an agent's `mcp-servers` (read by the Copilot cloud agent and the Copilot CLI);
- Copilot-only files: `mcp-config.json` (Copilot CLI, also `.copilot/mcp-config.json`) and
  `.github/mcp.json` (the Copilot CLI workspace file, and where a repository keeps its cloud agent
  configuration).

Not flagged: `.vscode/mcp.json` (VS Code has no `tools` field; tools are picked in the chat UI and by
the agent's `tools`), `.mcp.json` (shared with Claude Code, which has no `tools` field either), the
`mcp_servers` list form, and overlays that only adjust a server defined elsewhere.

## Why is this bad?
The cloud agent rejects an MCP configuration whose servers lack `tools`, and the Copilot CLI skips
invalid entries, so the agent runs without the server.

## Example
```yaml
mcp-servers:
  docs: {type: http, url: "https://example.com/mcp"}
```
Use instead:
```yaml
mcp-servers:
  docs: {type: http, url: "https://example.com/mcp", tools: ["search_docs"]}
```

## Fix
List the tools the agent needs (least privilege), or `["*"]` for all. There is no automatic fix:
choosing `*` widens what the agent may call.

## References
GitHub Docs, extending the cloud agent with MCP (`tools` required); Copilot CLI command reference.
""",
)


RULES: tuple[Rule, ...] = (STDIO_SERVER_WITHOUT_COMMAND, REMOTE_SERVER_WITHOUT_URL, MISSING_SERVER_TOOLS)
