"""AGT026 frontmatter-repaired-by-host: frontmatter that is not YAML, which the agent's host reads only after
quoting values itself (Claude Code); other readers refuse the file."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Edit, Finding, RepairedValue


def _findings(values: tuple[RepairedValue, ...], problem: str, agent: str | None) -> Iterator[Finding]:
    for value in values:
        at = value.location
        yield FRONTMATTER_REPAIRED_BY_HOST.finding(
            location=at,
            agent=agent,
            key=value.key,
            problem=problem,
            fixes=(Edit(at.file, at.line, at.column, at.line, at.column + len(value.value), value.rewritten),),
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    for agent in ctx.project.agents:
        yield from _findings(agent.repaired, agent.yaml_error, agent.id)
    for skill in ctx.project.skills:
        yield from _findings(skill.repaired, skill.yaml_error, None)


FRONTMATTER_REPAIRED_BY_HOST = Rule(
    code="AGT026",
    name="frontmatter-repaired-by-host",
    severity="warning",
    fix="safe",
    check=check,
    message=(
        "the frontmatter is not valid YAML ({problem}): Claude Code reads it only by quoting `{key}` itself, "
        "every other YAML reader refuses the file"
    ),
    hint="quote the value of `{key}` (`quiver lint --fix` writes it as Claude Code reads it)",
    doc="""\
## What it does
Flags a value in the frontmatter of a Claude Code subagent or skill (`.claude/`, a plugin) that makes the
frontmatter invalid YAML, typically a `description` holding `: ` (`Triggers on: 'GDPR'`) or starting with a
character YAML reads as syntax (`*`, `&`, `@`, `[`, a backquote). Claude Code 2.1.332 parses such a file a
second time after putting each such value in double quotes, so the subagent works there; quiver reads it the
same way, for the budget and every other rule.

## Why is this bad?
Only Claude Code repairs it. Copilot, VS Code, the skills tooling, editors' YAML schemas and linters refuse
the file, and a later Claude Code may stop guessing: the agent then disappears without a word. The repair
also cannot tell a value meant as a list or a mapping from text.

## Example
```yaml
description: Use for privacy reviews. Triggers on: 'GDPR', 'CCPA'.
```
Use instead:
```yaml
description: "Use for privacy reviews. Triggers on: 'GDPR', 'CCPA'."
```

## Fix
`quiver lint --fix` quotes each such value exactly as Claude Code does (backslashes and double quotes
escaped), so the file means what Claude Code already reads, for every reader.

## References
Claude Code 2.1.332's frontmatter reader, recorded: the subagent is listed in the first request
(docs/hosts.md); YAML 1.2, plain scalars.
""",
)


RULES: tuple[Rule, ...] = (FRONTMATTER_REPAIRED_BY_HOST,)
