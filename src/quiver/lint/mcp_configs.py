"""Lint rules about MCP server configs: config files and agents' `mcp-servers`.

This module holds the rules about a server's transport and definition and the family's `check`;
`_mcp_fields` holds the key, type and loading-setting rules, `_mcp_values` the rules about values
(secrets, variables, URLs, start-up commands). `_mcp_entries` says which host reads each entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from quiver.lint import _mcp_fields, _mcp_values
from quiver.lint._agent_fields import describe
from quiver.lint._locate import Sources
from quiver.lint._mcp_entries import Entry, entries
from quiver.lint.engine import LintContext
from quiver.model import Finding, Server
from quiver.rules import Rule
from quiver.suggest import did_you_mean

VSCODE_TYPES = ("stdio", "http", "sse")
COPILOT_TYPES = ("local", "stdio", "http", "sse", "streamable-http")
REQUIRES_TOOLS = ("agent", "copilot")  # hosts whose server entries must carry a `tools` allow-list

INVALID_SERVER_TYPE = Rule(
    code="MCP001",
    name="invalid-server-type",
    severity="error",
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

STDIO_SERVER_WITHOUT_COMMAND = Rule(
    code="MCP002",
    name="stdio-server-without-command",
    severity="error",
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

CONFLICTING_SERVER_DEFINITIONS = Rule(
    code="MCP014",
    name="conflicting-server-definitions",
    severity="warning",
    message="server `{server}` is also defined in `{other}`, with a different {field}",
    hint="make the definitions agree, or give the servers different names",
    doc="""\
## What it does
Flags a server name defined in two config files (for example `.mcp.json` and `.vscode/mcp.json`) with
a different `type`, `command`, `args` or `url`.

## Why is this bad?
Each host reads its own file, so the same agent talks to a different server in VS Code than in the
Copilot CLI or Claude Code, and quiver's lock file (one catalog per name) matches at most one of them.

## Example
`.mcp.json` runs `npx @org/server@1`, `.vscode/mcp.json` runs `npx @org/server@2` under the same name.

Use instead:
both files run `npx @org/server@2` (or the second is renamed `server-next`).

## Fix
Use one definition everywhere (`jq '{mcpServers: .servers}' .vscode/mcp.json > .mcp.json`), or rename
one of them. Differences in `env`, `headers` or loading settings are not reported.

## References
Copilot CLI command reference, MCP loading priority; DESIGN §2 (a later file's definition wins).
""",
)


def _type(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    if "type" not in server.raw:
        return
    value = server.raw["type"]
    allowed = VSCODE_TYPES if entry.host == "vscode" else COPILOT_TYPES
    if isinstance(value, str) and value in allowed:
        return
    if isinstance(value, str) and value.lower() in allowed:
        advice = f"write it in lower case: `{value.lower()}`"
    elif entry.host == "vscode" and value == "local":
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
        host = "agent `mcp-servers`" if entry.host == "agent" else f"Copilot files such as `{entry.file}`"
        yield MISSING_SERVER_TOOLS.finding(location=server.location, agent=entry.agent, server=entry.name, host=host)


def _signature(server: Server) -> dict[str, object]:
    return {"type": server.type, "command": server.command, "args": server.args, "url": server.url}


def _conflicts(ctx: LintContext) -> Iterator[Finding]:
    first: dict[str, tuple[str, Server]] = {}
    for cfg in ctx.project.configs:
        for server in cfg.servers:
            if not server.is_definition:
                continue
            seen = first.setdefault(server.name, (cfg.path, server))
            if seen[1] is server:
                continue
            old, new = _signature(seen[1]), _signature(server)
            field = next((key for key in old if old[key] != new[key]), None)
            if field is not None:
                yield CONFLICTING_SERVER_DEFINITIONS.finding(
                    location=server.location, server=server.name, other=seen[0], field=f"`{field}`"
                )


RULES: tuple[Rule, ...] = (
    INVALID_SERVER_TYPE,
    STDIO_SERVER_WITHOUT_COMMAND,
    REMOTE_SERVER_WITHOUT_URL,
    MISSING_SERVER_TOOLS,
    CONFLICTING_SERVER_DEFINITIONS,
    *_mcp_fields.RULES,
    *_mcp_values.RULES,
)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for entry in entries(ctx):
        yield from _type(entry)
        yield from _definition(entry)
        yield from _mcp_fields.check_entry(entry)
        yield from _mcp_values.check_entry(entry, src)
    yield from _conflicts(ctx)
