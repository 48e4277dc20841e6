"""AGT016 ineffective-deferred-tool-loading: `deferred-tool-loading` that defers nothing."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.builtins import builtin_alias, is_toolset, is_vscode_tool
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding, ToolRef
from quiver.project import HOST_SERVERS
from quiver.resolve import ResolvedAgent, model_supports_tool_search


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
    search = resolved.gateway_search or resolved.tool_search  # `deferred-tool-loading` is a gateway rule
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


def check(ctx: LintContext) -> Iterator[Finding]:
    resolved = {r.agent.path: r for r in ctx.resolved}
    for agent in ctx.project.agents:
        yield from _deferred_loading(ctx, agent, resolved.get(agent.path))


INEFFECTIVE_DEFERRED_TOOL_LOADING = Rule(
    code="AGT016",
    name="ineffective-deferred-tool-loading",
    severity="warning",
    check=check,
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


RULES: tuple[Rule, ...] = (INEFFECTIVE_DEFERRED_TOOL_LOADING,)
