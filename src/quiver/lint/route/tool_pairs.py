"""Routing rules about pairs of tools: near-duplicates in one server (ROUTE001), across the servers one agent sees
(ROUTE002), and tools whose names mean the same (ROUTE007).

Candidate pairs come from the search index's blocking (`SimilarityIndex.similar`), never from all pairs: each tool
is compared with the few tools that share its rarer words, so the pass grows linearly with the catalog
(`bench/distinct.py`: 10,000 tools in about 1.5 s). The similarity is the index's: the IDF-weighted cosine of
name and description terms, or, when larger, the calibrated embedding cosine of the tools' purposes (name words
and first sentence, `_search/_similar.py`), in [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from quiver._search._doc import SearchDoc
from quiver._search._similar import SimilarityIndex
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.cache import cached_check
from quiver.lint.support.route_words import contrasting, difference, meaning, negated, said, shared_prefix, stem
from quiver.lint.support.text import shown
from quiver.lint.support.words import words
from quiver.model import Finding, Lock, LockedTool
from quiver.resolve import ResolvedAgent

Purposes = Sequence[Sequence[float] | None] | None
NEAR_DUPLICATE = 0.80  # similarity from which two tools read alike
OVERLAP_MIN = 0.50  # similarity from which two tools with same-meaning names overlap
# two tools of different servers one agent sees, each the other's most similar tool of another server, read alike
# from here: the local and the hosted way to do one thing (`git/git_log`, `github/list_commits`: 0.57)
COUNTERPARTS_MIN = 0.55
CANDIDATES = 6  # candidates asked of the index per tool
_SHARED_PREFIX_MIN = 3  # a word every tool of a server has is a prefix (`browser_`) once the server has this many


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every locked tool in lock order, with which agents see it (a bit per agent, agents sorted by id)."""

    tools: tuple[LockedTool, ...]
    seen_by: tuple[int, ...]
    agents: tuple[str, ...]

    @classmethod
    def of(cls, lock: Lock, resolved: Sequence[ResolvedAgent]) -> Catalog:
        tools = tuple(t for name in sorted(lock.servers) for t in lock.servers[name].tools)
        position = {(t.server, t.name): i for i, t in enumerate(tools)}
        masks = [0] * len(tools)
        ordered = sorted(resolved, key=lambda r: r.agent.id)
        for bit, agent in enumerate(ordered):
            for item in agent.tools:
                i = position.get((item.server, item.tool.name))
                if i is not None:
                    masks[i] |= 1 << bit
        return cls(tools, tuple(masks), tuple(r.agent.id for r in ordered))

    def agents_of(self, mask: int) -> list[str]:
        return [agent for bit, agent in enumerate(self.agents) if mask >> bit & 1]


def candidate_pairs(
    index: SimilarityIndex, floor: float, per_doc: int = CANDIDATES, near: dict[int, int] | None = None
) -> dict[tuple[int, int], float]:
    """(i, j) with i < j -> similarity, for every pair the index proposes at `floor` or more. `near`, when given,
    gets each doc's most similar doc of another server among those proposed."""
    pairs: dict[tuple[int, int], float] = {}
    docs = index.docs
    for i in range(len(docs)):
        for j, similarity in index.similar(i, per_doc):
            if round(similarity, 2) < floor:
                break  # best first; compared as the message shows it
            pairs[(i, j) if i < j else (j, i)] = similarity
            if near is not None and i not in near and docs[j].server != docs[i].server:
                near[i] = j
    return pairs


def check_catalog(catalog: Catalog, purposes: Callable[[list[SearchDoc]], Purposes] | None = None) -> Iterator[Finding]:
    """`purposes` gives the docs' purpose vectors (`quiver._search._scope.purpose_vectors`), or None."""
    tools = catalog.tools
    if len(tools) < 2:
        return
    docs = [SearchDoc(t.server, t.name, t.description) for t in tools]
    index = SimilarityIndex(docs, purposes=purposes(docs) if purposes is not None else None)
    drop = _meaningless_words(tools)
    near: dict[int, int] = {}
    for (i, j), raw in sorted(candidate_pairs(index, OVERLAP_MIN, near=near).items()):
        a, b = tools[i], tools[j]
        if a.server == b.server and a.name == b.name:
            continue  # the same name twice in one server: TOOL002
        shared = catalog.seen_by[i] & catalog.seen_by[j]
        if a.server != b.server and not shared:
            continue
        similarity = round(raw, 2)
        mine, theirs = meaning(a.name, drop[a.server]), meaning(b.name, drop[b.server])
        if mine == theirs:
            yield _overlap(a, b, similarity, said(a.name, drop[a.server]), catalog.agents_of(shared))
        elif negated(mine, theirs) or (
            not contrasting(mine, theirs)
            and (similarity >= NEAR_DUPLICATE or _counterparts(a, b, similarity, near.get(i) == j and near.get(j) == i))
        ):
            yield _near_duplicate(a, b, similarity, catalog.agents_of(shared))


