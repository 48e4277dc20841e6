"""Near-duplicate candidates among tools: blocking on shared terms, then an IDF-weighted cosine.

Comparing every pair is quadratic; instead each tool is compared only with the tools that share one of
its blocking keys, read from an inverted index: its name terms and a fixed pseudo-random sample of its
description terms (a bottom-k sketch by hash, so two near-duplicates pick mostly the same sample,
whichever of their words happen to be rare). A term held by more than `CAP` tools is no evidence of
duplication and is never read, so the work per tool is bounded and the pass grows linearly with the
number of tools. Tools made only of common terms are still paired when their names are equal.

Similarity is the cosine of IDF-weighted term sets, name terms counting `NAME_WEIGHT` times a
description term: in [0, 1], 1 for the same words. The IDF counts `PRIOR_DOCS` pseudo-documents holding
none of the terms, so over three agents one differing word cannot outweigh ten shared ones (plain IDF
collapses on small corpora); over hundreds of tools the prior changes next to nothing.

With purpose vectors (the embedding of a tool's name words and first sentence, `purpose_text`), the
similarity is the larger of the lexical one and the calibrated cosine (`semantic_similarity`), so tools
that say the same thing in other words (`read_file` / `read_text_file`) pair up too. The vectors are
plain tuples read from the vector cache: nothing here imports numpy or the model.
"""

from __future__ import annotations

import heapq
import math
import re
import zlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from quiver._search import _text

if TYPE_CHECKING:
    from quiver._search._doc import SearchDoc

CAP = 64  # longest posting list read while blocking
KEYS = 8  # description terms of a tool (a fixed pseudo-random sample) used to find its candidates
SHORTLIST = 2  # candidates kept per requested result before the exact similarity
NAME_WEIGHT = 2.0  # a name term counts this much more than a description term
PRIOR_DOCS = 20  # pseudo-documents in the IDF, so a small corpus does not make one word decide
# MiniLM cosine of purpose texts -> the lexical similarity scale, piecewise linear: 0.60 reads as 0.50 (the
# overlap floor) and 0.92 as 0.80 (near-duplicate), measured on the 223 real tools: at 0.92, 4 pairs
# (read_file/read_text_file among them); below 0.60 nothing.
_COSINE_POINTS = ((0.60, 0.50), (0.92, 0.80), (1.0, 1.0))
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n\s*\n")
_CLAUSE_END = re.compile(r"[.;:!?(\n|]|\s[-\u2013\u2014]\s")


def semantic_similarity(cosine: float) -> float:
    """A purpose-vector cosine on the lexical similarity's scale (0 below the lowest calibration point)."""
    (x0, y0), *rest = _COSINE_POINTS
    if cosine < x0:
        return 0.0
    for x1, y1 in rest:
        if cosine <= x1:
            return y0 + (cosine - x0) * (y1 - y0) / (x1 - x0)
        x0, y0 = x1, y1
    return 1.0


def first_sentence(text: str) -> str:
    flat = text.strip()
    cut = _SENTENCE_END.search(flat)
    return " ".join((flat[: cut.start()] if cut else flat).split())


def first_clause(text: str) -> str:
    """The description up to its first sentence or clause break (`.`, `;`, `:`, a line break, a dash), or
    its first two clauses when the first is a lone word (`Notion | Update page properties`)."""
    rest = text.strip()
    parts: list[str] = []
    while rest and sum(len(p.split()) for p in parts) < 2:
        cut = _CLAUSE_END.search(rest)
        parts.append(" ".join((rest[: cut.start()] if cut else rest).split()))
        rest = rest[cut.end() :].strip() if cut else ""
    return " ".join(p for p in parts if p)


def purpose_text(name: str, description: str) -> str:
    """What a tool is for, as the pair rules embed it: its name words and the first sentence it says."""
    words = " ".join(_text.words(name))
    sentence = first_sentence(description)
    return f"{words}: {sentence}" if words else sentence


