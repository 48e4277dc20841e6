"""SEC104 unused-capability-override: a `capabilities` override of the quiver config that changes no label."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.sec.toxic_flow import classifier_of
from quiver.lint.support.cache import cached_check
from quiver.model import Finding, Location


def _check(ctx: LintContext) -> Iterator[Finding]:
    config = ctx.project.config
    classifier = classifier_of(ctx)
    found = classifier.unused()
    classifier.save()
    for unused in found:
        override = unused.override
        server = override.name.partition("/")[0]
        yield UNUSED_CAPABILITY_OVERRIDE.finding(
            location=override.location or Location(config.path or "quiver.toml"),
            server=server,
            tool=override.name.partition("/")[2] or None,
            key=override.key,
            value=str(override.value).lower(),
            why=unused.why,
        )


check = cached_check("sec-overrides", _check)  # a function of the input files only, like SEC101-103


UNUSED_CAPABILITY_OVERRIDE = Rule(
    code="SEC104",
    name="unused-capability-override",
    severity="warning",
    check=check,
    message="`{key} = {value}` changes no label: {why}",
    hint="remove the override, or correct the server or tool it names",
    doc="""\
## What it does
Flags a `capabilities` override in `quiver.toml` (`[servers.NAME]` or `[tools."server/tool"]`) that
changes no label of any tool in the lock: the server or tool is not there (a typo, a renamed tool, a
server not snapshotted), or every tool it covers already has that value.

## Why is this bad?
An override exists to silence a flow quiver sees wrongly. One that matches nothing silences nothing
today and may silence a real flow later, when a tool of that name appears; a misspelt one leaves the
flow it was meant for reported while the author believes it handled.

## Example
```toml
[tools."github/add_issue_coment"]
capabilities = { exfiltration = false }
```
Use instead:
```toml
[tools."github/add_issue_comment"]
capabilities = { exfiltration = false }
```

## Fix
Correct the name (`quiver explain AGENT --flows` shows each tool's labels and the reason that set
each), or delete the override. An override of a server that is not snapshotted yet starts to count
once `quiver snapshot` adds it to the lock.

## Options
`[servers.NAME] capabilities`, `[tools."server/tool"] capabilities`.

## References
ruff `RUF100` (unused `noqa`), quiver `QVR001` (unused suppression): the same idea for overrides.
""",
)


RULES: tuple[Rule, ...] = (UNUSED_CAPABILITY_OVERRIDE,)
