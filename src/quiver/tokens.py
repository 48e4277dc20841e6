"""Token counting (DESIGN §4): exact o200k_base counts from a vocabulary shipped in a wheel, offline.

Loading the vocabulary costs about half a second, so it happens lazily and only on a cache miss:
lock files carry each tool's count, and other strings are cached by sha256 in `.quiver/cache`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from quiver.model import JSON

ENCODING = "o200k_base"


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class _Quicktok:
    def __init__(self) -> None:
        import quicktok

        self._enc = quicktok.get_encoding(ENCODING)
        self.name = f"{ENCODING} (quicktok {quicktok.__version__})"

    def count(self, text: str) -> int:
        return len(self._enc.encode(text))


class _Estimate:
    """Documented fallback when no exact tokenizer is installed: one token per 4 UTF-8 bytes, rounded up."""

    name = "estimate (utf-8 bytes / 4)"

    def count(self, text: str) -> int:
        return -(-len(text.encode("utf-8")) // 4)


_COUNTER: TokenCounter | None = None


def counter() -> TokenCounter:
    """The exact counter when the tokenizer wheel is installed, else the estimate. Loaded once."""
    global _COUNTER
    if _COUNTER is None:
        try:
            _COUNTER = _Quicktok()
        except ImportError:
            _COUNTER = _Estimate()
    return _COUNTER


@functools.cache
def encoder_name() -> str:
    """The encoder's name without loading its vocabulary."""
    try:
        from importlib.metadata import version

        return f"{ENCODING} (quicktok {version('quicktok-v1')})"
    except Exception:
        return _Estimate.name


def compact(value: JSON) -> str:
    """Compact JSON as a model reads it: no spaces, non-ASCII kept, key order as given."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tool_payload(tool: Mapping[str, JSON]) -> dict[str, JSON]:
    """What a model reads of one tool: name, description and inputSchema, in that order."""
    out: dict[str, JSON] = {"name": tool.get("name")}
    if tool.get("description") is not None:
        out["description"] = tool.get("description")
    out["inputSchema"] = tool.get("inputSchema", {"type": "object"})
    return out


def count_tool(tool: Mapping[str, JSON]) -> int:
    return counter().count(compact(tool_payload(tool)))


def count_tools_payload(tools: list[Mapping[str, JSON]]) -> int:
    """Tokens of `{"tools":[...]}` for these tools, as one request would carry them."""
    return counter().count(compact({"tools": [tool_payload(t) for t in tools]}))


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
        from quiver.sources.files import write_cache

        data = {"encoder": encoder_name(), "counts": dict(sorted(self._data.items()))}
        try:
            write_cache(self.path, json.dumps(data, separators=(",", ":")) + "\n")
        except OSError:
            return  # a cache that cannot be written only costs time
        self.dirty = False
