"""QVR004 invalid-execution-policy: a `servers.*` / `tools.*` policy value the gateway would refuse."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding, Location
from quiver.policy import policy_errors


def check(ctx: LintContext) -> Iterator[Finding]:
    for error in policy_errors(ctx.project.config, unknown=False):  # unknown keys are QVR003's
        where = error.position
        location = Location(where.file, where.line, where.column) if where else Location("quiver.toml", 0, 0)
        yield INVALID_EXECUTION_POLICY.finding(location=location, problem=error.message, suggestion=error.hint or "")


INVALID_EXECUTION_POLICY = Rule(
    code="QVR004",
    name="invalid-execution-policy",
    severity="error",
    check=check,
    message="{problem}",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a value of a per-server (`servers.NAME`) or per-tool (`tools."server/tool"`) execution policy that
quiver cannot use: an `approval` or `side_effect` outside its choices, a `timeout_ms` that is not a
positive whole number, an unknown `retry` setting, a `transient_errors` pattern that is not a regular
expression, a malformed `reconcile`.

## Why is this bad?
`quiver compile` refuses the config, so no manifest is written and the gateway cannot start.

## Example
```toml
[servers.time]
approval = "sometimes"
```
Use instead:
```toml
[servers.time]
approval = "irreversible"
```

## Fix
Write one of the values the hint lists. An unknown key in the same tables is QVR003.

## References
README, Inputs (project config); DESIGN §7 (the executor).
""",
)


RULES: tuple[Rule, ...] = (INVALID_EXECUTION_POLICY,)
