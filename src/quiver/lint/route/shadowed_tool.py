"""Routing rule about tools that search cannot reach: outranked on what they say they do (ROUTE006).

Each tool is queried once, in the scope where search would look for it: among the tools of the first agent
(by id) that defers it, in an index built as the gateway builds that agent's (name, description,
parameters, the server's config description); a tool no agent defers, among the tools of its own server.
A query costs 0.4 to 1.5 ms (query analysis, then scoring in proportion to the scope), so scopes are capped
at `MAX_SCOPE` tools and a run at `MAX_QUERIES` queries: agents' deferred tools first (by agent id), then
servers by name; tools past the cap are not checked. Scopes of `TOP` tools or fewer cannot shadow.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from quiver._search._similar import paraphrases
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.cache import cached_check
from quiver.lint.support.text import shown
from quiver.model import Finding, LockedTool

if TYPE_CHECKING:  # the search stack is imported when a lock has tools to query
    from quiver.search import SearchConfig, SearchDoc, SearchIndex

TOP = 3  # a tool must be among this many results for one of its paraphrases (name words, first clause)
DEPTH = 10  # results read to tell its rank
MAX_SCOPE = 300  # larger scopes are not checked
MAX_QUERIES = 1_000  # tools checked per run (0.4 to 1.5 ms each): the rest are skipped, agents' tools first
# A sibling outranks a tool on the tool's own words only when the two share much vocabulary: tools whose
# nearest sibling (the index's blocking similarity, 0.1 ms) is below this are not worth a query (1 ms).
MIN_SIBLING_SIMILARITY = 0.3


@functools.cache
def _config() -> SearchConfig:
    """The tool's own words are all in the index, so typo correction never changes a result: it is off."""
    from quiver.search import SearchConfig

    return SearchConfig(query=replace(SearchConfig().query, typos=False))


def shadowed(docs: Sequence[SearchDoc], check: Sequence[int]) -> Iterator[tuple[int, int | None, int]]:
    """(doc, its rank or None below DEPTH, the doc ranked first) for each doc of `check` outside the top TOP."""
    if len(docs) <= TOP:
        return
    from quiver.search import SearchIndex

    index = SearchIndex.build(docs, config=_config())
    position = {(d.server, d.tool): i for i, d in enumerate(docs)}
    for i in check:
        doc = docs[i]
        if not doc.description.strip():
            continue  # nothing to search by: TOOL003
        near = index.similar(i, 1)
        if not near or near[0][1] < MIN_SIBLING_SIMILARITY:
            continue
        missed = _missed(index, position, i, paraphrases(doc.tool, doc.description))
        if missed is not None:
            yield i, *missed


def _missed(
    index: SearchIndex, position: Mapping[tuple[str, str], int], i: int, queries: Sequence[str]
) -> tuple[int | None, int] | None:
    """(best rank or None, the doc first for the first query) when no query puts doc `i` in the top TOP."""
    best: int | None = None
    winner: int | None = None
    for query in queries:
        if index.rank_of(query, i, TOP) is not None:
            return None
        hits = [position[(h.server, h.tool)] for h in index.search(query, DEPTH)]
        if i in hits[:TOP]:
            return None
        if hits and winner is None:
            winner = hits[0]
        if i in hits and (best is None or hits.index(i) + 1 < best):
            best = hits.index(i) + 1
    return None if winner is None else (best, winner)


