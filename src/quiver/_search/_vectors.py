"""The tool vector cache: each text the model reads is encoded once per model and kept in `.quiver/cache/`.

One file per model id, `.quiver/cache/vectors/<model id>.f32`: a header line, a JSON line with the sorted
keys, then float32 rows in key order (little-endian). A key is the sha256 of the text the model reads
(a tool's name and description, or one of its examples), so an unchanged tool is never encoded again and a
changed one is. Reading it needs neither numpy nor the model: `quiver lint` with a warm cache stays light.
`QUIVER_NO_CACHE=1` stops writing (reads still happen). The file is replaced atomically; two processes
warming it at once can only lose each other's new entries, which are then encoded again next time.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from quiver._search._embed_id import DIM, MODEL_ID

CACHE_DIR = ".quiver/cache/vectors"
MAGIC = b"quiver-vectors 1\n"
MAX_ENTRIES = 200_000  # older entries beyond this are dropped when the file is written
# What this process encoded, by model id: one process never encodes a text twice, cache file or not.
_MEMO: dict[str, dict[str, tuple[float, ...]]] = {}
MEMO_LIMIT = 5_000  # vectors (about 12 KB each as tuples) kept by the memo at most
Vector = tuple[float, ...]
Encoder = Callable[[Sequence[str]], list[Vector]]


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class VectorCache:
    """Vectors by text key for one model; `root=None` keeps them in memory only.

    The file's rows stay one float32 array (`_base`, with `_index` from key to row) until a vector is asked
    for: checking what is missing and writing the file back never turn them into Python floats, so reading a
    cache of 15,000 vectors costs its JSON key line and 23 MB, not 180 MB of tuples."""

    __slots__ = ("_base", "_dirty", "_index", "_rows", "model_id", "path")

    def __init__(self, root: Path | None, model_id: str = MODEL_ID) -> None:
        self.model_id = model_id
        self.path = root / CACHE_DIR / f"{model_id}.f32" if root is not None else None
        self._index: dict[str, int] = {}
        self._base = array.array("f")
        self._rows: dict[str, Vector] = {}  # added by this process (never a key of `_index`)
        self._dirty = False
        if self.path is not None:
            self._index, self._base = _read(self.path)

    def __len__(self) -> int:
        return len(self._index) + len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows or key in self._index

    def _get(self, key: str) -> Vector | None:
        row = self._rows.get(key)
        if row is not None:
            return row
        i = self._index.get(key)
        return None if i is None else tuple(self._base[i * DIM : (i + 1) * DIM].tolist())

    def get(self, text: str) -> Vector | None:
        return self._get(text_key(text))

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts of `texts` not in the cache, in first-seen order."""
        seen: dict[str, None] = {}
        for text in texts:
            if text_key(text) not in self:
                seen.setdefault(text, None)
        return list(seen)

    def vectors(self, texts: Sequence[str], encode: Encoder | None = None) -> list[Vector | None]:
        """One vector per text: cached ones as stored, the rest from `encode` (then cached) or None."""
        todo = self.missing(texts)
        if todo:
            memo = _MEMO.setdefault(self.model_id, {})
            for text in todo:
                seen = memo.get(text_key(text))
                if seen is not None:
                    self._rows[text_key(text)] = seen
                    self._dirty = True
            todo = self.missing(todo)
        if todo and encode is not None:
            for text, vector in zip(todo, encode(todo), strict=True):
                self._rows[text_key(text)] = vector
                if len(memo) < MEMO_LIMIT:
                    memo[text_key(text)] = vector
            self._dirty = True
        return [self._get(text_key(t)) for t in texts]

    def save(self) -> bool:
        """Write the file when something was added; False when nothing was written."""
        if not self._dirty or self.path is None or os.environ.get("QUIVER_NO_CACHE"):
            return False
        every = sorted({*self._index, *self._rows})
        keys = every[-MAX_ENTRIES:] if len(every) > MAX_ENTRIES else every
        floats = array.array("f")
        base, index, rows = self._base, self._index, self._rows
        for key in keys:
            i = index.get(key)
            if i is not None:
                floats.extend(base[i * DIM : (i + 1) * DIM])
            else:
                floats.extend(rows[key])
        if sys.byteorder != "little":
            floats.byteswap()
        header = json.dumps({"model": self.model_id, "dim": DIM, "keys": keys}, separators=(",", ":")).encode()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(MAGIC + header + b"\n" + floats.tobytes())
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            return False  # a cache that cannot be written only costs time next run
        self._dirty = False
        return True


def _read(path: Path) -> tuple[dict[str, int], array.array[float]]:
    """(row of each key, the rows as one native-order float32 array); empty for a missing or foreign file."""
    empty: tuple[dict[str, int], array.array[float]] = ({}, array.array("f"))
    try:
        data = path.read_bytes()
    except OSError:
        return empty
    if not data.startswith(MAGIC):
        return empty
    end = data.find(b"\n", len(MAGIC))
    try:
        header = json.loads(data[len(MAGIC) : end])
        keys = header["keys"]
        if header.get("dim") != DIM or not isinstance(keys, list):
            return empty
        floats = array.array("f")
        floats.frombytes(data[end + 1 :])
    except (ValueError, KeyError, TypeError):
        return empty
    if len(floats) != len(keys) * DIM:
        return empty
    if sys.byteorder != "little":
        floats.byteswap()
    return {str(k): i for i, k in enumerate(keys)}, floats
