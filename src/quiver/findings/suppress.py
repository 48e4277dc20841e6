"""Inline suppressions: `<!-- quiver: ignore[AGT003] -->` (next line), `# quiver: ignore[AGT003]` (this line
or, alone on its line, the next), `<!-- quiver: ignore-file[AGT003] -->` or `ignore-file` (whole file)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from quiver.findings.catalog import resolve_id
from quiver.model import Finding, Location

_DIRECTIVE = re.compile(r"(?:<!--|#|//)\s*quiver:\s*(?P<kind>ignore-file|ignore)(?:\[(?P<codes>[^\]]*)\])?\s*(?:-->)?")


@dataclass(frozen=True, slots=True)
class Suppression:
    file: str
    line: int  # the line it covers; 0 = whole file
    codes: tuple[str, ...]  # empty = every rule
    location: Location  # where the directive is written


def parse(rel: str, text: str) -> list[Suppression]:
    out: list[Suppression] = []
    if "quiver" not in text:
        return out  # every directive says `quiver:`: one scan of the file for the usual one without any
    for number, line in enumerate(text.split("\n"), start=1):
        if "quiver" not in line:
            continue
        for match in _DIRECTIVE.finditer(line):
            codes = tuple(c.strip() for c in (match.group("codes") or "").split(",") if c.strip())
            where = Location(rel, number, match.start() + 1)
            if match.group("kind") == "ignore-file":
                out.append(Suppression(rel, 0, codes, where))
            elif not line[: match.start()].strip():
                out.append(Suppression(rel, number + 1, codes, where))  # alone on its line: covers the next
            else:
                out.append(Suppression(rel, number, codes, where))
    return out


def _covers(s: Suppression, f: Finding) -> bool:
    if f.location is None or f.location.file != s.file:
        return False
    if s.line and f.location.line != s.line:
        return False
    if not s.codes:
        return True
    return any(resolve_id(c) == f.rule or f.rule.startswith(c.upper()) for c in s.codes)


def apply(findings: Iterable[Finding], suppressions: list[Suppression]) -> tuple[list[Finding], list[Suppression], int]:
    """(kept findings, unused suppressions, number suppressed)."""
    used: set[int] = set()
    kept = []
    suppressed = 0
    for f in findings:
        hit = next((i for i, s in enumerate(suppressions) if _covers(s, f)), None)
        if hit is None:
            kept.append(f)
        else:
            used.add(hit)
            suppressed += 1
    unused = [s for i, s in enumerate(suppressions) if i not in used]
    return kept, unused, suppressed
