"""QVR003 unknown-config-key: a key of the quiver config that quiver does not know."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.config import unknown_key_hint
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding, Location


def check(ctx: LintContext) -> Iterator[Finding]:
    config = ctx.project.config
    for key, line, column in config.unknown_keys:
        location = Location(config.path or "quiver.toml", line, column)
        yield UNKNOWN_CONFIG_KEY.finding(location=location, key=key, suggestion=unknown_key_hint(key))


UNKNOWN_CONFIG_KEY = Rule(
    code="QVR003",
    name="unknown-config-key",
    severity="error",
    check=check,
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


RULES: tuple[Rule, ...] = (UNKNOWN_CONFIG_KEY,)
