"""What formatters may need besides the findings (`ReportContext`): its own module, below `render.py` and every
formatter, which both import it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from quiver.findings.rule import Rule
from quiver.model import Location


@dataclass(frozen=True, slots=True)
class ReportContext:
    """What formatters may need besides the findings."""

    tool: str  # "lint" or "diff"
    rules: Mapping[str, Rule]  # code (or name) -> rule, for SARIF rule metadata and docs links
    root: Path
    color: bool = False
    changed_lines: Mapping[str, frozenset[int]] | None = None  # github --changed-only: file -> lines
    summary: Mapping[str, int] = field(default_factory=dict)  # e.g. suppressed / baselined counts
    width: int | None = None  # text: terminal columns to fit quoted lines in (None: the terminal's, on a tty)
    fallback: Location | None = None  # SARIF: where a finding with no location of its own points (diff: a side file)
    nothing: str = ""  # text: why the run had nothing to check (said instead of "All checks passed.")
