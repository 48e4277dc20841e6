"""AGT003 invalid-target: a `target` no host knows."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding
from quiver.suggest import did_you_mean

TARGETS = ("vscode", "github-copilot")


def _target(agent: Agent) -> Iterator[Finding]:
    value = agent.frontmatter.get("target")
    if isinstance(value, str) and value not in TARGETS:
        fallback = "use `vscode` or `github-copilot`, or remove `target` to run in both"
        yield INVALID_TARGET.finding(
            location=agent.key_locations["target"],
            agent=agent.id,
            value=value,
            advice=did_you_mean(value, TARGETS, fallback),
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _target(agent)


INVALID_TARGET = Rule(
    code="AGT003",
    name="invalid-target",
    severity="error",
    check=check,
    message="`target` is `{value}`; it must be `vscode` or `github-copilot`",
    hint="{advice}",
    doc="""\
## What it does
Flags a `target` value other than `vscode` or `github-copilot`.

## Why is this bad?
Hosts filter agents by `target`: an unknown value makes the agent invisible everywhere, or visible
where it was not meant to run.

## Example
```yaml
target: copilot
```
Use instead:
```yaml
target: github-copilot
```

## Fix
Use one of the two values, or remove `target` to make the agent available in both environments.

## References
GitHub Docs, custom agents configuration: `target`.
""",
)


RULES: tuple[Rule, ...] = (INVALID_TARGET,)
