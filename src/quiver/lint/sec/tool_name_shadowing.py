"""SEC007 tool-name-shadowing: a bare tool name that several of an agent's servers serve, so one can pose as another."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import shown
from quiver.model import Finding


def _shadowing(ctx: LintContext) -> Iterator[Finding]:
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for resolved in ctx.resolved:
        bare = {ref.text for ref in resolved.agent.tools or ()}
        by_name: dict[str, list[str]] = {}
        for item in resolved.tools:
            by_name.setdefault(item.tool.name, []).append(item.server)
        for name, owners in by_name.items():
            if len(owners) > 1 and name not in bare:
                groups.setdefault((name, tuple(sorted(owners))), []).append(resolved.agent.id)
    lock = ctx.project.lock
    for key in sorted(groups):
        name, servers = key
        agents = sorted(set(groups[key]))
        shown_agents = ", ".join(f"`{a}`" for a in agents[:3])
        if len(agents) > 3:
            shown_agents += f" and {len(agents) - 3} more"
        last = servers[-1]
        tool = next((t for t in lock.servers[last].tools if t.name == name), None) if lock else None
        yield TOOL_NAME_SHADOWING.finding(
            location=tool.location if tool else None,
            server=last,
            tool=name,
            shown_name=shown(name),
            servers=", ".join(f"`{s}`" for s in servers[:-1]) + f" and `{servers[-1]}`",
            agents=("agent " if len(agents) == 1 else "agents ") + shown_agents,
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from _shadowing(ctx)


TOOL_NAME_SHADOWING = Rule(
    code="SEC007",
    name="tool-name-shadowing",
    severity="warning",
    check=check,
    message="tool name `{shown_name}` is served by {servers}, all carried by {agents}",
    hint="drop the tool from one server's allow-list (`tools` in the MCP config), or keep the servers apart",
    doc="""\
## What it does
Flags a tool name that two or more servers serve when one agent carries both tools. Not reported
for an agent that names the tool bare in `tools` (AGT009 reports that reference instead).

## Why is this bad?
Hosts prefix names with the server, but descriptions and prompts say "use `send_email`": the model
picks one of the two, and a server added later can copy a trusted tool's name to receive its calls.

## Example
```json
{"mcpServers": {"gmail": {...}, "mailer": {...}}}
```
both serving `send_email`, and an agent with `tools: ["gmail/*", "mailer/*"]`.
Use instead:
```json
{"mcpServers": {"gmail": {...}, "mailer": {..., "tools": ["list_templates"]}}}
```

## Fix
Cut one server down with its `tools` allow-list, or give the agent only one of them. Two trusted
servers with a shared name (`search`) are fine: suppress the finding with a reason.

## References
Invariant Labs, tool shadowing; MCP specification 2026-07-28, tool names are unique per server only.
""",
)


RULES: tuple[Rule, ...] = (TOOL_NAME_SHADOWING,)
