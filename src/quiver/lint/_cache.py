"""A result cache for per-tool checks whose outcome depends only on the tool's definition.

Keyed by server, tool sha256 and quiver's version, stored in `.quiver/cache/` (git-ignored;
`QUIVER_NO_CACHE=1` stops writing it). A warm `quiver lint` then skips the JSON Schema meta-checks
and never imports jsonschema (0.1 s of start-up).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from quiver import __version__
from quiver.model import Finding, LockedTool

CACHE_FILE = ".quiver/cache/tool-checks.json"


class ToolCheckCache:
    def __init__(self, root: Path) -> None:
        self.path = root / CACHE_FILE
        self.dirty = False
        self.entries: dict[str, list[dict[str, str | None]]] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") == __version__:
                self.entries = data["entries"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.entries = {}

    def findings(self, tool: LockedTool, compute: Callable[[LockedTool], Iterable[Finding]]) -> list[Finding]:
        key = f"{tool.server}\x1f{tool.sha256}"
        cached = self.entries.get(key)
        if cached is None:
            found = list(compute(tool))
            self.entries[key] = [
                {"rule": f.rule, "name": f.name, "severity": f.severity, "message": f.message, "hint": f.hint}
                for f in found
            ]
            self.dirty = True
            return found
        return [
            Finding(
                rule=str(e["rule"]),
                name=str(e["name"]),
                severity=e["severity"],  # type: ignore[arg-type]
                message=str(e["message"]),
                hint=e["hint"],
                location=tool.location,
                server=tool.server,
                tool=tool.name,
            )
            for e in cached
        ]

    def save(self) -> None:
        if not self.dirty or os.environ.get("QUIVER_NO_CACHE"):
            return
        from quiver.sources.files import write_atomic

        text = json.dumps({"version": __version__, "entries": self.entries}, sort_keys=True, separators=(",", ":"))
        try:
            write_atomic(self.path, text + "\n")
        except OSError:
            return  # a cache that cannot be written only costs time
