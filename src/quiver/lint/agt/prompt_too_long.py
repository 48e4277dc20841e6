"""AGT006 prompt-too-long: an agent prompt over the hosts' limit."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding, Location

MAX_BODY = 30_000


def _body(agent: Agent) -> Iterator[Finding]:
    if len(agent.body) > MAX_BODY:
        yield PROMPT_TOO_LONG.finding(
            location=Location(agent.path, agent.body_line, 1), agent=agent.id, length=len(agent.body), limit=MAX_BODY
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _body(agent)


PROMPT_TOO_LONG = Rule(
    code="AGT006",
    name="prompt-too-long",
    severity="error",
    check=check,
    message="the prompt body is {length:,} characters, over the {limit:,} limit",
    hint="move reference material into files the agent reads on demand",
    doc="""\
## What it does
Flags an agent whose Markdown body (the prompt) is longer than 30,000 characters.

## Why is this bad?
GitHub caps the prompt at 30,000 characters: a longer profile is rejected or cut, and every turn pays
for the whole prompt in context.

## Example
```markdown
---
description: Pimcore expert.
---
(31,000 characters: the framework manual pasted in full)
```
Use instead:
```markdown
---
description: Pimcore expert.
---
Follow the conventions in docs/pimcore.md; read the relevant section before editing.
```

## Fix
Keep the instructions; link to documentation or instruction files instead of inlining them.

## References
GitHub Docs, custom agents configuration: "maximum 30,000 characters".
""",
)


RULES: tuple[Rule, ...] = (PROMPT_TOO_LONG,)
