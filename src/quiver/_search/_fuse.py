"""Fusion of the lexical ranking with the embedding one: a z-score sum over the candidates of both.

The candidates are the lexical top `depth` and the embedding top `depth`. Over them, each score list is
standardised (minus its mean, over its standard deviation; a tool the lexical side did not match scores 0
there), and a tool's fused score is z(lexical) + weight x z(cosine). So neither side's scale matters, and
the embedding's vote is as loud as the lexical one at weight 1. A tool's cosine is the best over its own
vector and its examples' vectors. numpy is imported here; `_index` imports this module only when
vectors are given.
"""

from __future__ import annotations

import heapq
import importlib
from collections.abc import Sequence
from typing import Any

from quiver._search._embed_id import DIM

Matrix = Any
# With no query word in the index, a tool needs this cosine to be returned at all: gibberish reaches about
# 0.3 with some tool, so below it "nothing matches" stays the honest answer.
UNMATCHED_COSINE = 0.35
Vector = Sequence[float]


class Semantic:
    """The unit vectors of one index's docs (each doc: its own vector, then its examples')."""

    __slots__ = ("_matrix", "_ndocs", "_np", "_owners", "_single", "_starts")

    def __init__(self, vectors: Sequence[Sequence[Vector]]) -> None:
        np = importlib.import_module("numpy")
        self._np = np
        self._ndocs = len(vectors)
        rows = [v for doc in vectors for v in doc]
        self._owners: Matrix = np.asarray([i for i, doc in enumerate(vectors) for _ in doc], dtype=np.int64)
        self._matrix: Matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), DIM)
        # rows are grouped by doc, so a doc's best cosine is a reduceat over its run of rows (docs with none: -1)
        counts = [len(doc) for doc in vectors]
        self._single = all(c == 1 for c in counts)
        starts, at = [], 0
        for c in counts:
            if c:
                starts.append(at)
            at += c
        self._starts: Matrix = np.asarray(starts, dtype=np.int64)

    def cosines(self, query_vector: Matrix) -> Matrix:
        """Per doc, the best cosine of its vectors with the query's (-1 for a doc without vectors)."""
        np = self._np
        sims = self._matrix @ query_vector
        if self._single:
            return sims
        best: Matrix = np.full(self._ndocs, -1.0, dtype=np.float32)
        if len(sims):
            best[self._owners[self._starts]] = np.maximum.reduceat(sims, self._starts)
        return best

    def fuse(
        self,
        query_vector: Matrix,
        lexical: dict[int, float],
        *,
        depth: int,
        weight: float,
        rrf: int = 0,
        parts: dict[int, tuple[float, float, float]] | None = None,
    ) -> dict[int, float]:
        """Fused scores of the candidates; `parts`, when given, gets per candidate (words' share, the
        embedding's share, cosine): the two shares sum to its fused score."""
        np = self._np
        cos = self.cosines(query_vector)
        depth = min(depth, self._ndocs)
        if depth <= 0:
            return {}
        dense_top = np.argsort(-cos, kind="stable")[:depth].tolist() if rrf else sorted(_top(np, cos, depth).tolist())
        if not lexical:  # no word of the query is in the index: only a clear embedding match counts
            kept = {i: float(cos[i]) for i in dense_top if cos[i] >= UNMATCHED_COSINE}
            if parts is not None:
                parts.update({i: (0.0, c, c) for i, c in kept.items()})
            return kept
        if rrf:
            lex_top = [i for i, _ in heapq.nsmallest(depth, lexical.items(), key=lambda kv: (-kv[1], kv[0]))]
        elif len(lexical) <= depth:
            lex_top = list(lexical)
        else:
            keys = np.fromiter(lexical.keys(), dtype=np.int64, count=len(lexical))
            values = np.fromiter(lexical.values(), dtype=np.float64, count=len(lexical))
            lex_top = keys[_top(np, values, depth, keys)].tolist()
        ids = sorted(set(lex_top) | set(dense_top))
        if rrf:
            lex_rank = {i: r for r, i in enumerate(lex_top)}
            dense_rank = {i: r for r, i in enumerate(dense_top)}
            return {
                i: (1.0 / (rrf + lex_rank[i]) if i in lex_rank else 0.0)
                + weight * (1.0 / (rrf + dense_rank[i]) if i in dense_rank else 0.0)
                for i in ids
            }
        lex = np.asarray([lexical.get(i, 0.0) for i in ids], dtype=np.float64)
        dense = cos[ids].astype(np.float64)
        words, meaning = _z(np, lex), weight * _z(np, dense)
        if parts is not None:
            for i, w, m in zip(ids, words.tolist(), meaning.tolist(), strict=True):
                parts[i] = (w, m, float(cos[i]))
        fused = words + meaning
        return {i: float(s) for i, s in zip(ids, fused.tolist(), strict=True)}


def _top(np: Any, values: Matrix, depth: int, keys: Matrix | None = None) -> Matrix:
    """The positions (an int array) of the `depth` largest `values`, ties taken by the smaller key (the position
    when `keys` is None): the set a stable descending sort would put first, in no particular order, without
    sorting all."""
    if depth >= len(values):
        return np.arange(len(values))
    kth = np.partition(values, len(values) - depth)[len(values) - depth]  # the depth-th largest value
    above = np.flatnonzero(values > kth)
    tied = np.flatnonzero(values == kth)
    if keys is not None:
        tied = tied[np.argsort(keys[tied], kind="stable")]
    return np.concatenate((above, tied[: depth - len(above)]))


def _z(np: Any, values: Matrix) -> Matrix:
    std = float(values.std())
    if std < 1e-9:
        return np.zeros_like(values)
    out: Matrix = (values - values.mean()) / std
    return out
