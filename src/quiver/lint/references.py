"""Rules about tool references: found while resolving an agent's tool set (quiver.resolve)."""

from __future__ import annotations

from quiver.rules import Rule

UNKNOWN_TOOL_REFERENCE = Rule(
    code="AGT008",
    name="unknown-tool-reference",
    severity="error",
    message="`{ref}` matches no built-in tool and no tool of any visible server",
    hint="{suggestion}",
    doc="""\
## What it does
Flags an entry of an agent's `tools` that quiver can prove wrong: `server/tool` where the lock lists
`server`'s tools and `tool` is not one of them, or a bare name close to a tool or server of the MCP
configs and lock quiver reads. A name quiver cannot check (a server configured outside the repository,
an extension tool) is AGT022 instead.

## Why is this bad?
Hosts silently ignore tools they do not know, so the agent runs without a tool its prompt relies on.
A typo here is invisible until the agent fails at the task.

## Example
```yaml
tools: ["github/serch_issues"]
```
Use instead:
```yaml
tools: ["github/search_issues"]
```

## Fix
The hint proposes the closest known name (by edit distance). When the server changed, re-run
`quiver snapshot --server NAME`.

## Options
`mcp_configs` adds config files; `lock` names the lock file that lists each server's tools.

## References
GitHub Docs, custom agents configuration: tool names.
""",
)

AMBIGUOUS_TOOL_REFERENCE = Rule(
    code="AGT009",
    name="ambiguous-tool-reference",
    severity="error",
    message="bare tool name `{ref}` is served by several servers: {servers}",
    hint="qualify it, e.g. `{example}`",
    doc="""\
## What it does
Flags a bare tool name in `tools` that more than one visible MCP server serves.

## Why is this bad?
The host picks one of them (or both), so the agent may call a different server than intended.

## Example
```yaml
tools: ["search"]   # served by `github` and `notion`
```
Use instead:
```yaml
tools: ["github/search"]
```

## Fix
Write the reference as `server/tool`.

## References
DESIGN §3, bare MCP tool names resolve only when unique.
""",
)

