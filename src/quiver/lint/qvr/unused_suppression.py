"""QVR001 unused-suppression: a `quiver: ignore[...]` directive that matched nothing.

Raised by lint/run.py after suppressions are applied, so the rule has no check of its own."""

from __future__ import annotations

from quiver.findings.rule import Rule

UNUSED_SUPPRESSION = Rule(
    code="QVR001",
    name="unused-suppression",
    severity="warning",
    message="suppression `{directive}` matches no finding",
    hint="remove it",
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


RULES: tuple[Rule, ...] = (UNUSED_SUPPRESSION,)
