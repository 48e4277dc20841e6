"""AGT022 unverifiable-tool-references: the `tools` entries only the host can resolve, noted once per agent.

Resolution (quiver.resolve) returns them as `Unverified` data, each with why quiver cannot check it.
"""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding
from quiver.resolve import ResolvedAgent


def unverified_findings(resolved: ResolvedAgent) -> Iterator[Finding]:
    """One AGT022 per agent naming every reference quiver cannot check, grouped by why."""
    if not resolved.unverified:
        return
    by_reason: dict[str, list[str]] = {}
    for item in resolved.unverified:
        by_reason.setdefault(item.why, []).append(f"`{item.ref.text}`")
    items = "; ".join(f"{', '.join(refs)} ({why})" for why, refs in by_reason.items())
    yield UNVERIFIABLE_REFERENCES.finding(
        location=resolved.unverified[0].ref.location,
        agent=resolved.agent.id,
        count=len(resolved.unverified),
        items=items,
    )


def check(ctx: LintContext) -> Iterator[Finding]:
    for resolved in ctx.resolved:
        yield from unverified_findings(resolved)


UNVERIFIABLE_REFERENCES = Rule(
    code="AGT022",
    name="unverifiable-tool-references",
    severity="info",
    check=check,
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


RULES: tuple[Rule, ...] = (UNVERIFIABLE_REFERENCES,)
