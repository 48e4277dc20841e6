"""Token counting (DESIGN §4): exact o200k_base counts with tiktoken and a vocabulary shipped here, offline.

The vocabulary is OpenAI's `o200k_base.tiktoken`, byte for byte (sha256 pinned below, the hash tiktoken
itself pins), gzipped in `quiver/data/` and rebuilt from a pinned upstream artifact by
`scripts/fetch-o200k.py` (licenses: THIRD-PARTY-NOTICES.md). Loading it costs about 0.3 s, so it happens
lazily and only on a cache miss: lock files carry each tool's count, and other strings are cached by
sha256 in `.quiver/cache`.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from quiver.errors import InputError
from quiver.model import JSON

ENCODING = "o200k_base"
VOCABULARY = Path(__file__).with_name("data") / "o200k_base.tiktoken.gz"
VOCABULARY_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # of the file unzipped
# o200k_base's pre-tokenizer pattern and special tokens, as tiktoken_ext/openai_public.py defines them
# (tests/test_tokens.py checks them against tiktoken's own definition).
PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class VocabularyError(InputError):
    """The packaged vocabulary is not the pinned file (a broken install): one line, exit 2."""


def mergeable_ranks() -> dict[bytes, int]:
    """The o200k_base ranks from the packaged file, after checking its sha256."""

    data = gzip.decompress(VOCABULARY.read_bytes())
    if hashlib.sha256(data).hexdigest() != VOCABULARY_SHA256:
        raise VocabularyError(
            f"{VOCABULARY} is not the pinned o200k_base vocabulary",
            hint="reinstall agent-quiver (`pip install --force-reinstall agent-quiver`)",
        )
    fields = data.split()  # `base64-token rank` lines, as tiktoken's load_tiktoken_bpe reads them
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


class _Tiktoken:
    name = f"{ENCODING} (tiktoken)"  # counts depend on the pinned vocabulary, not on tiktoken's version

    def __init__(self) -> None:
        import tiktoken

        self._enc = tiktoken.Encoding(
            ENCODING, pat_str=PATTERN, mergeable_ranks=mergeable_ranks(), special_tokens=SPECIAL_TOKENS
        )

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))  # special-token text counts as the text it is


class _Estimate:
    """Documented fallback when no exact tokenizer is installed: one token per 4 UTF-8 bytes, rounded up."""

    name = "estimate (utf-8 bytes / 4)"

    def count(self, text: str) -> int:
        return -(-len(text.encode("utf-8")) // 4)


_COUNTER: TokenCounter | None = None


def counter() -> TokenCounter:
    """The exact counter when tiktoken is installed, else the estimate. Loaded once."""
    global _COUNTER
    if _COUNTER is None:
        try:
            _COUNTER = _Tiktoken()
        except ImportError:
            _COUNTER = _Estimate()
    return _COUNTER


@functools.cache
def encoder_name() -> str:
    """The encoder's name without loading its vocabulary."""

    return _Tiktoken.name if importlib.util.find_spec("tiktoken") is not None else _Estimate.name


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
