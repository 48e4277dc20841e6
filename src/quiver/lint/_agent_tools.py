"""Agent rules about `tools`, `deferred-tool-loading` and `mcp-servers` (AGT013, AGT015-017, AGT021)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from quiver.builtins import builtin_alias, is_toolset, is_vscode_tool
from quiver.lint._locate import Sources
from quiver.lint.engine import LintContext
from quiver.model import Agent, Edit, Finding, ToolRef
from quiver.project import HOST_SERVERS
from quiver.resolve import ResolvedAgent, model_supports_tool_search
from quiver.rules import Rule

_TOOLS_KEY = re.compile(r"""(?:"tools"|'tools'|tools)[ \t]*:[ \t]*""")

COMMA_SEPARATED_TOOLS = Rule(
    code="AGT013",
    name="comma-separated-tools",
    severity="info",
    message="`tools` is a comma-separated string; a YAML list is the documented form",
    hint="write `tools: {replacement}`",
    fixable=True,
    doc="""\
## What it does
Notes a Copilot agent file (`.github/agents`, chat modes) whose `tools` is one comma-separated
string. Claude Code files in `.claude/agents` use that form by convention and are not flagged.

## Why is this bad?
Hosts accept the string, but a tool name containing a comma or quote cannot be written in it, diffs
of a long line are hard to review, and editors cannot validate the entries.

## Example
```yaml
tools: read, edit, github/*
```
Use instead:
```yaml
tools: ["read", "edit", "github/*"]
```

## Fix
`--fix` rewrites the value as a YAML flow list, keeping every entry's order and spelling and quoting
each with double quotes. No fix is offered for a value that spans several lines.

## References
GitHub Docs, custom agents configuration: `tools` (list of strings or comma-separated string).
""",
)

DUPLICATE_TOOL_REFERENCE = Rule(
    code="AGT015",
    name="duplicate-tool-reference",
    severity="warning",
    message="`{ref}` repeats the entry `{first}` at {line}:{column}",
    hint="remove this entry",
    doc="""\
## What it does
Flags an entry of `tools` that repeats an earlier one, including a compatible alias of the same
built-in (`Bash` after `execute`, `Read` after `read`).

## Why is this bad?
The repeat adds nothing, and usually hides a mistake: a second entry that was meant to name a
different tool.

## Example
```yaml
tools: ["read", "github/*", "Read"]
```
Use instead:
```yaml
tools: ["read", "github/*"]
```

## Fix
Delete the later entry. A wildcard next to a named tool of the same server (`github/*` and
`github/get_me`) is not a duplicate: naming a tool preloads it.

## References
GitHub Docs, custom agents configuration: tool aliases.
""",
)

INEFFECTIVE_DEFERRED_TOOL_LOADING = Rule(
    code="AGT016",
    name="ineffective-deferred-tool-loading",
    severity="warning",
    message="`deferred-tool-loading` has no effect: {reason}",
    hint="remove it, or {advice}",
    doc="""\
## What it does
Flags `deferred-tool-loading: true` on an agent where it changes nothing. That is when the agent names no MCP tool
explicitly (only wildcards such as `*` or `server/*`, whose tools are deferred anyway), or tool search
is never active for it (its model does not support tool search, `tool_search = "never"`, or it
carries fewer MCP tools than the threshold).

## Why is this bad?
The flag promises a context saving that does not happen; readers assume named tools are deferred
when every tool is in fact loaded up front.

## Example
```yaml
model: gpt-4.1
deferred-tool-loading: true
tools: ["github/*"]
```
Use instead:
```yaml
model: claude-sonnet-4.5
deferred-tool-loading: true
tools: ["github/*", "github/get_issue"]
```

## Fix
Remove the flag, or make it matter: name the tools you want deferred and use a model that supports
tool search. When some server has no snapshot the tool count is unknown, and the threshold case is
not reported.

## Options
`tool_search`, `threshold` and `tool_search_models` decide when tool search is active.