def paraphrases(name: str, description: str) -> list[str]:
    """Requests a user could make for a tool, from what it says of itself (ROUTE006): the first clause of its
    description (its name's words when it has none); never the full description, which only the tool itself
    matches. The name's words are no request: search weighs the name field most, so they always find it."""
    clause = first_clause(description)
    if clause:
        return [clause]
    words = " ".join(_text.words(name))
    return [words] if words else []


def _dot(a: Sequence[float], b: Sequence[float], a2: float, b2: float) -> float:
    """a . b from the squared norms `a2`, `b2` and the distance: `math.dist` runs in C, 4x a Python sum of
    products; the two agree to about 1e-15, far below the 2 decimals a similarity is judged at."""
    return (a2 + b2 - math.dist(a, b) ** 2) / 2.0


class Blocker:
    """Candidate near-duplicates over (name terms, description terms) per tool."""

    __slots__ = (
        "_cosines",
        "_keys",
        "_name_of",
        "_names",
        "_norms",
        "_postings",
        "_purposes",
        "_sets",
        "_squares",
        "_vectors",
    )

    def __init__(
        self,
        names: Sequence[frozenset[str]],
        descriptions: Sequence[frozenset[str]],
        purposes: Sequence[Sequence[float] | None] | None = None,
    ) -> None:
        n = len(names)
        self._purposes = purposes
        self._cosines: dict[tuple[int, int], float] = {}  # purpose cosines by (low, high) doc: each pair once
        self._squares: dict[int, float] = {}  # squared norms of the purpose vectors
        sets = [a | b for a, b in zip(names, descriptions, strict=True)]
        df: dict[str, int] = {}
        for terms in sets:
            for term in terms:
                df[term] = df.get(term, 0) + 1
        idf = {t: math.log(1.0 + (n + PRIOR_DOCS) / d) for t, d in df.items()}
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

    def _cosine(self, i: int, j: int, a: Sequence[float], b: Sequence[float]) -> float:
        key = (i, j) if i < j else (j, i)
        found = self._cosines.get(key)
        if found is None:
            found = self._cosines[key] = _dot(a, b, self._square(i, a), self._square(j, b))
        return found

    def _square(self, i: int, vector: Sequence[float]) -> float:
        found = self._squares.get(i)
        if found is None:
            found = self._squares[i] = math.hypot(*vector) ** 2
        return found

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
        purposes = self._purposes
        mine_purpose = purposes[i] if purposes is not None else None
        wide = SHORTLIST * (2 if mine_purpose is not None else 1)
        shortlist = heapq.nsmallest(limit * wide, [(-v, j) for j, v in votes.items()])
        mine, vector, norm = self._sets[i], self._vectors[i], self._norms[i]
        scored: list[tuple[float, int]] = []
        for _, j in shortlist:
            other = self._vectors[j]
            dot = sum([vector[t] * other[t] for t in mine & self._sets[j]])
            similarity = min(1.0, dot / (norm * self._norms[j])) if dot > 0.0 else 0.0
            if mine_purpose is not None and purposes is not None:
                theirs = purposes[j]
                if theirs is not None:
                    similarity = max(similarity, semantic_similarity(self._cosine(i, j, mine_purpose, theirs)))
            if similarity > 0.0:
                scored.append((-similarity, j))
        scored.sort()
        return [(j, round(-s, 6)) for s, j in scored[:limit]]


class SimilarityIndex:
    """Near-duplicate candidates alone (`similar`, as `SearchIndex.similar` gives them), without the ranking
    postings a `SearchIndex` builds: what the pair rules read."""

    __slots__ = ("_blocker", "docs")

    def __init__(self, docs: Iterable[SearchDoc], purposes: Sequence[Sequence[float] | None] | None = None) -> None:
        self.docs = tuple(docs)
        if purposes is not None and len(purposes) != len(self.docs):
            raise ValueError(f"purpose vectors for {len(purposes)} docs, {len(self.docs)} docs")
        names = [frozenset(_text.name_terms(d.tool)) for d in self.docs]
        self._blocker = Blocker(names, [frozenset(_text.terms(d.description)) for d in self.docs], purposes)

    def similar(self, doc_index: int, limit: int = 5) -> list[tuple[int, float]]:
        return self._blocker.similar(doc_index, limit)
