"""MCP012 server-not-snapshotted: a configured server that agents refer to but the lock file does not list.

Reported once per server definition, naming the agents (resolution records each agent's
`unknown_catalogs`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding, Location
from quiver.resolve import ResolvedAgent


def unsnapshotted_findings(resolved: Sequence[ResolvedAgent]) -> Iterator[Finding]:
    """One finding per unsnapshotted server definition, listing the agents that refer to it."""
    users: dict[tuple[str, Location], list[str]] = {}
    named: dict[str, list[str]] = {}
    for item in resolved:
        for name in item.unknown_catalogs:
            server = next(s for s in item.servers if s.name == name)
            users.setdefault((name, server.location), []).append(item.agent.id)
        for ref in item.unknown_named:
            if ref not in named.setdefault(ref.split("/", 1)[0], []):
                named[ref.split("/", 1)[0]].append(ref)
    for (name, where), agents in sorted(users.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        shown = ", ".join(f"`{a}`" for a in agents[:5]) + (f" and {len(agents) - 5} more" if len(agents) > 5 else "")
        label = f"agent {shown}" if len(agents) == 1 else f"{len(agents)} agents: {shown}"
        refs = named.get(name, [])
        label += f", including the named {', '.join(f'`{r}`' for r in refs[:5])}" if refs else ""
        yield SERVER_NOT_SNAPSHOTTED.finding(location=where, server=name, agents=label)


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from unsnapshotted_findings(ctx.resolved)


SERVER_NOT_SNAPSHOTTED = Rule(
    code="MCP012",
    name="server-not-snapshotted",
    severity="warning",
    check=check,
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


RULES: tuple[Rule, ...] = (SERVER_NOT_SNAPSHOTTED,)
