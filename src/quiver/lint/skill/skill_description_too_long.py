"""SKILL002 skill-description-too-long: a skill description over the Agent Skills limit of 1,024 characters."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding

MAX_DESCRIPTION = 1024  # characters: the Agent Skills specification's limit (and skills-ref's check)


def check(ctx: LintContext) -> Iterator[Finding]:
    for skill in ctx.project.skills:
        description = skill.description
        if description is None or len(description) <= MAX_DESCRIPTION:
            continue
        yield SKILL_DESCRIPTION_TOO_LONG.finding(
            location=skill.key_locations.get("description", skill.location),
            skill=skill.id,
            length=f"{len(description):,}",
            limit=f"{MAX_DESCRIPTION:,}",
        )


SKILL_DESCRIPTION_TOO_LONG = Rule(
    code="SKILL002",
    name="skill-description-too-long",
    severity="warning",
    check=check,
    message="the description of skill `{skill}` is {length} characters, over the Agent Skills limit of {limit}",
    hint="keep what the skill does and when to use it; move the rest into the body, which loads only when used",
    doc="""\
## What it does
Flags a skill whose `description` is longer than 1,024 characters (leading and trailing blanks not
counted), the limit of the Agent Skills specification.

## Why is this bad?
Every visible skill's description is in the model's context from the first request of every session and
of every agent that sees the skill, used or not: each character is paid again in each of them. Readers
that follow the specification refuse the skill (`skills-ref validate`), and Claude Code cuts the listing
of a skill at 1,536 characters (`description` and `when_to_use` together), so the end of a long one is
never read.

## Example
```yaml
description: Comprehensive guide to ... (1,400 characters of features, examples and caveats)
```
Use instead:
```yaml
description: Build and review Terraform modules for AWS. Use when writing, refactoring or reviewing .tf files.
```

## Fix
Keep the first sentences that say what the skill does and when to use it; move examples, options and
caveats into the body or a file beside `SKILL.md`, which the host reads only when the skill is used.

## References
Agent Skills specification (agentskills.io/specification): `description`, 1-1024 characters; progressive
disclosure (metadata loaded at startup for every skill). Claude Code docs, skills: the 1,536-character
listing cap.
""",
)


RULES: tuple[Rule, ...] = (SKILL_DESCRIPTION_TOO_LONG,)
