"""AGT012 duplicate-agent-id: two agent files that give the same agent id."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding

_PRECEDENCE = (".github/agents/", ".claude/agents/", ".github/chatmodes/")


def _rank(agent: Agent) -> tuple[int, str]:
    for index, prefix in enumerate(_PRECEDENCE):
        if agent.path.startswith(prefix):
            return index, agent.path
    return len(_PRECEDENCE), agent.path


def _duplicate_ids(agents: Sequence[Agent]) -> Iterator[Finding]:
    groups: dict[str, list[Agent]] = {}
    for agent in agents:
        groups.setdefault(agent.id, []).append(agent)
    for group in groups.values():
        if len(group) > 1:
            first, *rest = sorted(group, key=_rank)
            for agent in rest:
                yield DUPLICATE_AGENT_ID.finding(location=agent.location, agent=agent.id, other=first.path)


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from _duplicate_ids(ctx.project.agents)


DUPLICATE_AGENT_ID = Rule(
    code="AGT012",
    name="duplicate-agent-id",
    severity="warning",
    check=check,
    message="agent id `{agent}` is also defined by `{other}`; hosts keep only one of them",
    hint="rename one of the files, or delete the stale copy",
    doc="""\
## What it does
Flags two agent files with the same id (file name without `.agent.md` / `.md`), such as
`.github/agents/review.agent.md` and `.claude/agents/review.md`. The finding is reported on every file
but the one hosts look at first (`.github/agents`, then `.claude/agents`, then chat modes).

## Why is this bad?
Hosts de-duplicate agents by id, not by `name`: one file silently shadows the other, and which one wins
differs between VS Code, the Copilot CLI and the cloud agent.

## Example
`.github/agents/review.agent.md` and `.claude/agents/review.md`, both present.

Use instead:
`.github/agents/review.agent.md` and `.claude/agents/claude-review.md`.

## Fix
Keep one file, or rename one so the ids differ. Intentional per-host copies can be suppressed.

## References
GitHub Docs, custom agents configuration: agent id and precedence; Copilot CLI agent locations.
""",
)


RULES: tuple[Rule, ...] = (DUPLICATE_AGENT_ID,)
