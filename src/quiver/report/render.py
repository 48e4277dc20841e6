"""One entry point for every report format (lint and diff share it).

Each format lives in its own module and is imported only when asked for, so `quiver lint` pays for one.
Formatters take the findings in the order given (callers sort them) and never build messages or hints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from quiver.errors import UsageError
from quiver.model import Finding
from quiver.report import FORMATS
from quiver.report.context import ReportContext


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
