"""The order lint findings are reported in: by file and position, then rule and message; duplicates dropped."""

from __future__ import annotations

from collections.abc import Iterable

from quiver.model import Finding


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    def key(f: Finding) -> tuple[str, int, int, str, str]:
        loc = f.location
        return (loc.file if loc else "", loc.line if loc else 0, loc.column if loc else 0, f.rule, f.message)

    unique: dict[tuple[str, str, int, int, str], Finding] = {}
    for f in findings:
        loc = f.location
        unique.setdefault(
            (f.rule, loc.file if loc else "", loc.line if loc else 0, loc.column if loc else 0, f.message), f
        )
    return sorted(unique.values(), key=key)
