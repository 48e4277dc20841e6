"""Point findings at a nested value: the readers keep positions of top-level keys only, so search the text.

Each file is read at most once per lint run (cached per `Sources`), and only when a finding needs a
position below the key the model records.
"""

from __future__ import annotations

from quiver.lint.engine import LintContext
from quiver.model import Location

MAX_LINES = 400  # how far below the starting key a search may look


class Sources:
    """Lines of project files, read lazily through the lint context and kept for the run."""

    def __init__(self, ctx: LintContext) -> None:
        self._ctx = ctx
        self._lines: dict[str, list[str]] = {}

    def lines(self, rel: str) -> list[str]:
        cached = self._lines.get(rel)
        if cached is None:
            cached = self._ctx.source(rel).split("\n")
            self._lines[rel] = cached
        return cached

    def line(self, rel: str, number: int) -> str:
        lines = self.lines(rel)
        return lines[number - 1] if 0 < number <= len(lines) else ""

    def find(self, start: Location, *needles: str) -> Location:
        """The first of `needles` found in order, each searched from `start` onward; else `start`."""
        at = start
        skip = 0
        for needle in needles:
            found = self._search(Location(at.file, at.line, at.column + skip), needle)
            if found is None:
                return at
            at, skip = found, len(needle)
        return at

    def find_any(self, start: Location, needle: str) -> Location | None:
        return self._search(start, needle)

    def _search(self, start: Location, needle: str) -> Location | None:
        if not needle or start.line <= 0:
            return None
        lines = self.lines(start.file)
        first = start.line - 1
        for index in range(first, min(len(lines), first + MAX_LINES)):
            column = lines[index].find(needle, max(start.column - 1, 0) if index == first else 0)
            if column >= 0:
                return Location(start.file, index + 1, column + 1)
        return None
