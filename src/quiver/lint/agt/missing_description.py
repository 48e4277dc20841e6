"""AGT001 missing-description: an agent without a `description`."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding


def _description(agent: Agent) -> Iterator[Finding]:
    value = agent.frontmatter.get("description")
    if value is None or (isinstance(value, str) and not value.strip()):
        where = agent.key_locations.get("description", agent.location)
        yield MISSING_DESCRIPTION.finding(location=where, agent=agent.id)


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _description(agent)


MISSING_DESCRIPTION = Rule(
    code="AGT001",
    name="missing-description",
    severity="error",
    check=check,
    message="agent `{agent}` has no `description`",
    hint="add `description:` saying what the agent does and when to pick it",
    doc="""\
## What it does
Flags an agent file whose frontmatter has no `description`, or an empty one.

## Why is this bad?
`description` is the only required field: hosts show it in the agent picker and use it to decide
when to delegate to the agent. Without it the cloud agent rejects the profile and no model routes to it.

## Example
```yaml
---
name: reviewer
---
```
Use instead:
```yaml
---
name: reviewer
description: Reviews pull requests for security and style problems.
---
```

## Fix
Write one or two sentences on what the agent does and when to use it.

## References
GitHub Docs, custom agents configuration: `description` (required).
""",
)


RULES: tuple[Rule, ...] = (MISSING_DESCRIPTION,)
