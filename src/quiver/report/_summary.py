"""Counts shared by the text and markdown reports: findings by severity, plus what was left out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quiver.model import Finding

SEVERITIES = ("error", "warning", "info")
# summary keys the lint command passes, and how each reads after its count
_KNOWN = {"suppressed": "suppressed", "baselined": "in baseline"}


def severity_counts(findings: Sequence[Finding]) -> dict[str, int]:
    """Count findings per severity, in SEVERITIES order (zero counts kept)."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return counts


def plural(count: int, severity: str) -> str:
    """`1 error`, `2 errors`, `3 warnings`, `2 info`."""
    if severity == "info" or count == 1:
        return f"{count} {severity}"
    return f"{count} {severity}s"


def count_phrase(findings: Sequence[Finding]) -> str:
    """`3 errors, 2 warnings` (zero counts left out); empty when there are no findings."""
    return ", ".join(plural(n, sev) for sev, n in severity_counts(findings).items() if n)


def extras(findings: Sequence[Finding], summary: Mapping[str, int], *, tool: str) -> list[str]:
    """The parenthesised notes: fixable findings (lint only), then the non-zero summary counts."""
    notes = []
    fixable = sum(1 for f in findings if f.fixes)
    if fixable and tool == "lint":
        notes.append(f"{fixable} fixable with --fix")
    keys = [k for k in _KNOWN if k in summary] + sorted(k for k in summary if k not in _KNOWN)
    notes.extend(f"{summary[k]} {_KNOWN.get(k, k)}" for k in keys if summary[k])
    return notes


def summary_line(findings: Sequence[Finding], summary: Mapping[str, int], *, tool: str, nothing: str = "") -> str:
    """`Found 3 errors, 2 warnings (1 fixable with --fix; 4 suppressed; 2 in baseline)` or `All checks passed.`;
    with `nothing` (what was not found) and no finding, `Nothing to check: {nothing}.`"""
    notes = extras(findings, summary, tool=tool)
    tail = f" ({'; '.join(notes)})" if notes else ""
    if not findings and nothing:
        return f"Nothing to check: {nothing}."
    if not findings:
        return f"All checks passed{tail}."
    return f"Found {count_phrase(findings)}{tail}"
