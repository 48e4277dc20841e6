"""Severity: per-code overrides from config or the command line, and the `--fail-on` threshold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from quiver.errors import UsageError
from quiver.findings.catalog import resolve_id
from quiver.model import SEVERITY_ORDER, Finding, Severity


def apply_severity(findings: Iterable[Finding], overrides: Mapping[str, str]) -> list[Finding]:
    """Findings with each overridden rule (keyed by code or name) at its new severity."""
    by_code: dict[str, Severity] = {}
    for key, sev in overrides.items():
        code = resolve_id(key)
        if code is None:
            raise UsageError(f"unknown rule `{key}` in severity overrides", hint="run `quiver rule --all`")
        by_code[code] = sev  # type: ignore[assignment]  # validated by config
    return [replace(f, severity=by_code[f.rule]) if f.rule in by_code else f for f in findings]


def at_or_above(findings: Iterable[Finding], level: str) -> list[Finding]:
    """The findings at `level` or more severe (`never`: none)."""
    if level == "never":
        return []
    floor = SEVERITY_ORDER[level]
    return [f for f in findings if SEVERITY_ORDER[f.severity] >= floor]
