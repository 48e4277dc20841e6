"""Lint rules about the context budget: what each agent carries before its first tool call.

Token counts come from the lock file (written by `quiver snapshot`), so these checks load no tokenizer
unless an agent defers tools and its budget is close enough to need the meta-tool and server-index
counts; those come from compile's token cache when it is there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from quiver.compile import budget_of, server_index, tool_tokens
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import shown
from quiver.metatools import META_TOOLS
from quiver.model import Finding, Location
from quiver.resolve import ResolvedAgent, ResolvedTool
from quiver.sources.token_cache import TOKEN_CACHE_FILE, TokenCache
from quiver.tokens import compact, tool_payload

LARGE_TOOL_TOKENS = 2_000
_TOP = 3
_LISTED = 5
_PRELOAD_CODES = ("server-never-defers", "server-preloaded", "preload-tools")


class _Tokens:
    """Token counts: the lock's per tool; a cache (compile's, if present) for meta-tools and the index."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: TokenCache | None = None

    @property
    def cache(self) -> TokenCache:
        if self._cache is None:
            self._cache = TokenCache(self.root / TOKEN_CACHE_FILE)
        return self._cache

    def of(self, item: ResolvedTool) -> int:
        return item.tool.tokens if item.tool.tokens is not None else tool_tokens(item, self.cache)


def check(ctx: LintContext) -> Iterator[Finding]:
    tokens = _Tokens(ctx.project.root)
    budget = ctx.project.config.budget_tokens
    if budget is not None:
        for resolved in ctx.resolved:
            yield from _over_budget(resolved, budget, tokens)
    yield from _unused_preloads(ctx)
    yield from _large_tools(ctx, tokens)


def _over_budget(resolved: ResolvedAgent, budget: int, tokens: _Tokens) -> Iterator[Finding]:
    preloaded = [(tokens.of(t), t) for t in resolved.tools if t.load == "preloaded"]
    total = sum(n for n, _ in preloaded)
    deferring = any(t.load == "deferred" for t in resolved.tools)
    if not deferring:
        initial = total
    elif total + _extra_bytes(resolved) <= budget:
        return  # within budget even if every byte of the meta-tools and the index were a token
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
    """UTF-8 bytes of what `budget_of` adds to the preloaded tools while deferring: meta-tools and server index.

    An o200k token covers at least one byte, so this bounds their token count without the tokenizer.
    """
    meta = compact([tool_payload(t) for t in META_TOOLS])
    return len(meta.encode("utf-8")) + len(compact(server_index(resolved)).encode("utf-8"))


def _unused_preloads(ctx: LintContext) -> Iterator[Finding]:
    named = {(t.server, t.tool.name) for r in ctx.resolved for t in r.tools if t.named}
    per_tool: dict[tuple[str, str], ResolvedTool] = {}
    per_server: dict[str, tuple[ResolvedTool, dict[str, None]]] = {}
    for resolved in ctx.resolved:
        if not resolved.tool_search.active:
            continue
        for item in resolved.tools:
            code = item.decision.code
            if code not in _PRELOAD_CODES or (item.server, item.tool.name) in named:
                continue
            if code == "preload-tools":
                per_tool.setdefault((item.server, item.tool.name), item)
            else:
                entry = per_server.setdefault(item.server, (item, {}))
                entry[1][item.tool.name] = None
    for server, name in sorted(per_tool):
        item = per_tool[(server, name)]
        yield UNUSED_PRELOAD.finding(
            location=item.decision.source,
            server=server,
            tool=name,
            subject=f"`{server}/{shown(name)}` is",
            setting="`preload_tools`",
            them="it",
            advice=f"remove `{shown(name)}` from `preload_tools` of server `{server}`, "
            "or name it in an agent's `tools`",
        )
    for server in sorted(per_server):
        item, tool_names = per_server[server]
        unnamed = sorted(tool_names)
        shown_tools = ", ".join(f"`{shown(n, 40)}`" for n in unnamed[:_LISTED])
        if len(unnamed) > _LISTED:
            shown_tools += f" and {len(unnamed) - _LISTED} more"
        setting = '`deferTools: "never"`' if item.decision.code == "server-never-defers" else "`preload: true`"
        yield UNUSED_PRELOAD.finding(
            location=item.decision.source,
            server=server,
            subject=f"{len(unnamed)} tool(s) of server `{server}` are",
            setting=setting,
            them=f"them: {shown_tools}",
            advice=f"drop {setting} from server `{server}` and let tool search load them, "
            "or name the tools an agent needs in its `tools`",
        )


def _large_tools(ctx: LintContext, tokens: _Tokens) -> Iterator[Finding]:
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


UNUSED_PRELOAD = Rule(
    code="BUD002",
    name="unused-preload",
    severity="warning",
    check=check,
    message="{subject} preloaded by {setting} while tool search is active, but no agent names {them}",
    hint="{advice}",
    doc="""\
## What it does
Flags tools that a server setting preloads (`deferTools: "never"`, `preload: true` or
`preload_tools`) for an agent with tool search active, when no agent in the project names them
explicitly in `tools`. One finding per `preload_tools` entry, one per server for server-wide settings.

## Why is this bad?
Preloading is for the few tools an agent uses on most tasks; their schemas ride along in every
call. A tool nobody names is reached through a wildcard: tool search finds it when needed, for
free until then.

## Example
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["get_me"]}]}
```
with no agent listing `github/get_me`.
Use instead: drop `get_me` from `preload_tools`, or name it in the agents that rely on it.

## Fix
Remove the entry from `preload_tools` (or drop `deferTools: "never"` / `preload: true`). It is
wrong when usage data (`quiver advise`) shows the tool is used on most runs: then name it in those
agents' `tools`, which documents the choice.

## References
DESIGN §3, preload rules 2 and 3.
""",
)


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


RULES: tuple[Rule, ...] = (OVER_BUDGET, UNUSED_PRELOAD, LARGE_PRELOADED_TOOL)
