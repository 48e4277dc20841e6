"""SKILL001 missing-skill-description: a SKILL.md whose frontmatter has no `description` (or an empty one, or
one that is not text)."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding
from quiver.sources.skills import Skill


def _problem(skill: Skill) -> str | None:
    """What is wrong with the skill's `description`, or None when it has one."""
    if skill.description is not None:
        return None
    if "description" not in skill.frontmatter:
        return "has no `description`"
    value = skill.frontmatter["description"]
    if isinstance(value, str) or value is None:
        return "has an empty `description`"
    return "has a `description` that is not text"


def check(ctx: LintContext) -> Iterator[Finding]:
    for skill in ctx.project.skills:
        problem = _problem(skill)
        if problem is None:
            continue
        at = skill.key_locations
        where = at.get("description") or at.get("name") or skill.location
        yield MISSING_SKILL_DESCRIPTION.finding(location=where, skill=skill.id, problem=problem)


MISSING_SKILL_DESCRIPTION = Rule(
    code="SKILL001",
    name="missing-skill-description",
    severity="warning",
    check=check,
    message="skill `{skill}` {problem}",
    hint="add `description:` saying what the skill does and when to use it: hosts pick skills by it alone",
    doc="""\
## What it does
Flags a skill (`SKILL.md`) whose frontmatter has no `description`, an empty one, or one that is not text.

## Why is this bad?
Claude Code and Copilot list every skill they can use by name and description, up front, and load a
skill's body only once the model picks it; the model picks by that listing alone. The Agent Skills
specification requires the description, and validators (`skills-ref validate`) refuse the skill without
one. Claude Code lists the body's first paragraph instead, usually a heading such as `# PDF tools`, which
says neither what the skill does nor when to use it, so the skill is picked by chance or not at all.

## Example
```yaml
---
name: pdf-tools
---
# PDF tools
```
Use instead:
```yaml
---
name: pdf-tools
description: Extract text and tables from PDF files and fill PDF forms. Use when the user works with PDFs.
---
```

## Fix
Write one or two sentences: what the skill does, then when to use it, with the words a user's request
would contain. Within 1,024 characters (SKILL002).

## References
Agent Skills specification (agentskills.io/specification): `description`, required, 1-1024 characters.
Claude Code docs, skills: frontmatter reference (`description` recommended; without it, the first
paragraph of the body).
""",
)


RULES: tuple[Rule, ...] = (MISSING_SKILL_DESCRIPTION,)
