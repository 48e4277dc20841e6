"""AGT005 user-invokable-spelling: `user-invokable` for `user-invocable` (fixable)."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.model import Agent, Edit, Finding

_OLD_SPELLING, _NEW_SPELLING = "user-invokable", "user-invocable"


def _old_spelling(agent: Agent, src: Sources) -> Iterator[Finding]:
    where = agent.key_locations.get(_OLD_SPELLING)
    if where is None:
        return
    fixes: tuple[Edit, ...] = ()
    if _NEW_SPELLING not in agent.frontmatter:
        line = src.line(agent.path, where.line)
        start = where.column - 1
        if line[start : start + 1] in ("'", '"'):
            start += 1
        if line[start : start + len(_OLD_SPELLING)] == _OLD_SPELLING:
            end = start + len(_OLD_SPELLING)
            fixes = (Edit(agent.path, where.line, start + 1, where.line, end + 1, _NEW_SPELLING),)
    yield OLD_USER_INVOCABLE_SPELLING.finding(location=where, agent=agent.id, fixes=fixes)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for agent in ctx.project.agents:
        yield from _old_spelling(agent, src)


OLD_USER_INVOCABLE_SPELLING = Rule(
    code="AGT005",
    name="user-invokable-spelling",
    severity="warning",
    check=check,
    message="`user-invokable` is the old spelling of `user-invocable`",
    hint="rename the key to `user-invocable`",
    fix="safe",
    doc="""\
## What it does
Flags the key `user-invokable` (with a k), the spelling of older VS Code releases.

## Why is this bad?
Current VS Code and GitHub read `user-invocable`; hosts that dropped the old spelling ignore the key
and show an agent that was meant to be hidden (or the reverse).

## Example
```yaml
user-invokable: false
```
Use instead:
```yaml
user-invocable: false
```

## Fix
`--fix` renames the key and touches nothing else. No fix is offered when both spellings are present:
delete the one you do not mean.

## References
VS Code docs, custom agents (`user-invocable`); formats research §1.4, spelling conflict.
""",
)


RULES: tuple[Rule, ...] = (OLD_USER_INVOCABLE_SPELLING,)
