"""One entry point for every report format (lint and diff share it).

Each format lives in its own module and is imported only when asked for, so `quiver lint` pays for one.
Formatters take the findings in the order given (callers sort them) and never build messages or hints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from quiver.errors import UsageError
from quiver.findings.rule import Rule
from quiver.model import Finding, Location
from quiver.report import FORMATS


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


class Formatter(Protocol):
    """A report format: findings (already sorted) in, the whole report text out."""

    def __call__(self, findings: Sequence[Finding], ctx: ReportContext, /) -> str: ...


def formatter(fmt: str) -> Formatter:
    """The formatter for `fmt`, imported on demand; an unknown name is a usage error."""
    if fmt == "text":
        from quiver.report import text

        return text.render
    if fmt == "json":
        from quiver.report import json_format

        return json_format.render
    if fmt == "sarif":
        from quiver.report import sarif

        return sarif.render
    if fmt == "github":
        from quiver.report import github

        return github.render
    if fmt == "markdown":
        from quiver.report import markdown

        return markdown.render
    raise UsageError(f"unknown report format `{fmt}`", hint=f"use one of: {', '.join(FORMATS)}")


def render(findings: Sequence[Finding], fmt: str, ctx: ReportContext) -> str:
    """The report for `findings` in format `fmt` (one of FORMATS)."""
    return formatter(fmt)(findings, ctx)
