"""Usage records (`.quiver/usage/<agent>.jsonl`, written by the gateway's recorder): the one reader.

One JSON object per line, `{"v": 1, "event": ..., ...}`; a line that is not one is skipped with its
file:line and reason, never fatal (a write may have been cut short). runtime/usage.py writes the files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

USAGE_DIR = ".quiver/usage"
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class UsageLog:
    """The events of the usage files read, in file order, and the lines that were not events."""

    events: tuple[dict[str, Any], ...]
    skipped: tuple[str, ...]  # "file:line: why"
    files: tuple[str, ...]


def read_usage(path: Path) -> UsageLog:
    """Read one usage file, or every `*.jsonl` of a directory (sorted). A missing path reads as empty."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".jsonl" and p.is_file())
    elif path.is_file():
        files = [path]
    else:
        files = []
    events: list[dict[str, Any]] = []
    skipped: list[str] = []
    for file in files:
        for item in _iter_file(file):
            if isinstance(item, str):
                skipped.append(item)
            else:
                events.append(item)
    return UsageLog(tuple(events), tuple(skipped), tuple(str(f) for f in files))


def _iter_file(file: Path) -> Iterator[dict[str, Any] | str]:
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            where = f"{file}:{number}"
            try:
                value = json.loads(raw)
            except (UnicodeDecodeError, ValueError, RecursionError):
                yield f"{where}: not a JSON line (a write cut short?)"
                continue
            if not isinstance(value, dict) or not isinstance(value.get("event"), str):
                yield f"{where}: not a usage event"
            elif value.get("v") != FORMAT_VERSION:
                yield f"{where}: usage format version {value.get('v')!r}, this quiver reads {FORMAT_VERSION}"
            else:
                yield value
