"""The token cache (`.quiver/cache/tokens.json`): counts of strings by sha256, so repeat runs skip the
tokenizer. Its one reader and writer; git-ignored; `QUIVER_NO_CACHE=1` stops writing it."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from quiver.model import JSON
from quiver.sources.files import write_cache
from quiver.tokens import compact, counter, encoder_name

TOKEN_CACHE_FILE = ".quiver/cache/tokens.json"


class TokenCache:
    """Counts strings, remembering them by sha256 in a JSON file so repeat runs skip the tokenizer."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.dirty = False
        self._data: dict[str, int] = {}
        if path is not None and path.is_file():
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(loaded, dict) and loaded.get("encoder") == encoder_name():
                    self._data = {k: v for k, v in loaded.get("counts", {}).items() if isinstance(v, int)}
            except (OSError, ValueError):
                self._data = {}

    def count(self, text: str) -> int:
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if key not in self._data:
            self._data[key] = counter().count(text)
            self.dirty = True
        return self._data[key]

    def count_json(self, value: JSON) -> int:
        return self.count(compact(value))

    def save(self) -> None:
        if self.path is None or not self.dirty or os.environ.get("QUIVER_NO_CACHE"):
            return
        data = {"encoder": encoder_name(), "counts": dict(sorted(self._data.items()))}
        try:
            write_cache(self.path, json.dumps(data, separators=(",", ":")) + "\n")
        except OSError:
            return  # a cache that cannot be written only costs time
        self.dirty = False
