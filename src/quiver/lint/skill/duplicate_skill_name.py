"""SKILL004 duplicate-skill-name: two skill files under one name in a listing one model sees."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.skill_views import bare_name, listed_to, skill_views
from quiver.model import Finding
from quiver.sources.skills import Skill

_COPILOT_ROOTS = frozenset({".github/skills", ".claude/skills"})


def _hint(first: Skill, later: Skill) -> str:
    if first.plugin is None and later.plugin is None and {first.root, later.root} == _COPILOT_ROOTS:
        return (
            "Copilot reads both `.github/skills/` and `.claude/skills/`: keep the copy in `.claude/skills/` "
            "(Claude Code reads only that one) and delete the other"
        )
    return "delete the copy, or rename one skill (its `name` and its folder) to say what sets it apart"


def check(ctx: LintContext) -> Iterator[Finding]:
    reported: set[tuple[str, str]] = set()
    views = skill_views(ctx)
    for view in views:
        by_name: dict[str, list[Skill]] = {}
        for skill in view.skills:  # sorted by path
            by_name.setdefault(bare_name(skill), []).append(skill)
        for name, same in by_name.items():
            for i, first in enumerate(same):
                for later in same[i + 1 :]:
                    pair = (first.path, later.path)
                    if pair in reported:
                        continue
                    reported.add(pair)
                    yield DUPLICATE_SKILL_NAME.finding(
                        location=later.key_locations.get("name", later.location),
                        name=name,
                        file=later.path,
                        other=first.path,
                        seen_by=listed_to(views, first, later),
                        hint=_hint(first, later),
                    )


DUPLICATE_SKILL_NAME = Rule(
    code="SKILL004",
    name="duplicate-skill-name",
    severity="error",
    check=check,
    message="two skills are named `{name}`, `{other}` and `{file}`, and both are listed to {seen_by}",
    hint="{hint}",
    doc="""\
## What it does
Flags two skill files with the same name (their `name`, else their folder) in one listing the model
sees. A listing is what a session's main thread sees (Copilot reads `.github/skills/` and
`.claude/skills/`, Claude Code `.claude/skills/` and, with a plugin, that plugin's skills) or what one
agent sees; skills of two different plugins never share one. Reported once per pair, on the file that
sorts later.

## Why is this bad?
The model is shown two skills it calls by one name, and which body a call loads is the host's choice:
a built-in or user skill can take over the project's (copilot-cli #2146), a repository skill and an
installed plugin's copy are both listed, doubling their descriptions in every session (copilot-cli
#4430), and an agent's `skills:` entry preloads whichever quiver and the host find first. Whether a
Copilot release lists a skill of `.github/skills/` and its copy in `.claude/skills/` once or twice is
not recorded; either way one copy is enough, since both hosts read `.claude/skills/`.

## Example
```text
.github/skills/release-notes/SKILL.md   name: release-notes
.claude/skills/release-notes/SKILL.md   name: release-notes
```
Use instead: one copy in `.claude/skills/release-notes/`, which both Copilot and Claude Code read.

## Fix
Delete the stale copy; if the two really are different skills, rename one (its `name` and its folder)
after what sets it apart.

## References
Agent Skills specification (agentskills.io/specification): `name` identifies the skill. GitHub Docs,
about agent skills (the folders Copilot reads); Claude Code docs, skills and plugins (namespaced
`plugin:skill`); github/copilot-cli #2146 and #4430.
""",
)


RULES: tuple[Rule, ...] = (DUPLICATE_SKILL_NAME,)
