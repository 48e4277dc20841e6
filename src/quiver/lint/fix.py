"""`quiver lint --fix`: apply the safe textual edits that findings carry.

Edits are grouped per file. A finding's edits are applied all together or not at all; a finding whose
edits overlap an accepted one (or fall outside the file) is skipped, to be fixed on a later run. Edits
are applied bottom-up so earlier positions stay valid, and everything else in the file - line endings,
a byte-order mark, comments - is left byte for byte as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from quiver.model import Edit, Finding
from quiver.sources.files import write_atomic

_BOM = "\ufeff"


def _line_starts(text: str) -> list[int]:
    """Offset of the first character of every line ("\\n" ends a line; a "\\r" before it stays in the line)."""
    starts = [0]
    index = text.find("\n")
    while index >= 0:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def _offset(text: str, starts: list[int], line: int, column: int) -> int | None:
    """Offset of a 1-based line/column as the readers count them (BOM and "\\r" not counted), or None."""
    if not 0 < line <= len(starts) or column < 1:
        return None
    start = starts[line - 1]
    if line == 1 and text.startswith(_BOM):
        start += 1
    end = starts[line] - 1 if line < len(starts) else len(text)
    if end > start and text[end - 1] == "\r" and line < len(starts):
        end -= 1
    offset = start + column - 1
    return offset if offset <= end else None


def _spans(text: str, starts: list[int], edits: Sequence[Edit]) -> list[tuple[int, int, str]] | None:
    spans = []
    for edit in edits:
        begin = _offset(text, starts, edit.line, edit.column)
        end = _offset(text, starts, edit.end_line, edit.end_column)
        if begin is None or end is None or end < begin:
            return None
        spans.append((begin, end, edit.text))
    return spans


def _overlaps(span: tuple[int, int, str], taken: list[tuple[int, int, str]]) -> bool:
    begin, end, _ = span
    for other_begin, other_end, _ in taken:
        if begin < other_end and other_begin < end:
            return True
        if begin == end == other_begin or other_begin == other_end == begin:
            return True  # two insertions at one point: their order would be arbitrary
    return False


def apply_fixes(root: Path, findings: Sequence[Finding]) -> int:
    """Apply every finding's edits under `root`; return how many findings were fixed."""
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.fixes:
            files = {edit.file for edit in finding.fixes}
            if len(files) == 1:  # a fix spanning files cannot be applied atomically
                by_file.setdefault(files.pop(), []).append(finding)
    fixed = 0
    for rel in sorted(by_file):
        path = root / rel
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        starts = _line_starts(text)
        taken: list[tuple[int, int, str]] = []
        count = 0
        for finding in by_file[rel]:
            spans = _spans(text, starts, finding.fixes)
            if spans is None or any(_overlaps(s, taken) for s in spans):
                continue
            if any(_overlaps(a, spans[i + 1 :]) for i, a in enumerate(spans)):
                continue
            taken.extend(spans)
            count += 1
        if not count:
            continue
        out = text
        for begin, end, replacement in sorted(taken, key=lambda s: (s[0], s[1]), reverse=True):
            out = out[:begin] + replacement + out[end:]
        if out != text:
            write_atomic(path, out)
        fixed += count
    return fixed
