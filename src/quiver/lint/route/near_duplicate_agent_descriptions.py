"""Routing rule about agents competing for auto-selection: near-identical descriptions (ROUTE003)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from quiver._search._doc import SearchDoc
from quiver._search._similar import SimilarityIndex
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.route.tool_pairs import candidate_pairs
from quiver.lint.support.cache import cached_check
from quiver.lint.support.route_words import difference, term_set
from quiver.model import Agent, Finding

AGENT_NEAR_DUPLICATE = 0.80  # similarity of two descriptions from which hosts cannot choose (agents, skills)
# The plain word overlap is stricter (it has no IDF to discount shared boilerplate): at most about one
# content word in ten differs, or only a short form does (`repo` / `repository`).
WORD_OVERLAP_NEAR_DUPLICATE = 0.90


def near_duplicate_descriptions(
    ctx: LintContext, keys: Sequence[str], texts: Sequence[str]
) -> dict[tuple[int, int], float]:
    """(i, j) with i < j -> similarity, for the pairs of `texts` (descriptions a host chooses between, each
    under its `keys` entry) that read alike: the larger of the IDF-weighted cosine, the plain word overlap
    and, where the lock records them, the embedding of their first sentences (ROUTE003, ROUTE008)."""
    # No name: the blocker pairs texts by description terms alone, and by the embedding of the description.
    docs = [SearchDoc(key, "", text) for key, text in zip(keys, texts, strict=True)]
    purposes = None  # descriptions of agents and skills have vectors only where a lock records their text
    if ctx.project.lock is not None:
        from quiver._search._scope import purpose_vectors

        purposes = purpose_vectors(ctx.project, docs)
    index = SimilarityIndex(docs, purposes=purposes)
    pairs = candidate_pairs(index, AGENT_NEAR_DUPLICATE)
    overlaps = word_overlaps([term_set(text) for text in texts], WORD_OVERLAP_NEAR_DUPLICATE)
    for pair, overlap in overlaps.items():
        if overlap > pairs.get(pair, 0.0):
            pairs[pair] = overlap
    return pairs


def _check(ctx: LintContext) -> Iterator[Finding]:
    agents = sorted(
        (a for a in ctx.project.agents if isinstance(a.description, str) and a.description.strip()),
        key=lambda a: (a.id, a.path),
    )
    if len(agents) < 2:
        return
    pairs = near_duplicate_descriptions(ctx, [a.id for a in agents], [a.description or "" for a in agents])
    for (i, j), raw in sorted(pairs.items()):
        a, b = agents[i], agents[j]
        if a.id == b.id:
            continue  # one id defined twice: AGT012
        if _same_agent_in_two_plugins(a, b):
            continue
        yield NEAR_DUPLICATE_AGENT_DESCRIPTIONS.finding(
            location=a.key_locations.get("description", a.location),
            agent=a.id,
            other=b.id,
            similarity=f"{round(raw, 2):.2f}",
            difference=difference(a.id, a.description or "", b.id, b.description or ""),
        )


check = cached_check("route-agents", _check)


def _same_agent_in_two_plugins(a: Agent, b: Agent) -> bool:
    """One agent shipped in two Claude Code plugins (`p1:x`, `p2:x`, same description and prompt): whichever
    the host picks does the same, so there is nothing to tell apart (wshobson/agents ships 105 such copies)."""
    if ":" not in a.id or ":" not in b.id:
        return False
    return a.id.split(":", 1)[1] == b.id.split(":", 1)[1] and (a.description, a.body) == (b.description, b.body)


_SHORT_FORM = 4  # a word of 4+ letters that starts another stands for it: repo/repository, docs/documentation


def _relatives(vocabulary: set[str]) -> dict[str, frozenset[str]]:
    """word -> the other words of `vocabulary` it is a short form of, or that are a short form of it."""
    ordered = sorted(vocabulary)
    related: dict[str, set[str]] = {}
    for word in ordered:
        if len(word) < _SHORT_FORM:
            continue
        # The words `word` starts are the ones after it in sorted order, up to the first that does not.
        at = bisect.bisect_right(ordered, word)
        while at < len(ordered) and ordered[at].startswith(word):
            related.setdefault(word, set()).add(ordered[at])
            related.setdefault(ordered[at], set()).add(word)
            at += 1
    return {word: frozenset(others) for word, others in related.items()}


def word_overlaps(sets: list[frozenset[str]], floor: float = 0.0) -> dict[tuple[int, int], float]:
    """(i, j) -> Dice overlap of two descriptions' content words, a short form counting as the word it
    starts, for the pairs at `floor` or more (compared as the message shows it, to two decimals). Needs no
    corpus statistics, so it holds on a repository of three agents, where IDF does not. Only pairs sharing
    at least half of the smaller set's words exactly are compared (an inverted index).

    Each distinct set is compared once (a fleet repeats descriptions): two agents with the same nonempty
    set overlap 1.0."""
    groups: dict[frozenset[str], list[int]] = {}
    for i, words in enumerate(sets):
        if words:
            groups.setdefault(words, []).append(i)
    distinct = list(groups)
    related = _relatives({w for words in distinct for w in words})
    holders: dict[str, list[int]] = {}
    for d, words in enumerate(distinct):
        for word in words:
            holders.setdefault(word, []).append(d)
    out: dict[tuple[int, int], float] = {}
    for members in groups.values():
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                out[(i, j)] = 1.0
    for d, words in enumerate(distinct):
        shared: dict[int, int] = {}
        for word in words:
            for e in holders[word]:
                if e > d:
                    shared[e] = shared.get(e, 0) + 1
        for e, exact in shared.items():
            other = distinct[e]
            if 2 * exact < min(len(words), len(other)):
                continue
            mine = exact + sum(1 for w in words - other if w in related and not related[w].isdisjoint(other))
            theirs = exact + sum(1 for o in other - words if o in related and not related[o].isdisjoint(words))
            overlap = (mine + theirs) / (len(words) + len(other))
            if round(overlap, 2) < floor:
                continue
            for i in groups[words]:
                for j in groups[other]:
                    out[(i, j) if i < j else (j, i)] = overlap
    return out


NEAR_DUPLICATE_AGENT_DESCRIPTIONS = Rule(
    code="ROUTE003",
    name="near-duplicate-agent-descriptions",
    severity="warning",
    check=check,
    message="agents `{agent}` and `{other}` have near-identical descriptions (similarity {similarity})",
    hint="say when to pick each: {difference}",
    doc="""\
