"""quiver's own rules about its inputs: suppressions that match nothing, files it could not read."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.config import unknown_key_hint
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
Reports an input file that could not be read at all: an agent file, an MCP config, the lock file or
the quiver config with malformed YAML/JSON/TOML, a duplicate key, an alias bomb, a file over 5 MB or
not UTF-8. Every other file is still checked, and `quiver lint` exits 2.

## Why is this bad?
The host will skip or misread the file; none of quiver's other checks can run on it, and a broken
MCP config or lock hides the servers and tools the agents refer to.

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

UNKNOWN_CONFIG_KEY = Rule(
    code="QVR003",
    name="unknown-config-key",
    severity="error",
    message="unknown key `{key}` in the quiver config",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a key of `quiver.toml` or `[tool.quiver]` that quiver does not know.

## Why is this bad?
quiver ignores it, so the setting the author meant (often a misspelt one) silently keeps its default.

## Example
```toml
[tool.quiver]
treshold = 10
```
Use instead:
```toml
[tool.quiver]
threshold = 10
```

## Fix
Use the key the hint proposes, or remove it. `quiver compile` reports the same key as a warning.

## References
README, configuration.
""",
)

RULES = (UNUSED_SUPPRESSION, UNREADABLE_FILE, UNKNOWN_CONFIG_KEY)


def check(ctx: LintContext) -> Iterator[Finding]:
    for error in ctx.project.errors:
        pos = error.position
        location = Location(pos.file, pos.line, pos.column) if pos else None
        yield UNREADABLE_FILE.finding(location=location, reason=error.message, advice=error.hint or "fix the file")
    config = ctx.project.config
    for key, line, column in config.unknown_keys:
        location = Location(config.path or "quiver.toml", line, column)
        yield UNKNOWN_CONFIG_KEY.finding(location=location, key=key, suggestion=unknown_key_hint(key))
