"""MCP012 server-not-snapshotted: an agent reaches a server the lock file has no catalog for."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding
from quiver.resolve import ResolvedAgent


def unsnapshotted_findings(resolved: ResolvedAgent) -> Iterator[Finding]:
    """One finding per server the agent reaches whose catalog the lock file lacks."""
    for server in resolved.unsnapshotted:
        yield SERVER_NOT_SNAPSHOTTED.finding(location=server.location, agent=resolved.agent.id, server=server.name)


def check(ctx: LintContext) -> Iterator[Finding]:
    for resolved in ctx.resolved:
        yield from unsnapshotted_findings(resolved)


SERVER_NOT_SNAPSHOTTED = Rule(
    code="MCP012",
    name="server-not-snapshotted",
    severity="warning",
    check=check,
    message="server `{server}` has no catalog in the lock file; its tools are unknown",
    hint="run `quiver snapshot --server {server}`",
    doc="""\
## What it does
Flags a configured server that an agent can see but that the lock file does not list.

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