## What it does
Flags two agents whose descriptions read alike: similarity 0.80 or more. The similarity is the larger of
the IDF-weighted cosine of their description terms (with a prior, so it holds up over a handful of agents),
the plain overlap of their content words (0.90 or more; a short form such as `repo` counting as the word it starts,
`repository`; no corpus statistics, so it holds in a repository of three agents) and, where the lock records
them, the calibrated embedding cosine of their first sentences (names and ids do not count: hosts choose by
the description). The
finding is on the first agent by id; the hint lists the words each description has that the other lacks.
One agent shipped unchanged in two Claude Code plugins (`p1:x` and `p2:x` with the same description and
prompt) is not flagged: whichever the host picks does the same work.

## Why is this bad?
Hosts pick a custom agent for a task, and decide when to delegate to a subagent, by its description.
Two agents that say the same thing compete: which one runs is a coin toss, and the other's
instructions and tools are never used for the work it was written for.

## Example
```yaml
# csharp-dotnet-janitor.agent.md
description: Perform janitorial tasks on C#/.NET code including cleanup, modernization, and tech debt remediation.
# dotnet-upgrade.agent.md
description: Perform janitorial tasks on C#/.NET code including cleanup, modernization, and tech debt remediation.
```
Use instead:
```yaml
# dotnet-upgrade.agent.md
description: Upgrade a .NET solution to a newer framework version, package by package, with a build after each step.
```

## Fix
Rewrite one description around what only that agent does and when to pick it, or delete the stale
copy. Agents meant to differ only by technology (Bicep / Terraform) should name it early.

## References
GitHub Docs, custom agents configuration: `description`; VS Code, custom agents and subagents.
""",
)


RULES: tuple[Rule, ...] = (NEAR_DUPLICATE_AGENT_DESCRIPTIONS,)
