"""BUD001 over-budget: an agent whose up-front tool definitions exceed `budget_tokens`."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.compile import budget_of
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.budget_tokens import Tokens, tokens_of
from quiver.lint.support.text import shown
from quiver.model import Finding, Location
from quiver.resolve import ResolvedAgent

_TOP = 3


def _over_budget(resolved: ResolvedAgent, budget: int, tokens: Tokens) -> Iterator[Finding]:
    preloaded = [(tokens.of(t), t) for t in resolved.tools if t.load == "preloaded"]
    total = sum(n for n, _ in preloaded)
    deferring = any(t.load == "deferred" for t in resolved.tools)
    if not deferring and not resolved.skills:
        initial = total
    elif total + _extra_bytes(resolved) <= budget:
        return  # within budget even if every byte of the search tool, the listing and the skills were a token
    else:
        initial = budget_of(resolved, tokens.cache).initial_tokens
    if initial <= budget:
        return
    agent = resolved.agent
    top = sorted(preloaded, key=lambda p: (-p[0], p[1].server, p[1].tool.name))[:_TOP]
    listed = ", ".join(f"`{t.server}/{shown(t.tool.name)}` ({n:,})" for n, t in top) or "none"
    location = agent.key_locations.get("tools") or Location(agent.path, 1, 1)
    yield OVER_BUDGET.finding(location=location, agent=agent.id, initial=initial, budget=budget, top=listed)


def _extra_bytes(resolved: ResolvedAgent) -> int:
    """UTF-8 bytes of what `budget_of` adds to the preloaded tools: the host's search tool (bounded by its
    token count), its list of deferred names, and every skill's name, description and body.

    An o200k token covers at least one byte, so this bounds their token count without the tokenizer.
    """
    split = resolved.split
    search = split.search_tool_tokens * 8 if split is not None else 0  # no token is longer than 8 bytes here
    key = resolved.host.names_key
    names = sum(len(t.names.get(key, t.tool.name)) + 1 for t in resolved.tools if t.load == "deferred")
    skills = sum(len((s.description or "").encode()) + len(s.id) + len(s.body.encode()) + 16 for s in resolved.skills)
    return search + names + skills + 256


def check(ctx: LintContext) -> Iterator[Finding]:
    budget = ctx.project.config.budget_tokens
    if budget is None:
        return
    tokens = tokens_of(ctx)
    for resolved in ctx.resolved:
        yield from _over_budget(resolved, budget, tokens)


OVER_BUDGET = Rule(
    code="BUD001",
    name="over-budget",
    severity="error",
    check=check,
    message="agent `{agent}` carries {initial:,} tokens of tool schemas before its first call, "
    "over `budget_tokens` = {budget:,}; largest preloaded: {top}",
    hint='defer more tools (drop `deferTools: "never"`/`preload`, trim `preload_tools`), or narrow `tools`',
    doc="""\
## What it does
Flags an agent whose initial context cost, the preloaded tool schemas plus (when anything is
deferred) quiver's meta-tools and the server index, exceeds `budget_tokens`. The message names the
three largest preloaded tools.

## Why is this bad?
Every call of the agent pays these tokens: money and latency, and a crowded context picks tools
worse. A budget in the config makes that cost a reviewed decision instead of a drift.

## Example
```toml
[tool.quiver]
budget_tokens = 20000
```
with an agent carrying `github/*` (19,000 tokens) on a model without tool search.
Use instead: `tools: ["github/search_issues", "github/issue_read"]`, or a model that supports tool
search so the rest is deferred.

## Fix
The hint lists the levers: the preload settings of the servers behind the largest tools, or the
agent's `tools`. `quiver explain AGENT` shows why each tool is loaded.

## Options
`budget_tokens` (unset: no budget, the rule is off); `threshold`, `tool_search`.

## References
DESIGN §4, tokens; Anthropic, tool search and `defer_loading`.
""",
)


RULES: tuple[Rule, ...] = (OVER_BUDGET,)
