"""The capability cache (`.quiver/cache/capabilities.json`): each tool's derived labels and reasons, so repeat
runs skip the classifier. Its one reader and writer; git-ignored; `QUIVER_NO_CACHE=1` stops writing it.

Keyed by what the classification reads (server, tool sha256, and a digest of the server's own description
and the configured side-effect class) under quiver's version: another quiver, another classifier. The
config's `capabilities` overrides are applied after, never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from quiver import __version__
from quiver.sources.files import write_cache

CAPABILITY_CACHE_FILE = ".quiver/cache/capabilities.json"
Entry = list[list[str]]  # [[label, reason, origin], ...]


def cache_key(server: str, sha256: str, about: str, side_effect: str | None) -> str:
    context = hashlib.sha256(f"{about}\x1f{side_effect or ''}".encode()).hexdigest()[:16]
    return f"{server}\x1f{sha256}\x1f{context}"


class CapabilityCache:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.dirty = False
        self._data: dict[str, Entry] = {}
        if path is not None and path.is_file():
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(loaded, dict) and loaded.get("version") == __version__:
                    entries = loaded.get("entries")
                    self._data = entries if isinstance(entries, dict) else {}
            except (OSError, ValueError):
                self._data = {}

    def get(self, key: str) -> Entry | None:
        found = self._data.get(key)
        if isinstance(found, list) and all(isinstance(r, list) and len(r) == 3 for r in found):
            return found
        return None

    def put(self, key: str, entry: Entry) -> None:
        self._data[key] = entry
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty or os.environ.get("QUIVER_NO_CACHE"):
            return
        data = {"version": __version__, "entries": dict(sorted(self._data.items()))}
        try:
            write_cache(self.path, json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n")
        except OSError:
            return  # a cache that cannot be written only costs time
        self.dirty = False
