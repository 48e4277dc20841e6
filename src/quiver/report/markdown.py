"""`--format markdown`: a PR comment or `$GITHUB_STEP_SUMMARY` section.

A title, the counts by severity, then a table (severity, rule, location, message). Diff findings get one
table per tool, each followed by its witnesses in collapsed `<details>` blocks holding a fenced JSON value.
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
    parts = [f"## quiver {ctx.tool}\n"]
    notes = _summary.extras(findings, ctx.summary, tool=ctx.tool)
    tail = f" ({'; '.join(notes)})" if notes else ""
    if not findings:
        parts.append(f"No findings{tail}.\n")
        return "\n".join(parts)
    parts.append(f"**{_summary.count_phrase(findings)}**{tail}\n")
    if ctx.tool == "diff":
        for title, group in _by_tool(findings):
            parts.append(f"### {title}\n")
            parts.append(_table(group))
            parts.extend(_details(f) for f in group if f.witness is not None)
    else:
        parts.append(_table(findings))
    return "\n".join(parts)


def _table(findings: Sequence[Finding]) -> str:
    return HEADER + "".join(_row(f) for f in findings)


def _row(finding: Finding) -> str:
    location = f"`{finding.location}`" if finding.location else ""
    message = _cell(finding.message)
    if finding.hint:
        message += "<br>hint: " + _cell(finding.hint)
    return f"| {finding.severity} | `{finding.rule}` {finding.name} | {_cell(location)} | {message} |\n"


def _cell(text: str) -> str:
    """Text safe inside a table cell: `|` escaped, line breaks as `<br>`."""
    return text.replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")


def _by_tool(findings: Sequence[Finding]) -> list[tuple[str, list[Finding]]]:
    """Group by `server/tool` (or server, or agent), in order of first appearance."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.tool:
            title = f"`{finding.server}/{finding.tool}`" if finding.server else f"`{finding.tool}`"
        elif finding.server:
            title = f"server `{finding.server}`"
        elif finding.agent:
            title = f"agent `{finding.agent}`"
        else:
            title = "other"
        groups.setdefault(title, []).append(finding)
    return list(groups.items())


def _details(finding: Finding) -> str:
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