UNKNOWN_SERVER_REFERENCE = Rule(
    code="AGT010",
    name="unknown-server-reference",
    severity="error",
    message="`{ref}` names server `{server}`, which no MCP config defines",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a `server/tool` or `server/*` reference whose server is neither configured (project configs or
the agent's own `mcp-servers`) nor a host built-in server, when its name is close to one that is: a
typo. A server no config here defines and that resembles none is AGT022 (only the host can resolve it).

## Why is this bad?
The host has no such server, so every tool the reference was meant to bring is missing.

## Example
```yaml
tools: ["githb/*"]
```
Use instead:
```yaml
tools: ["github/*"]
```

## Fix
The hint proposes the closest configured server name; otherwise add the server to `.mcp.json` or the
agent's `mcp-servers`.

## References
GitHub Docs, custom agents configuration: `mcp-servers`.
""",
)

HOST_SERVER_NOT_SNAPSHOTTED = Rule(
    code="AGT011",
    name="host-server-not-snapshotted",
    severity="info",
    message="host-provided server `{server}` ({host}) has no catalog in the lock; not checked: {refs}",
    hint="snapshot it (`quiver snapshot --import ... --server {server}`) to count its tokens",
    doc="""\
## What it does
Notes, once per agent and server, the references to a server the host provides itself (Copilot's
`github`, `playwright`, ...) when the lock file has no catalog for it.

## Why is this bad?
quiver cannot count the tokens those tools cost or check that the named tools exist.

## Example
```yaml
tools: ["github/*"]   # and no `github` entry in quiver.lock.json
```

## Fix
Import the server's tool list into the lock file with `quiver snapshot --import`.

## References
DESIGN §3, host built-in servers.
""",
)

UNVERIFIABLE_REFERENCES = Rule(
    code="AGT022",
    name="unverifiable-tool-references",
    severity="info",
    message="quiver cannot check {count} tool reference(s), only the host can resolve them: {items}",
    hint="to check them, define their servers in `.vscode/mcp.json` or `.mcp.json` and run `quiver snapshot`",
    doc="""\
## What it does
Notes, once per agent, every entry of `tools` that quiver cannot check and why: a server no MCP config
of the repository defines (users often configure servers in their own VS Code or Copilot settings),
an extension tool (`publisher.extension/tool`), a VS Code tool newer than quiver's list, or a bare name
that is no built-in and no tool of a config or lock quiver reads.

## Why is this bad?
It is not wrong, only unchecked: a typo in one of these names goes unnoticed, and their tokens are not
counted in the budget.

## Example
```yaml
tools: ["search", "azure-mcp/*", "ms-python.python/getPythonEnvironmentInfo"]
```

## Fix
Add the servers to `.vscode/mcp.json` or `.mcp.json` and run `quiver snapshot` (or `--import` a
tools/list response): quiver then checks each name and reports a typo as an error. Extension tools are
known only to VS Code.

## References
GitHub Docs, custom agents configuration: tool names; VS Code docs, chat tools.
""",
)

PRELOAD_TOOL_NOT_SERVED = Rule(
    code="MCP011",
    name="preload-tool-not-served",
    severity="warning",
    message="`preload_tools` of server `{server}` names `{tool}`, which the server does not serve",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a `preload_tools` entry that is not in the server's locked catalog.

## Why is this bad?
The preload has no effect: the tool the author wanted up front stays unknown or deferred.

## Example
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["search_pull_request"]}]}
```
Use instead:
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["search_pull_requests"]}]}
```

## Fix
Use a name from the lock file; re-run `quiver snapshot` if the server changed.

## References
DESIGN §2, `preload_tools`.
""",
)

SERVER_NOT_SNAPSHOTTED = Rule(
    code="MCP012",
    name="server-not-snapshotted",
    severity="warning",
    message="server `{server}` has no catalog in the lock file; the tools it gives {agents} are unknown",
    hint="run `quiver snapshot --server {server}`",
    doc="""\
## What it does
Flags, once per server definition, a configured server that agents refer to but that the lock file
does not list, naming those agents.

## Why is this bad?
Without the catalog quiver cannot resolve its tools, count their tokens or decide what to defer,
and the manifest understates the context an agent carries.

## Example
A server in `.mcp.json` added after the last `quiver snapshot`.

## Fix
Run `quiver snapshot` (or `--import` a tools/list response) and commit `quiver.lock.json`.

## References
DESIGN §2, lock file.
""",
)

ALLOW_LIST_TOOL_NOT_SERVED = Rule(
    code="MCP013",
    name="allow-list-tool-not-served",
    severity="warning",
    message="the `tools` allow-list of server `{server}` names `{tool}`, which the server does not serve",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a server allow-list entry that is not in the server's locked catalog.

## Why is this bad?
The agent was meant to have that tool and does not; often a rename upstream.

## Example
```json
{"mcpServers": {"github": {"url": "...", "tools": ["get_issue"]}}}
```
Use instead:
```json
{"mcpServers": {"github": {"url": "...", "tools": ["issue_read"]}}}
```

## Fix
Use a name from the lock file; `quiver diff` shows renames.

## References
Copilot CLI MCP configuration, `tools`.
""",
)

RULES = (
    UNKNOWN_TOOL_REFERENCE,
    AMBIGUOUS_TOOL_REFERENCE,
    UNKNOWN_SERVER_REFERENCE,
    HOST_SERVER_NOT_SNAPSHOTTED,
    UNVERIFIABLE_REFERENCES,
    PRELOAD_TOOL_NOT_SERVED,
    SERVER_NOT_SNAPSHOTTED,
    ALLOW_LIST_TOOL_NOT_SERVED,
)