def _check(ctx: LintContext) -> Iterator[Finding]:
    lock = ctx.project.lock
    if lock is None:
        return
    cache: dict[tuple[str, str, str], SearchDoc] = {}
    checked: set[tuple[str, str]] = set()
    budget = MAX_QUERIES
    for agent in sorted(ctx.resolved, key=lambda r: r.agent.id):
        mine = [
            i
            for i, t in enumerate(agent.tools)
            if t.gateway_load == "deferred" and (t.server, t.tool.name) not in checked
        ]
        if not mine or len(agent.tools) > MAX_SCOPE or budget <= 0:
            continue
        mine = mine[:budget]
        budget -= len(mine)
        own: Mapping[str, str] = {s.name: s.description or "" for s in agent.servers}
        docs = [_doc(t.tool, own.get(t.server, ""), cache) for t in agent.tools]
        checked.update((agent.tools[i].server, agent.tools[i].tool.name) for i in mine)
        scope = f"the {len(docs)} tools agent `{agent.agent.id}` sees"
        for i, rank, winner in shadowed(docs, mine):
            yield _finding(agent.tools[i].tool, rank, docs[winner], scope, agent.agent.id)
    descriptions = {name: server.description or "" for name, server in ctx.project.servers.items()}
    for name in sorted(lock.servers):
        tools = lock.servers[name].tools
        mine = [i for i, t in enumerate(tools) if (name, t.name) not in checked][: max(budget, 0)]
        if not mine or len(tools) > MAX_SCOPE or len({t.name for t in tools}) != len(tools):
            continue
        budget -= len(mine)
        docs = [_doc(t, descriptions.get(name, ""), cache) for t in tools]
        for i, rank, winner in shadowed(docs, mine):
            yield _finding(tools[i], rank, docs[winner], f"the tools of server `{name}`", None)


def _doc(tool: LockedTool, server_description: str, cache: dict[tuple[str, str, str], SearchDoc]) -> SearchDoc:
    key = (tool.server, tool.name, server_description)
    doc = cache.get(key)
    if doc is None:
        from quiver.search import docs_from_tools

        doc = docs_from_tools(tool.server, [tool.definition], server_description)[0]
        cache[key] = doc
    return doc


def _finding(tool: LockedTool, rank: int | None, winner: SearchDoc, scope: str, agent: str | None) -> Finding:
    return SHADOWED_TOOL.finding(
        location=tool.location,
        server=tool.server,
        tool=tool.name,
        shown_name=shown(tool.name),
        agent=agent,
        top=TOP,
        scope=scope,
        rank=f"rank {rank}" if rank is not None else f"not in the first {DEPTH}",
        winner=f"{winner.server}/{shown(winner.tool)}",
    )


check = cached_check("route-shadowed", _check)


SHADOWED_TOOL = Rule(
    code="ROUTE006",
    name="shadowed-tool",
    severity="warning",
    check=check,
    message="tool `{server}/{shown_name}` is not in the top {top} when searched by the first clause of its description "
    "among {scope} "
    "({rank}); `{winner}` comes first",
    hint="say what only this tool does, in the words a request for it would use; or merge it into `{winner}`",
    doc="""\
## What it does
Flags a tool that tool search, queried with a paraphrase of its purpose (the first clause of its
description, what a request for it would say), does not return in its top 3 because siblings outrank
it (its full description would only ever find itself). A tool an agent defers is searched among the tools that
agent sees (the first such agent by id), as tool search ranks them for it; any other tool among the
tools of its own server. Scopes of more than 300 tools are not checked, nor tools past the first 1,000
of a run (deferred tools first): each check is a search query.

## Why is this bad?
A deferred tool is reached only through search. If even its own name and first clause rank three other tools
first, requests phrased any other way will not find it: the agent calls the sibling instead, or
concludes it cannot do the task.

## Example
A `lookup` tool described as "Search GitHub issues, pull requests and code", next to GitHub's own
`search_issues`, `search_pull_requests` and `search_code`, whose names say each of those words.
Use instead: "Search the team's triage board (not GitHub) for open incidents", or drop `lookup`.

## Fix
Rewrite the description around what only this tool does, in the words its callers use, or merge it
into the winner the message names. When the sibling is the better tool, remove this one from the
agent's `tools`.

## References
Anthropic, "Tool search tool" and "Writing effective tools for agents".
""",
)


RULES: tuple[Rule, ...] = (SHADOWED_TOOL,)
