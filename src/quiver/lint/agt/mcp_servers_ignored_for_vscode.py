"""AGT021 mcp-servers-ignored-for-vscode: `mcp-servers` in an agent that targets VS Code."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding


def _ignored_servers(agent: Agent) -> Iterator[Finding]:
    if agent.frontmatter.get("target") == "vscode" and "mcp-servers" in agent.key_locations:
        yield MCP_SERVERS_IGNORED_FOR_VSCODE.finding(location=agent.key_locations["mcp-servers"], agent=agent.id)


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _ignored_servers(agent)


MCP_SERVERS_IGNORED_FOR_VSCODE = Rule(
    code="AGT021",
    name="mcp-servers-ignored-for-vscode",
    severity="warning",
    check=check,
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


RULES: tuple[Rule, ...] = (MCP_SERVERS_IGNORED_FOR_VSCODE,)