## References
GitHub Docs, Copilot CLI tool search: `deferred-tool-loading`.
""",
)

UNREACHABLE_MCP_SERVERS = Rule(
    code="AGT017",
    name="unreachable-mcp-servers",
    severity="warning",
    message="`tools` is empty, so the tools of its `mcp-servers` ({servers}) are unreachable",
    hint="list the tools the agent needs (e.g. `{example}/*`), or remove `mcp-servers`",
    doc="""\
## What it does
Flags an agent with `tools: []` (no tools at all) that also defines `mcp-servers`.

## Why is this bad?
`[]` disables every tool, including those of the agent's own servers: the servers are started (and
their secrets handed over) for nothing.

## Example
```yaml
tools: []
mcp-servers:
  docs: {type: http, url: "https://example.com/mcp", tools: ["*"]}
```
Use instead:
```yaml
tools: ["docs/*"]
```

## Fix
Name the server tools the agent should use, or drop `mcp-servers`.

## References
GitHub Docs, custom agents configuration: `tools` (`[]` = none).
""",
)

MCP_SERVERS_IGNORED_FOR_VSCODE = Rule(
    code="AGT021",
    name="mcp-servers-ignored-for-vscode",
    severity="warning",
    message="`mcp-servers` is ignored when `target` is `vscode`",
    hint="configure the servers in `.vscode/mcp.json`, or set `target: github-copilot`",
    doc="""\
## What it does
Flags `mcp-servers` in an agent that targets VS Code only.

## Why is this bad?
VS Code does not read an agent's `mcp-servers` (only the Copilot cloud agent and CLI do), so the
agent's server tools never appear.

## Example
```yaml
target: vscode
mcp-servers:
  docs: {type: http, url: "https://example.com/mcp", tools: ["*"]}
```
Use instead:
```yaml
target: github-copilot
mcp-servers:
  docs: {type: http, url: "https://example.com/mcp", tools: ["*"]}
```

## Fix
Move the server to `.vscode/mcp.json`, or target `github-copilot` (or remove `target`).

