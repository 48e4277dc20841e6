"""AGT004 deprecated-infer: the retired `infer` key."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding


def _infer(agent: Agent) -> Iterator[Finding]:
    if "infer" not in agent.frontmatter:
        return
    value = agent.frontmatter["infer"]
    if "disable-model-invocation" in agent.frontmatter:
        advice = "remove it: `disable-model-invocation` is set and wins"
    elif value is False:
        advice = "use `disable-model-invocation: true` instead"
    else:
        advice = "remove it: model invocation is the default (`disable-model-invocation: false`)"
    yield DEPRECATED_INFER.finding(location=agent.key_locations["infer"], agent=agent.id, advice=advice)


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _infer(agent)


DEPRECATED_INFER = Rule(
    code="AGT004",
    name="deprecated-infer",
    severity="warning",
    check=check,
    message="`infer` is deprecated",
    hint="{advice}",
    doc="""\
## What it does
Flags the retired `infer` field.

## Why is this bad?
Hosts are dropping `infer`; `disable-model-invocation` replaces it and wins when both are set, so an
`infer` that disagrees with it is silently ignored.

## Example
```yaml
infer: false
```
Use instead:
```yaml
disable-model-invocation: true
```

## Fix
`infer: false` becomes `disable-model-invocation: true`; `infer: true` is the default and can go.

## References
GitHub Docs, custom agents configuration: `infer` (retired), `disable-model-invocation`.
""",
)


RULES: tuple[Rule, ...] = (DEPRECATED_INFER,)
