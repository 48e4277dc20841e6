"""Where in its file each tool of a diff side is written, down to the keyword a finding is about.

A side records, per tool, the file it was read from and the tool's JSON pointer there (`ToolSource`): `()`
for a snapshot file, `("tools", 3)` in a tools/list, a lock's `("servers", s, "tools", i, "tool")` (found by
server and name on first use). `Places` turns a source into a `Locator`: a pointer inside the tool to a
`Location` in the file, the deepest part of the pointer the file has (never outside the tool). Each file is
read and scanned once, and only when a finding asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from quiver.contract.positions import Pointer, Positions, locate, positions
from quiver.errors import InputError
from quiver.model import JSON, Location

Locator = Callable[[Pointer], Location | None]


@dataclass(frozen=True, slots=True)
class ToolSource:
    """The file one tool was read from (`shown` as reports name it; read from `path` on disk, or `text` as read
    from git) and the tool's pointer there (None in a lock: looked up by `server` and `tool`)."""

    shown: str
    path: Path | None = None
    text: str | None = None
    base: Pointer | None = None
    server: str = ""
    tool: str = ""


class Places:
    """Locators for the tools of the sides of one diff, sharing one scan per file."""

    def __init__(self) -> None:
        self._positions: dict[str, Positions] = {}
        self._lock_bases: dict[str, dict[tuple[str, str], Pointer]] = {}

    def locator(self, source: ToolSource | None) -> Locator | None:
        if source is None:
            return None

        def at(pointer: Pointer) -> Location | None:
            base = source.base if source.base is not None else self._lock_base(source)
            if base is None:
                return None
            hit = locate(self._scan(source), (*base, *pointer), floor=len(base))
            return None if hit is None else Location(source.shown, hit[0], hit[1])

        return at

    def _scan(self, source: ToolSource) -> Positions:
        key = _key(source)
        if key not in self._positions:
            text = _text(source)
            self._positions[key] = positions(text) if text is not None else {}
        return self._positions[key]

    def _lock_base(self, source: ToolSource) -> Pointer | None:
        key = _key(source)
        if key not in self._lock_bases:
            self._lock_bases[key] = _lock_index(_text(source))
        return self._lock_bases[key].get((source.server, source.tool))


def _key(source: ToolSource) -> str:
    return str(source.path) if source.path is not None else f"git:{source.shown}:{id(source.text)}"


def _text(source: ToolSource) -> str | None:
    from quiver.sources.files import MAX_LOCK_BYTES, read_text

    if source.text is not None or source.path is None:
        return source.text
    try:
        return read_text(source.path, source.shown, limit=MAX_LOCK_BYTES)
    except (InputError, OSError):
        return None  # the file changed or went since it was read: the finding keeps its tool's place


def _lock_index(text: str | None) -> dict[tuple[str, str], Pointer]:
    """{(server, tool): the tool's pointer} in a lock's text."""
    from quiver.sources._json import load_json_fast

    if text is None:
        return {}
    try:
        data: JSON = load_json_fast(text, "lock")
    except InputError:
        return {}
    servers = data.get("servers") if isinstance(data, dict) else None
    out: dict[tuple[str, str], Pointer] = {}
    for server, entry in servers.items() if isinstance(servers, dict) else ():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        for index, item in enumerate(tools if isinstance(tools, list) else ()):
            tool = item.get("tool") if isinstance(item, dict) else None
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                out.setdefault((str(server), tool["name"]), ("servers", str(server), "tools", index, "tool"))
    return out
