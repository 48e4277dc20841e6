"""AGT017 unreachable-mcp-servers: `mcp-servers` under an empty `tools` list."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding


def _unreachable_servers(agent: Agent) -> Iterator[Finding]:
    if agent.tools == () and agent.mcp_servers and "tools" in agent.key_locations:
        names = ", ".join(f"`{s.name}`" for s in agent.mcp_servers)
        yield UNREACHABLE_MCP_SERVERS.finding(
            location=agent.key_locations["tools"], agent=agent.id, servers=names, example=agent.mcp_servers[0].name
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _unreachable_servers(agent)


UNREACHABLE_MCP_SERVERS = Rule(
    code="AGT017",
    name="unreachable-mcp-servers",
    severity="warning",
    check=check,
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


RULES: tuple[Rule, ...] = (UNREACHABLE_MCP_SERVERS,)
