"""AGT015 duplicate-tool-reference: an entry of `tools` that repeats an earlier one."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.builtins import builtin_alias
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Agent, Finding, ToolRef


def _duplicates(agent: Agent) -> Iterator[Finding]:
    seen: dict[str, ToolRef] = {}
    for ref in agent.tools or ():
        key = builtin_alias(ref.text) or ref.text
        first = seen.setdefault(key, ref)
        if first is not ref:
            yield DUPLICATE_TOOL_REFERENCE.finding(
                location=ref.location,
                agent=agent.id,
                ref=ref.text,
                first=first.text,
                line=first.location.line,
                column=first.location.column,
            )


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _duplicates(agent)


DUPLICATE_TOOL_REFERENCE = Rule(
    code="AGT015",
    name="duplicate-tool-reference",
    severity="warning",
    check=check,
    message="`{ref}` repeats the entry `{first}` at {line}:{column}",
    hint="remove this entry",
    doc="""\
## What it does
Flags an entry of `tools` that repeats an earlier one, including a compatible alias of the same
built-in (`Bash` after `execute`, `Read` after `read`).

## Why is this bad?
The repeat adds nothing, and usually hides a mistake: a second entry that was meant to name a
different tool.

## Example
```yaml
tools: ["read", "github/*", "Read"]
```
Use instead:
```yaml
tools: ["read", "github/*"]
```

## Fix
Delete the later entry. A wildcard next to a named tool of the same server (`github/*` and
`github/get_me`) is not a duplicate: naming a tool preloads it.

## References
GitHub Docs, custom agents configuration: tool aliases.
""",
)


RULES: tuple[Rule, ...] = (DUPLICATE_TOOL_REFERENCE,)
