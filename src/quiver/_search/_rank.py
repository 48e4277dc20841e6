"""BM25F postings and concept scoring, shared by the tool index and the per-server index."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from quiver._search._query import Concept

# term -> (doc ids, saturated BM25F contribution per doc, idf already applied)
Postings = dict[str, tuple[tuple[int, ...], tuple[float, ...]]]


def bm25f(
    rows: Sequence[Sequence[Mapping[str, int]]],
    weights: Sequence[float],
    b: Sequence[float],
    k1: float,
) -> Postings:
    """Postings for docs given as one term-count map per field.

    The pseudo term frequency is the sum over fields of weight x count / field length norm, saturated
    once with k1 (Robertson & Zaragoza's BM25F), so repeating a word across fields does not add up
    without bound and a short name field is not drowned by a long description.
    """
    n = len(rows)
    nfields = len(weights)
    lengths = [[sum(row[f].values()) for f in range(nfields)] for row in rows]
    totals = [sum(lens[f] for lens in lengths) for f in range(nfields)]
    # the average over docs that have the field: a field few docs fill (examples) is not normalised away
    filled = [sum(1 for lens in lengths if lens[f]) for f in range(nfields)]
    avg = [(t / k if k and t else 1.0) for t, k in zip(totals, filled, strict=True)]
    ids: dict[str, list[int]] = {}
    tfs: dict[str, list[float]] = {}
    for i, row in enumerate(rows):
        lens = lengths[i]
        doc: dict[str, float] = {}
        get = doc.get
        for f in range(nfields):
            counts = row[f]
            if counts:
                nf = weights[f] / (1.0 - b[f] + b[f] * lens[f] / avg[f])
                for term, c in counts.items():
                    doc[term] = get(term, 0.0) + nf * c
        for term, v in doc.items():
            slot = ids.get(term)
            if slot is None:
                ids[term] = [i]
                tfs[term] = [v]
            else:
                slot.append(i)
                tfs[term].append(v)
    postings: Postings = {}
    for term, docs in ids.items():
        df = len(docs)
        top = math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * (k1 + 1.0)
        postings[term] = (tuple(docs), tuple([top * v / (k1 + v) for v in tfs[term]]))
    return postings


def score(postings: Postings, concepts: Sequence[Concept], coordination: float) -> dict[int, float]:
    """Sum over concepts of each doc's best term, times the share of request words it covers."""
    scores: dict[int, float] = {}
    coverage: dict[int, int] = {}
    primary = 0
    for concept in concepts:
        best: dict[int, float] = {}
        for term in sorted(concept.terms):
            entry = postings.get(term)
            if entry is None:
                continue
            qw = concept.terms[term]
            for i, s in zip(entry[0], entry[1], strict=True):
                v = qw * s
                if v > best.get(i, 0.0):
                    best[i] = v
        for i, v in best.items():
            scores[i] = scores.get(i, 0.0) + v
        if concept.primary:
            primary += 1
            for i in best:
                coverage[i] = coverage.get(i, 0) + 1
    if coordination and primary:
        for i in scores:
            scores[i] *= ((coverage.get(i, 0) + 1) / (primary + 1)) ** coordination
    return scores


def count(terms: Sequence[str]) -> dict[str, int]:
    return Counter(terms)


def merge(target: dict[str, int], counts: Mapping[str, int]) -> None:
    for t, c in counts.items():
        target[t] = target.get(t, 0) + c
