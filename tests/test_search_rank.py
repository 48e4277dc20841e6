"""The search shortcuts are exact: `search(q, k)` is the first k of the full ranking (its adjustment stops early),
and `rank_of(q, i, k)` is doc i's place in that ranking (ROUTE006 asks it instead of ranking every candidate).

Checked on the real catalogs with the benchmark's requests and every tool's own first clause, the queries
ROUTE006 sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiver._search._similar import paraphrases
from quiver.search import SearchConfig, SearchDoc, SearchIndex, docs_from_tools

ROOT = Path(__file__).resolve().parents[1]


def _docs(corpus: Path) -> list[SearchDoc]:
    docs: list[SearchDoc] = []
    for path in sorted((corpus / "catalogs").glob("*.json")):
        cat = json.loads(path.read_text(encoding="utf-8"))
        docs.extend(docs_from_tools(cat["server"], cat["tools"], cat.get("description", "")))
    return docs


def _queries(docs: list[SearchDoc]) -> list[str]:
    out = [q for d in docs for q in paraphrases(d.tool, d.description)]
    for name in ("tune.jsonl", "qa.jsonl"):
        for line in (ROOT / "bench" / "search" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["query"])
    return out


@pytest.fixture
def index_and_queries(corpus: Path) -> tuple[SearchIndex, list[str]]:
    docs = _docs(corpus)
    return SearchIndex.build(docs, config=SearchConfig()), _queries(docs)


def test_the_first_k_results_are_the_first_k_of_the_whole_ranking(
    index_and_queries: tuple[SearchIndex, list[str]],
) -> None:
    index, queries = index_and_queries
    n = len(index.docs)
    compared = 0
    for query in queries:
        whole = index.search(query, n)
        for k in (1, 3, 10):
            assert index.search(query, k) == whole[:k], (query, k)
            compared += 1
    assert compared > 600


def test_rank_of_is_the_place_search_gives_the_doc(index_and_queries: tuple[SearchIndex, list[str]]) -> None:
    index, queries = index_and_queries
    position = {(d.server, d.tool): i for i, d in enumerate(index.docs)}
    ranked = outside = 0
    for query in queries[:400]:
        hits = [position[(h.server, h.tool)] for h in index.search(query, 10)]
        for i in {*hits, *range(0, len(index.docs), 29)}:
            for within in (1, 3, 10):
                expected = hits.index(i) + 1 if i in hits[:within] else None
                assert index.rank_of(query, i, within) == expected, (query, index.docs[i].tool, within)
                ranked += expected is not None
                outside += expected is None
    assert ranked > 500 and outside > 500  # both answers well represented


def test_the_fusions_top_k_is_the_set_a_stable_sort_puts_first_ties_included() -> None:
    """`_fuse._top` picks candidates without sorting them all: the same set as the sort it replaces."""
    import heapq
    import random

    import numpy as np

    from quiver._search._fuse import _top

    rng = random.Random(29)
    for _ in range(300):
        n = rng.randint(1, 60)
        values = np.asarray([rng.choice([0.1, 0.2, 0.2, 0.5, rng.random()]) for _ in range(n)], dtype=np.float32)
        depth = rng.randint(1, n + 3)
        assert set(_top(np, values, depth)) == set(np.argsort(-values, kind="stable")[:depth].tolist())
        keys = np.asarray(rng.sample(range(1000), n), dtype=np.int64)
        scores = dict(zip(keys.tolist(), values.astype(np.float64).tolist(), strict=True))
        want = {k for k, _ in heapq.nsmallest(depth, scores.items(), key=lambda kv: (-kv[1], kv[0]))}
        assert set(keys[_top(np, values.astype(np.float64), depth, keys)].tolist()) == want
