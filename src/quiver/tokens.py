"""Token counting (DESIGN §4): exact o200k_base counts from a vocabulary shipped in a wheel, offline.

Loading the vocabulary costs about half a second, so it happens lazily and only on a cache miss:
lock files carry each tool's count, and other strings are cached by sha256 in `.quiver/cache`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
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
