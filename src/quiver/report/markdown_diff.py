"""`quiver diff --format markdown`: a pull-request comment that fits one screen, details collapsed.

On top, one row per change: the same change in several tools (the same rule and message but for the tool and
the path it is at) is one row listing the tools it touches; errors and warnings first, at most MAX_ROWS of
them, and the informational changes counted in one line. Below, in one collapsed `<details>`: a table per
tool with every finding, location and hint, each witness in a fenced JSON block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from quiver.model import Finding
from quiver.report import _summary
from quiver.report._markdown import cell, table, witness_block

MAX_ROWS = 15
# the first backticked path of a message: `labels[].confidence`, `fields[0].name`, `state`
_NAME = r"[A-Za-z0-9_$@-]+(?:\[\d*\])*"
_PATH = re.compile(rf"`({_NAME}(?:\.{_NAME})*)`")
_PARTS = re.compile(r"[.\]\[]+")


@dataclass(frozen=True, slots=True)
class Change:
    """Findings that report one change: the same rule and message in one or more tools."""

    severity: str
    rule: str
    name: str
    message: str  # without the tool, the path cut to its last part when the tools' paths differ
    findings: tuple[Finding, ...]


def render(findings: Sequence[Finding], tail: str) -> str:
    """The report (`tail`: the counts' parenthesised notes, or "")."""
    parts = ["## quiver diff\n"]
    if not findings:
        return "\n".join([*parts, f"No findings{tail}.\n"])
    tools = {_title(f) for f in findings}
    parts.append(f"**{_summary.count_phrase(findings)}**{tail} in {_count(len(tools), 'tool')}\n")
    changes = group(findings)
    serious = [c for c in changes if c.severity != "info"]
    info = [c for c in changes if c.severity == "info"]
    rows = [_change_row(c) for c in serious[:MAX_ROWS]]
    if len(serious) > MAX_ROWS:
        rest = serious[MAX_ROWS:]
        rows.append(f"| | | {len(rest)} more errors and warnings, in the details below | |\n")
    if info:
        rows.append(_info_row(info))
    parts.append("| severity | rule | change | tools |\n| --- | --- | --- | --- |\n" + "".join(rows))
    parts.append(_details(findings))
    return "\n".join(parts)


def group(findings: Sequence[Finding]) -> list[Change]:
    """One Change per rule and message (tool and path aside), most severe first, then by rule, then message."""
    keyed: dict[tuple[str, str, str], list[Finding]] = {}
    for finding in findings:
        keyed.setdefault((finding.severity, finding.rule, _key(_untooled(finding))), []).append(finding)
    order = {severity: i for i, severity in enumerate(_summary.SEVERITIES)}
    out = []
    for (severity, rule, _), members in keyed.items():
        messages = {_untooled(f) for f in members}
        shown = messages.pop() if len(messages) == 1 else _key(min(messages))
        out.append(Change(severity, rule, members[0].name, shown, tuple(members)))
    return sorted(out, key=lambda c: (order.get(c.severity, 9), c.rule, c.message))


def _untooled(finding: Finding) -> str:
    """The message without the tool it is about: `tool `s/x`: ` dropped, `tool `s/x`` elsewhere as `the tool`."""
    if not finding.tool:
        return finding.message
    names = [f"{finding.server}/{finding.tool}", finding.tool] if finding.server else [finding.tool]
    for own in (f"tool `{name}`" for name in names):
        if finding.message.startswith(own + ": "):
            return finding.message[len(own) + 2 :]
        if own in finding.message:
            return finding.message.replace(own, "the tool", 1)
    return finding.message


def _key(message: str) -> str:
    """A message without its tool, its first path cut to the last part (`labels[].confidence` ->
    `confidence`): what the same change says in every tool it touches."""
    return _PATH.sub(_last_part, message, 1)


def _last_part(match: re.Match[str]) -> str:
    parts = [p for p in _PARTS.split(match.group(1)) if p]
    return f"`{parts[-1]}`" if parts else match.group(0)


def _change_row(change: Change) -> str:
    where = [f"`{_title(f)}`" + _path_note(f, change) for f in change.findings]
    hint = change.findings[0].hint if len(change.findings) == 1 and change.findings[0].hint else ""
    text = cell(change.message) + (f"<br>hint: {cell(hint)}" if hint else "")
    return f"| {change.severity} | `{change.rule}` {change.name} | {text} | {', '.join(where)} |\n"


def _path_note(finding: Finding, change: Change) -> str:
    """` (at `fields[].confidence`)` when the finding's path is longer than the one the row shows."""
    own = _PATH.search(_untooled(finding))
    shown = _PATH.search(change.message)
    if own is None or shown is None or own.group(1) == shown.group(1):
        return ""
    return f" (at `{own.group(1)}`)"


def _info_row(info: Sequence[Change]) -> str:
    total = sum(len(c.findings) for c in info)
    counts: dict[tuple[str, str], int] = {}
    for change in info:
        counts[(change.rule, change.name)] = counts.get((change.rule, change.name), 0) + len(change.findings)
    listed = ", ".join(f"`{rule}` {name} x{n}" for (rule, name), n in sorted(counts.items()))
    return f"| info | | {_count(total, 'informational finding')}: {listed} | see the details |\n"


def _details(findings: Sequence[Finding]) -> str:
    body: list[str] = []
    for title, members in _by_tool(findings):
        body.append(f"### `{title}`\n")
        body.append(table(members))
        body.extend(witness_block(f) for f in members if f.witness is not None)
    summary = f"Every finding by tool, with locations, hints and witnesses ({len(findings)})"
    return f"<details><summary>{summary}</summary>\n\n" + "\n".join(body) + "\n</details>\n"


def _by_tool(findings: Sequence[Finding]) -> list[tuple[str, list[Finding]]]:
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(_title(finding), []).append(finding)
    return list(groups.items())


def _title(finding: Finding) -> str:
    if finding.tool:
        return f"{finding.server}/{finding.tool}" if finding.server else finding.tool
    if finding.server:
        return f"server {finding.server}"
    return f"agent {finding.agent}" if finding.agent else "other"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
