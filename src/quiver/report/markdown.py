"""`--format markdown`: a PR comment or `$GITHUB_STEP_SUMMARY` section.

A title, the counts by severity, then a table (severity, rule, location, message). A diff report is laid out
by `markdown_diff.py` (changes on one screen, details collapsed) from the same pieces (`_markdown.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from quiver.model import Finding
from quiver.report import _summary, markdown_diff
from quiver.report._markdown import table
from quiver.report.context import ReportContext


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    notes = _summary.extras(findings, ctx.summary, tool=ctx.tool)
    tail = f" ({'; '.join(notes)})" if notes else ""
    if ctx.tool == "diff":
        return markdown_diff.render(findings, tail)
    parts = [f"## quiver {ctx.tool}\n"]
    if not findings:
        parts.append(f"No findings{tail}.\n")
        return "\n".join(parts)
    parts.append(f"**{_summary.count_phrase(findings)}**{tail}\n")
    parts.append(table(findings))
    return "\n".join(parts)
