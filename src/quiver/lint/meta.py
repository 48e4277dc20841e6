"""quiver's own rules about its inputs: suppressions that match nothing, files it could not read."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.lint.engine import LintContext
from quiver.model import Finding, Location
from quiver.rules import Rule

UNUSED_SUPPRESSION = Rule(
    code="QVR001",
    name="unused-suppression",
    severity="warning",
    message="suppression `{directive}` matches no finding",
    hint="remove it",
    fixable=False,
    doc="""\
## What it does
Flags a `quiver: ignore[...]` directive that suppressed nothing in this run.

## Why is this bad?
Stale suppressions hide the next real finding on that line and make reviewers distrust the linter.

## Example
```markdown
<!-- quiver: ignore[AGT003] -->
description: a fine description
```

## Fix
Delete the directive. It is wrong only when the suppressed rule was deselected in this run.

## References
ruff, RUF100 unused-noqa.
""",
)

UNREADABLE_FILE = Rule(
    code="QVR002",
    name="unreadable-file",
    severity="error",
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

RULES = (UNUSED_SUPPRESSION, UNREADABLE_FILE)


def check(ctx: LintContext) -> Iterator[Finding]:
    for error in ctx.project.errors:
        pos = error.position
        location = Location(pos.file, pos.line, pos.column) if pos else None
        yield UNREADABLE_FILE.finding(location=location, reason=error.message, advice=error.hint or "fix the file")
