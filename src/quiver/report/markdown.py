"""`--format markdown`: a PR comment or `$GITHUB_STEP_SUMMARY` section.

A title, the counts by severity, then a table (severity, rule, location, message). A diff report is laid out
by `markdown_diff.py` (changes on one screen, details collapsed) from the same pieces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from quiver.model import JSON, Finding
from quiver.report import _summary
from quiver.report.render import ReportContext

HEADER = "| severity | rule | location | message |\n| --- | --- | --- | --- |\n"
_BACKTICKS = re.compile(r"`+")


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    notes = _summary.extras(findings, ctx.summary, tool=ctx.tool)
    tail = f" ({'; '.join(notes)})" if notes else ""
    if ctx.tool == "diff":
        from quiver.report import markdown_diff

        return markdown_diff.render(findings, tail)
    parts = [f"## quiver {ctx.tool}\n"]
    if not findings:
        parts.append(f"No findings{tail}.\n")
        return "\n".join(parts)
    parts.append(f"**{_summary.count_phrase(findings)}**{tail}\n")
    parts.append(table(findings))
    return "\n".join(parts)


def table(findings: Sequence[Finding]) -> str:
    return HEADER + "".join(row(f) for f in findings)


def row(finding: Finding) -> str:
    location = f"`{finding.location}`" if finding.location else ""
    message = cell(finding.message)
    if finding.hint:
        message += "<br>hint: " + cell(finding.hint)
    return f"| {finding.severity} | `{finding.rule}` {finding.name} | {cell(location)} | {message} |\n"


def cell(text: str) -> str:
    """Text safe inside a table cell: `|` escaped, line breaks as `<br>`."""
    return text.replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")


def witness_block(finding: Finding) -> str:
    """A finding's witness in a collapsed block holding a fenced JSON value."""
    body = witness_json(finding.witness)
    fence = _fence(body)
    return (
        f"<details><summary>witness for {finding.rule} {finding.name}</summary>\n\n"
        f"{fence}json\n{body}\n{fence}\n\n</details>\n"
    )


def _fence(body: str) -> str:
    """A backtick fence longer than any backtick run in `body` (a witness string may hold backticks)."""
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(body)), default=0)
    return "`" * max(3, longest + 1)


def witness_json(witness: JSON) -> str:
    """The witness as it appears in its fenced block."""
    return json.dumps(witness, indent=2, sort_keys=True, ensure_ascii=False)
