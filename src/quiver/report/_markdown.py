"""The markdown pieces both markdown reports use (`markdown.py` for lint, `markdown_diff.py` for diff): the
findings table, a table cell, a finding's witness block."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from quiver.model import JSON, Finding

HEADER = "| severity | rule | location | message |\n| --- | --- | --- | --- |\n"
_BACKTICKS = re.compile(r"`+")


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
