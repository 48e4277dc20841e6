"""BUD003 large-preloaded-tool: one preloaded tool whose schema alone is large."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.budget_tokens import Tokens, tokens_of
from quiver.lint.support.text import shown
from quiver.model import Finding
from quiver.resolve import ResolvedTool

LARGE_TOOL_TOKENS = 2_000


_LISTED = 5


def _large_tools(ctx: LintContext, tokens: Tokens) -> Iterator[Finding]:
    large: dict[tuple[str, str], tuple[ResolvedTool, int, list[str]]] = {}
    for resolved in ctx.resolved:
        for item in resolved.tools:
            if item.load != "preloaded" or (item.tool.tokens is not None and item.tool.tokens <= LARGE_TOOL_TOKENS):
                continue
            count = tokens.of(item)
            if count <= LARGE_TOOL_TOKENS:
                continue
            entry = large.setdefault((item.server, item.tool.name), (item, count, []))
            entry[2].append(resolved.agent.id)
    for key in sorted(large):
        item, count, agents = large[key]
        ids = sorted(set(agents))
        shown_agents = ", ".join(f"`{a}`" for a in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        yield LARGE_PRELOADED_TOOL.finding(
            location=item.tool.location,
            server=item.server,
            tool=item.tool.name,
            shown_name=shown(item.tool.name),
            tokens=count,
            agents=("agent " if len(ids) == 1 else "agents ") + shown_agents,
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from _large_tools(ctx, tokens_of(ctx))


LARGE_PRELOADED_TOOL = Rule(
    code="BUD003",
    name="large-preloaded-tool",
    severity="info",
    check=check,
    message="`{server}/{shown_name}` costs {tokens:,} tokens and is preloaded by {agents}",
    hint="defer it (let tool search find it), or ask upstream for a smaller schema",
    doc="""\
## What it does
Notes a single tool whose schema costs more than 2,000 tokens and that at least one agent preloads.

## Why is this bad?
One such tool can cost as much as a dozen ordinary ones, on every call, whether or not it is used.
Deferred, it costs nothing until tool search loads it.

## Example
Notion's `API-post-search` with its full filter grammar, preloaded by an agent that names it.
Use instead: let the agent reach it through `notion/*` with tool search active.

## Fix
Defer the tool, or split it upstream. The 2,000-token line is fixed; raise the severity to make it
a gate (`[tool.quiver.severity] BUD003 = "warning"`).

## References
DESIGN §4, tokens.
""",
)


RULES: tuple[Rule, ...] = (LARGE_PRELOADED_TOOL,)
