"""QVR002 unreadable-file: an input file quiver could not read at all."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding, Location


def check(ctx: LintContext) -> Iterator[Finding]:
    for error in ctx.project.errors:
        pos = error.position
        location = Location(pos.file, pos.line, pos.column) if pos else None
        yield UNREADABLE_FILE.finding(location=location, reason=error.message, advice=error.hint or "fix the file")


UNREADABLE_FILE = Rule(
    code="QVR002",
    name="unreadable-file",
    severity="error",
    check=check,
    message="{reason}",
    hint="{advice}",
    doc="""\
## What it does
Reports an agent file that could not be read at all: malformed YAML, a duplicate key, an alias bomb,
a file over 5 MB or not UTF-8.

## Why is this bad?
The host will skip or misread the agent; none of quiver's other checks can run on it.

## Example
```yaml
tools: [read, edit
```
Use instead:
```yaml
tools: [read, edit]
```

## Fix
Fix the syntax at the reported line and column.

## References
YAML 1.2 specification.
""",
)


RULES: tuple[Rule, ...] = (UNREADABLE_FILE,)