## References
VS Code docs, custom agents: `mcp-servers` (only for target github-copilot).
""",
)

RULES: tuple[Rule, ...] = (
    COMMA_SEPARATED_TOOLS,
    DUPLICATE_TOOL_REFERENCE,
    INEFFECTIVE_DEFERRED_TOOL_LOADING,
    UNREACHABLE_MCP_SERVERS,
    MCP_SERVERS_IGNORED_FOR_VSCODE,
)


def _scalar_span(line: str, start: int) -> tuple[int, str] | None:
    """End (exclusive) and decoded value of the one-line YAML scalar at `start`; None if it is not one."""
    quote = line[start : start + 1]
    if quote == '"':
        j = start + 1
        while j < len(line) and line[j] != '"':
            j += 2 if line[j] == "\\" else 1
        if j >= len(line):
            return None
        try:
            decoded = json.loads(line[start : j + 1])
        except ValueError:
            return None
        end = j + 1
    elif quote == "'":
        j = start + 1
        while j < len(line):
            if line[j] == "'" and line[j + 1 : j + 2] == "'":
                j += 2
            elif line[j] == "'":
                break
            else:
                j += 1
        if j >= len(line):
            return None
        decoded, end = line[start + 1 : j].replace("''", "'"), j + 1
    else:
        comment = line.find(" #", start)
        end = len(line[: comment if comment >= 0 else len(line)].rstrip())
        decoded = line[start:end]
    rest = line[end:].strip()
    if rest and not rest.startswith("#"):
        return None
    return end, decoded if isinstance(decoded, str) else ""


def _comma_tools(agent: Agent, src: Sources) -> Iterator[Finding]:
    value = agent.frontmatter.get("tools")
    if agent.kind == "claude" or not isinstance(value, str) or agent.tools is None:
        return
    items = [part.strip() for part in value.split(",") if part.strip()]
    replacement = "[" + ", ".join(json.dumps(item, ensure_ascii=False) for item in items) + "]"
    where = agent.key_locations["tools"]
    fixes: tuple[Edit, ...] = ()
    line = src.line(agent.path, where.line)
    key = _TOOLS_KEY.match(line, where.column - 1)
    span = _scalar_span(line, key.end()) if key else None
    if key and span and span[1] == value:
        fixes = (Edit(agent.path, where.line, key.end() + 1, where.line, span[0] + 1, replacement),)
    shown = replacement if len(replacement) <= 80 else replacement[:76] + " ...]"
    yield COMMA_SEPARATED_TOOLS.finding(location=where, agent=agent.id, replacement=shown, fixes=fixes)


def _duplicates(agent: Agent) -> Iterator[Finding]:
    seen: dict[str, ToolRef] = {}
    for ref in agent.tools or ():
        key = builtin_alias(ref.text) or ref.text
        first = seen.setdefault(key, ref)
        if first is not ref:
            yield DUPLICATE_TOOL_REFERENCE.finding(
                location=ref.location,
                agent=agent.id,
                ref=ref.text,
                first=first.text,
                line=first.location.line,
                column=first.location.column,
            )


def _names_mcp_tool(ref: ToolRef, servers: set[str]) -> bool:
    """True when the entry names one MCP tool (what `deferred-tool-loading` acts on), not a wildcard."""
    text = ref.text
    if text == "*":
        return False
    if "/" in text:
        prefix, rest = text.split("/", 1)
        if rest == "*":
            return False
        return prefix in servers or prefix in HOST_SERVERS or not (is_toolset(prefix) or "." in prefix)
    return not (builtin_alias(text) or is_vscode_tool(text) or text in servers or text in HOST_SERVERS)


def _deferred_loading(ctx: LintContext, agent: Agent, resolved: ResolvedAgent | None) -> Iterator[Finding]:
    if agent.frontmatter.get("deferred-tool-loading") is not True or resolved is None:
        return
    servers = {*ctx.project.servers, *(s.name for s in agent.mcp_servers)}
    where = agent.key_locations["deferred-tool-loading"]
    if not any(_names_mcp_tool(ref, servers) for ref in agent.tools or ()):
        yield INEFFECTIVE_DEFERRED_TOOL_LOADING.finding(
            location=where,
            agent=agent.id,
            reason="the agent names no MCP tool explicitly (tools reached through a wildcard are deferred anyway)",
            advice="name the MCP tools it should load on demand",
        )
        return
    search = resolved.tool_search
    if search.active:
        return
    lock = ctx.project.lock
    unknown = bool(resolved.host_servers) or any(lock is None or s.name not in lock.servers for s in resolved.servers)
    model = agent.models[0] if agent.models else None
    definitive = (
        ctx.project.config.tool_search == "never"
        or (model is not None and not model_supports_tool_search(model, ctx.project.config.tool_search_models))
        or not unknown
    )
    if definitive:
        yield INEFFECTIVE_DEFERRED_TOOL_LOADING.finding(
            location=where,
            agent=agent.id,
            reason=f"tool search is never active for this agent ({search.reason})",
            advice="use a model that supports tool search",
        )


def _unreachable_servers(agent: Agent) -> Iterator[Finding]:
    if agent.tools == () and agent.mcp_servers and "tools" in agent.key_locations:
        names = ", ".join(f"`{s.name}`" for s in agent.mcp_servers)
        yield UNREACHABLE_MCP_SERVERS.finding(
            location=agent.key_locations["tools"], agent=agent.id, servers=names, example=agent.mcp_servers[0].name
        )


def _ignored_servers(agent: Agent) -> Iterator[Finding]:
    if agent.frontmatter.get("target") == "vscode" and "mcp-servers" in agent.key_locations:
        yield MCP_SERVERS_IGNORED_FOR_VSCODE.finding(location=agent.key_locations["mcp-servers"], agent=agent.id)


def check_agent(ctx: LintContext, agent: Agent, resolved: ResolvedAgent | None, src: Sources) -> Iterator[Finding]:
    yield from _comma_tools(agent, src)
    yield from _duplicates(agent)
    yield from _deferred_loading(ctx, agent, resolved)
    yield from _unreachable_servers(agent)
    yield from _ignored_servers(agent)
