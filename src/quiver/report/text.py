"""`--format text` (the default): findings grouped by file, each with its source line and a caret.

    .github/agents/triage.agent.md:3:9: error[AGT008] `github/serch_issues` matches no tool of any visible server
      3 | tools: ["github/serch_issues", "time/now"]
        |         ^~~~~~~~~~~~~~~~~~~~~
      hint: did you mean `github/search_issues`?

Columns are 1-based; `end_column` is exclusive. ANSI colour only when `ctx.color`. The caret is placed
by display width (wide characters take two cells, combining marks none), and a source line wider than
the terminal (`ctx.width`, else the terminal's width when colouring a terminal) is cut to a window
around the caret (`...` marks the cuts; tabs become 4 spaces), so the terminal never wraps the line and
the caret stays under its column. A closing line counts
what was found (`Found 3 errors, 2 warnings (...)`) or says `All checks passed.`. Diff findings that carry
a witness print it compactly under the finding.
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from quiver.model import JSON, SEVERITY_ORDER, Finding
from quiver.report import _summary
from quiver.report.context import ReportContext
from quiver.sources.files import read_bytes

MAX_SOURCE_BYTES = 5 * 1024 * 1024  # larger files are not quoted
SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "blue"}
WITNESS_KEYS = ("arguments", "result")
_CONTROL = {c: "?" for c in [*range(0x20), 0x7F] if c != 0x09}  # quoted source never carries escapes
ELLIPSIS = "..."
TAB = "    "

Paint = Callable[..., str]


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    paint = _painter(ctx.color)
    sources = _SourceCache(ctx.root)
    diff = ctx.tool == "diff"
    width = ctx.width if ctx.width is not None else (shutil.get_terminal_size((0, 0)).columns if ctx.color else 0)
    blocks = [_finding(f, sources, paint, diff=diff, width=width) for group in _by_file(findings) for f in group]
    closing = _summary.summary_line(findings, ctx.summary, tool=ctx.tool, nothing=ctx.nothing)
    worst = max((f.severity for f in findings), key=lambda sev: SEVERITY_ORDER[sev], default=None)
    closing = paint(closing, fg=SEVERITY_COLOR[worst] if worst else ("yellow" if ctx.nothing else "green"), bold=True)
    return "\n".join([*blocks, closing + "\n"])


def _painter(color: bool) -> Paint:
    if color:
        return click.style

    def plain(text: str, **_: object) -> str:
        return text

    return plain


def _by_file(findings: Sequence[Finding]) -> list[list[Finding]]:
    """Group by file, files in order of first appearance, findings in the order given."""
    groups: dict[str | None, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.location.file if finding.location else None, []).append(finding)
    return list(groups.values())


def _finding(finding: Finding, sources: _SourceCache, paint: Paint, *, diff: bool, width: int) -> str:
    color = SEVERITY_COLOR.get(finding.severity, "red")
    head = paint(f"{finding.severity}[{finding.rule}]", fg=color, bold=True) + f" {finding.message}"
    loc = finding.location
    lines = [f"{paint(str(loc), bold=True)}: {head}" if loc else head]
    if loc is not None and loc.line > 0:
        source = sources.line(loc.file, loc.line)
        if source is not None:
            span = _span(loc.column, loc.line, loc.end_line, loc.end_column)
            lines.extend(_snippet(source, loc.line, loc.column, span, paint, color, width))
    if finding.hint:
        lines.append(f"  {paint('hint', fg='cyan', bold=True)}: {finding.hint}")
    if diff and finding.witness is not None:
        lines.append(f"  {paint('witness', fg='cyan', bold=True)}{_witness(finding.witness)}")
    return "".join(line + "\n" for line in lines)


def _span(column: int, line: int, end_line: int, end_column: int) -> int:
    """How many characters the caret covers: to `end_column` (exclusive) when it is on the same line, else 1."""
    if end_line == line and end_column > column:
        return end_column - column
    return 1


def _snippet(source: str, line: int, column: int, span: int, paint: Paint, color: str, terminal: int = 0) -> list[str]:
    number = str(line)
    gutter = " " * (len(number) + 3)
    room = terminal - len(gutter) - 2 if terminal else 0
    if room > 0 and _cells(source) > room:
        source, column, span = _window(source, max(column, 1), span, room)
    out = [f"{paint(f'  {number} |', fg='blue', bold=True)} {source}".rstrip()]
    if column > 0:
        # keep tabs so the caret lines up under a tab-indented source line
        pad = "".join("\t" if ch == "\t" else " " * _cell(ch) for ch in source[: column - 1])
        pad += " " * max(0, column - 1 - len(source))
        marked = source[column - 1 : column - 1 + span]
        caret_width = max(1, _cells(marked) + max(0, span - len(marked)))
        caret = "^" + "~" * (caret_width - 1)
        out.append(f"{paint(gutter + '|', fg='blue', bold=True)} {pad}{paint(caret, fg=color, bold=True)}")
    return out


def _cell(ch: str) -> int:
    """Terminal cells of one character: 2 for wide (East Asian W/F), 0 for combining marks, else 1."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _cells(text: str) -> int:
    return sum(4 if ch == "\t" else _cell(ch) for ch in text)


def _window(source: str, column: int, span: int, room: int) -> tuple[str, int, int]:
    """A slice of `source` at most `room` cells wide that shows the caret: (text, column, span)."""
    start = column - 1
    text = source[:start].replace("\t", TAB)
    start = len(text)
    text += source[column - 1 :].replace("\t", TAB)
    span = max(1, min(span, len(text) - start))
    lead = ""
    first = 0
    if _cells(text[: start + span]) > room - len(ELLIPSIS):
        # cut the left so the caret starts a third of the way in (all of it shown when it fits)
        keep = max(room // 3, room - len(ELLIPSIS) * 2 - _cells(text[start : start + span]))
        first = start
        while first > 0 and _cells(text[first - 1 : start]) <= keep:
            first -= 1
        lead = ELLIPSIS
    body = text[first:]
    budget = room - len(lead)
    end = 0
    while end < len(body) and _cells(body[: end + 1]) <= budget:
        end += 1
    tail = ""
    if end < len(body):
        while end > 0 and _cells(body[:end]) > budget - len(ELLIPSIS):
            end -= 1
        tail = ELLIPSIS
    shown = lead + body[:end] + tail
    new_column = len(lead) + (start - first) + 1
    return shown, new_column, max(1, min(span, end - (start - first)))


def _witness(witness: JSON) -> str:
    """` (arguments): {"owner": "a"}` for contract witnesses, `: <json>` for anything else."""
    if isinstance(witness, dict) and len(witness) == 1:
        ((key, value),) = witness.items()
        if key in WITNESS_KEYS:
            return f" ({key}): {_compact(value)}"
    return f": {_compact(witness)}"


def _compact(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)


class _SourceCache:
    """Project files read once each, split into lines; unreadable or huge files quote nothing."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._files: dict[str, list[str] | None] = {}

    def line(self, rel: str, number: int) -> str | None:
        if rel not in self._files:
            self._files[rel] = self._read(rel)
        lines = self._files[rel]
        if lines is None or not 0 < number <= len(lines):
            return None
        return lines[number - 1]

    def _read(self, rel: str) -> list[str] | None:
        path = self._root / rel
        try:
            data = read_bytes(path, limit=MAX_SOURCE_BYTES)
        except OSError:
            return None
        text = data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n")
        return [line.translate(_CONTROL) for line in text.split("\n")]
