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


RULES: tuple[Rule, ...] = (UNREADABLE_FILE,)
