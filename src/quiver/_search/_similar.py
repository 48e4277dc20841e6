"""Near-duplicate candidates among tools: blocking on shared terms, then an IDF-weighted cosine.

Comparing every pair is quadratic; instead each tool is compared only with the tools that share one of
its blocking keys, read from an inverted index: its name terms and a fixed pseudo-random sample of its
description terms (a bottom-k sketch by hash, so two near-duplicates pick mostly the same sample,
whichever of their words happen to be rare). A term held by more than `CAP` tools is no evidence of
duplication and is never read, so the work per tool is bounded and the pass grows linearly with the
number of tools. Tools made only of common terms are still paired when their names are equal.

Similarity is the cosine of IDF-weighted term sets, name terms counting `NAME_WEIGHT` times a
description term: in [0, 1], 1 for the same words.
"""

from __future__ import annotations

import heapq
import math
import zlib
from collections.abc import Sequence

CAP = 64  # longest posting list read while blocking
KEYS = 8  # description terms of a tool (a fixed pseudo-random sample) used to find its candidates
SHORTLIST = 2  # candidates kept per requested result before the exact similarity
NAME_WEIGHT = 2.0  # a name term counts this much more than a description term


class Blocker:
    """Candidate near-duplicates over (name terms, description terms) per tool."""

    __slots__ = ("_keys", "_name_of", "_names", "_norms", "_postings", "_sets", "_vectors")

    def __init__(self, names: Sequence[frozenset[str]], descriptions: Sequence[frozenset[str]]) -> None:
        n = len(names)
        sets = [a | b for a, b in zip(names, descriptions, strict=True)]
        df: dict[str, int] = {}
        for terms in sets:
            for term in terms:
                df[term] = df.get(term, 0) + 1
        idf = {t: math.log(1.0 + n / d) for t, d in df.items()}
        self._vectors = [
            {t: idf[t] * ((NAME_WEIGHT if t in name else 0.0) + (1.0 if t in desc else 0.0)) for t in terms}
            for name, desc, terms in zip(names, descriptions, sets, strict=True)
        ]
        self._norms = [math.sqrt(sum(v * v for v in vec.values())) or 1.0 for vec in self._vectors]
        postings: dict[str, list[int]] = {}
        self._names: dict[frozenset[str], list[int]] = {}
        self._keys: list[list[str]] = []
        rank = {t: zlib.crc32(t.encode()) for t in df}
        for i, terms in enumerate(sets):
            usable = [t for t in terms if df[t] <= CAP]
            sample = sorted((t for t in usable if t not in names[i]), key=lambda t: (rank[t], t))[:KEYS]
            self._keys.append(sorted(t for t in names[i] if df[t] <= CAP) + sample)
            for term in usable:
                postings.setdefault(term, []).append(i)
            self._names.setdefault(names[i], []).append(i)
        self._postings = postings
        self._sets = sets
        self._name_of = names
        self._names = {k: v for k, v in self._names.items() if 1 < len(v) <= CAP}

    def similar(self, i: int, limit: int) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        votes: dict[int, float] = {}
        get = votes.get
        for key in self._keys[i]:
            docs = self._postings[key]
            vote = 1.0 / len(docs)
            for j in docs:
                votes[j] = get(j, 0.0) + vote
        for j in self._names.get(self._name_of[i], ()):
            votes[j] = get(j, 0.0) + 1.0
        votes.pop(i, None)
        shortlist = heapq.nsmallest(limit * SHORTLIST, [(-v, j) for j, v in votes.items()])
        mine, vector, norm = self._sets[i], self._vectors[i], self._norms[i]
        scored: list[tuple[float, int]] = []
        for _, j in shortlist:
            other = self._vectors[j]
            dot = sum([vector[t] * other[t] for t in mine & self._sets[j]])
            if dot > 0.0:
                scored.append((-min(1.0, dot / (norm * self._norms[j])), j))
        scored.sort()
        return [(j, round(-s, 6)) for s, j in scored[:limit]]