def _counterparts(a: LockedTool, b: LockedTool, similarity: float, mutual: bool) -> bool:
    """Each the other's closest tool of another server, and alike enough: `git/git_log` and `github/list_commits`."""
    return a.server != b.server and mutual and similarity >= COUNTERPARTS_MIN


def _pair_finding(
    rule: Rule,
    a: LockedTool,
    b: LockedTool,
    similarity: float,
    agent: str | None,
    *,
    meaning: str = "",
    seen: str = "",
    more: str = "",
) -> Finding:
    return rule.finding(
        location=a.location,
        server=a.server,
        tool=a.name,
        agent=agent,
        shown_name=shown(a.name),
        other_server=b.server,
        other=shown(b.name),
        similarity=f"{similarity:.2f}",
        difference=difference(_label(a, b), a.description, _label(b, a), b.description),
        meaning=meaning,
        seen=seen,
        more=more,
    )


def _near_duplicate(a: LockedTool, b: LockedTool, similarity: float, agents: list[str]) -> Finding:
    if a.server == b.server:
        return _pair_finding(NEAR_DUPLICATE_TOOLS, a, b, similarity, None)
    return _pair_finding(NEAR_DUPLICATE_ACROSS_SERVERS, a, b, similarity, agents[0], more=_more(agents))


def _overlap(a: LockedTool, b: LockedTool, similarity: float, words_said: str, agents: list[str]) -> Finding:
    if a.server == b.server:
        return _pair_finding(OVERLAPPING_TOOL_NAMES, a, b, similarity, None, meaning=words_said)
    seen = f", and agent `{agents[0]}` sees both{_more(agents)}"
    return _pair_finding(OVERLAPPING_TOOL_NAMES, a, b, similarity, agents[0], meaning=words_said, seen=seen)


def _label(tool: LockedTool, other: LockedTool) -> str:
    """The tool's name as a hint shows it: qualified when the two tools' servers differ."""
    return shown(tool.name) if tool.server == other.server else f"{tool.server}/{shown(tool.name)}"


def _more(agents: list[str]) -> str:
    others = len(agents) - 1
    return "" if others == 0 else f" (and {others} more agent{'s' if others > 1 else ''})"


def _meaningless_words(tools: Sequence[LockedTool]) -> Mapping[str, frozenset[str]]:
    """Per server, the name words that carry no meaning: the server's own name and the prefix all its tools share."""
    by_server: dict[str, list[str]] = {}
    for t in tools:
        by_server.setdefault(t.server, []).append(t.name)
    out: dict[str, frozenset[str]] = {}
    for server, names in by_server.items():
        own = frozenset(stem(w) for w in words(server))
        out[server] = own | shared_prefix(names) if len(names) >= _SHARED_PREFIX_MIN else own
    return out


def _check(ctx: LintContext) -> Iterator[Finding]:
    lock = ctx.project.lock
    if lock is not None:
        from quiver._search._scope import purpose_vectors  # the search stack, only when there are tools

        yield from check_catalog(Catalog.of(lock, ctx.resolved), partial(purpose_vectors, ctx.project))


check = cached_check("route-pairs", _check)


