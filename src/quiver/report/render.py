"""One entry point for every report format (lint and diff share it)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from quiver.model import Finding
from quiver.report.lines import finding_line
from quiver.rules import Rule


@dataclass(frozen=True, slots=True)
class ReportContext:
    """What formatters may need besides the findings."""

    tool: str  # "lint" or "diff"
    rules: Mapping[str, Rule]  # code -> rule, for SARIF rule metadata and docs links
    root: Path
    color: bool = False
    changed_lines: Mapping[str, frozenset[int]] | None = None  # github --changed-only: file -> lines
    summary: Mapping[str, int] = field(default_factory=dict)  # e.g. suppressed / baselined counts


def render(findings: Sequence[Finding], fmt: str, ctx: ReportContext) -> str:
    if fmt == "json":
        return json.dumps([f.to_json() for f in findings], indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return "".join(finding_line(f) + "\n" for f in findings)
