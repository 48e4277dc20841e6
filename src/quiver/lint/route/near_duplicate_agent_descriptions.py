"""Routing rule about agents competing for auto-selection: near-identical descriptions (ROUTE003)."""

from __future__ import annotations

from collections.abc import Iterator

from quiver._search._scope import purpose_vectors
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.route.tool_pairs import candidate_pairs
from quiver.lint.support.cache import cached_check
from quiver.lint.support.route_words import difference
from quiver.model import Finding
from quiver.search import SearchDoc, SearchIndex

AGENT_NEAR_DUPLICATE = 0.80  # similarity of two descriptions from which hosts cannot choose between the agents


def _check(ctx: LintContext) -> Iterator[Finding]:
    agents = sorted(
        (a for a in ctx.project.agents if isinstance(a.description, str) and a.description.strip()),
        key=lambda a: (a.id, a.path),
    )
    if len(agents) < 2:
        return
    # No name: the blocker pairs agents by description terms alone, and by the embedding of the description.
    docs = [SearchDoc(a.id, "", a.description or "") for a in agents]
    index = SearchIndex.build(docs, purposes=purpose_vectors(ctx.project, docs))
    for (i, j), raw in sorted(candidate_pairs(index, AGENT_NEAR_DUPLICATE).items()):
        a, b = agents[i], agents[j]
        if a.id == b.id:
            continue  # one id defined twice: AGT012
        yield NEAR_DUPLICATE_AGENT_DESCRIPTIONS.finding(
            location=a.key_locations.get("description", a.location),
            agent=a.id,
            other=b.id,
            similarity=f"{round(raw, 2):.2f}",
            difference=difference(a.id, a.description or "", b.id, b.description or ""),
        )


check = cached_check("route-agents", _check)


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
the IDF-weighted cosine of their description terms (with a prior, so it holds up over a handful of agents)
and the calibrated embedding cosine of their first sentences (names and ids do not count: hosts choose by
the description). The
finding is on the first agent by id; the hint lists the words each description has that the other lacks.

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