NEAR_DUPLICATE_TOOLS = Rule(
    code="ROUTE001",
    name="near-duplicate-tools",
    severity="warning",
    check=check,
    message="tools `{server}/{shown_name}` and `{server}/{other}` read alike (similarity {similarity})",
    hint="say what sets them apart: {difference}",
    doc="""\
## What it does
Flags two tools of one server that read alike to tool search: similarity 0.80 or more. The similarity
is the search index's, the IDF-weighted cosine of name and description terms (names count double); the
pairs compared come from the index's blocking, so the check grows linearly with the catalog. Names
that differ by one contrasting word (`get`/`list`, `up`/`down`, `create`/`delete`) already say which
is which and are left alone, and so are a reading and a writing action on one thing
(`retrieve_page_markdown` / `update_page_markdown`). Names that differ only by a negated word
(`git_diff_staged` / `git_diff_unstaged`) count from 0.50: one prefix is all that tells them apart. The
hint lists the words each description has that the other lacks.

## Why is this bad?
A request matches both equally: the model picks either, and tool search returns them side by side,
so a deferred agent loads the wrong one or both. Each near-duplicate also costs its schema's tokens.

## Example
```json
{"name": "assign_copilot_to_issue", "description": "Assign Copilot to a specific issue in a GitHub repository. ..."},
{"name": "assign_copilot_to_issue_with_intent",
 "description": "Assign Copilot to a specific issue in a GitHub repository. Prefer this tool over ..."}
```
Use instead: one tool, or descriptions that each say when to use it and what only it does.

## Fix
Merge the two tools, or rewrite one description around what only it does (the words in the hint). When
the server is not yours, expose only one of them (the server's `tools` allow-list).

## References
Anthropic, "Writing effective tools for agents": choosing tools and namespacing.
""",
)


NEAR_DUPLICATE_ACROSS_SERVERS = Rule(
    code="ROUTE002",
    name="near-duplicate-tools-across-servers",
    severity="warning",
    check=check,
    message="tools `{server}/{shown_name}` and `{other_server}/{other}` read alike (similarity {similarity}), "
    "and agent `{agent}` sees both{more}",
    hint="keep one of them out of the agent's `tools`, or say what sets them apart: {difference}",
    doc="""\
## What it does
Flags two tools of different servers that read alike (similarity 0.80 or more, as ROUTE001) when one
agent carries both, and, from 0.55, two such tools that are each the other's closest tool of another
server: the local and the hosted way to do one thing (`git/git_log` and `github/list_commits`). The
message names the first such agent; each pair is reported once.

## Why is this bad?
The agent has two ways to do one thing and nothing to choose by: calls split between the servers,
and with tool search the two compete for the same requests.

## Example
An agent with `tools: ["git/*", "github/*"]`, where `git/git_create_branch` ("Creates a new branch
from an optional base branch") meets `github/create_branch` ("Create a new branch in a GitHub
repository").
Use instead: `tools: ["git/*", "github/search_issues", "github/issue_read"]`, or descriptions that say
local repository versus GitHub.

## Fix
Narrow the agent's `tools` to one of the two, or (when the servers are yours) say in each description
what only it does. The hint lists the words each has that the other lacks.

## References
Anthropic, "Writing effective tools for agents": namespacing tools across servers.
""",
)


OVERLAPPING_TOOL_NAMES = Rule(
    code="ROUTE007",
    name="overlapping-tool-names",
    severity="warning",
    check=check,
    message="tool names `{server}/{shown_name}` and `{other_server}/{other}` mean the same (`{meaning}`) "
    "and their descriptions read alike (similarity {similarity}){seen}",
    hint="rename one after what only it does, or merge them: {difference}",
    doc="""\
## What it does
Flags two tools whose names mean the same and whose descriptions are alike (similarity 0.50 or more).
Names mean the same once case, separators, word order, plurals, synonyms (`search`/`find`/`query`,
`get`/`fetch`/`retrieve`, `create`/`add`, ...) and the server's own name or shared prefix are set aside. Tools of one
server always count; tools of two servers count when one agent sees both. Such a pair is reported
here rather than as ROUTE001 or ROUTE002.

## Why is this bad?
The name is the strongest routing signal. Two names with one meaning and alike descriptions leave the
model guessing, and the index ranks them next to each other for every request that fits either.

## Example
```json
{"name": "browser_network_requests", "description": "Returns a numbered list of network requests ..."},
{"name": "browser_network_request",
 "description": "Returns full details (headers and body) of a single network request ..."}
```
Use instead: `browser_list_network_requests` and `browser_get_network_request_details`.

## Fix
Rename one tool after what only it does, or merge the two. Across servers, keep one out of the agent's
`tools`.

## References
MCP specification 2025-11-25, Tools: names; Anthropic, "Writing effective tools for agents".
""",
)


RULES: tuple[Rule, ...] = (NEAR_DUPLICATE_TOOLS, NEAR_DUPLICATE_ACROSS_SERVERS, OVERLAPPING_TOOL_NAMES)
