"""The tool search index (`SearchIndex`) and how it is built (`build_index`, `docs_from_tools`, `doc_vectors`):
the ranking `quiver.search` describes and hands on. Below every other module of `_search` that builds or
reads an index (`_scope`, `_lock_vectors`)."""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from quiver._search import _embed_id, _intent, _rank, _text
from quiver._search._doc import SearchDoc
from quiver._search._query import Concept, QueryOptions, analyze
from quiver._search._similar import Blocker
from quiver._search._vectors import Vector, VectorCache
from quiver.model import JSON  # MCP Tool objects as parsed

if TYPE_CHECKING:
    from quiver._search._fuse import Semantic


FIELDS = ("name", "description", "params", "server", "examples")
ADJUST_SPREAD = 10  # intent and name adjustments are in units of (best score - the 10th best)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: higher scores are better; scores compare only within one query."""

    server: str
    tool: str
    score: float
    matched: tuple[str, ...]  # which fields matched: "name", "description", "params", "server", "examples"


@dataclass(frozen=True, slots=True)
class Explained:
    """What made one hit's score (`SearchIndex.explain`): the parts add up to `hit.score` (rounding aside)."""

    hit: SearchHit
    words: float  # the lexical (BM25F) share: the raw score alone, or its z-score when fused
    meaning: float  # the embedding's share (weight x z-score of the cosine); 0 without vectors
    cosine: float | None  # the tool's best cosine with the request; None without vectors
    moves: tuple[tuple[str, float], ...]  # signal -> what it added: action, name, server, numbers, exact


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Ranking knobs. The defaults are the shipped ranking; the benchmark switches parts off to measure them."""

    # name, description, params, server, examples
    weights: tuple[float, ...] = (3.0, 1.0, 0.4, 0.6, 2.0)
    b: tuple[float, ...] = (0.3, 0.75, 0.75, 0.75, 0.5)
    k1: float = 1.2
    coordination: float = 1.0  # score x (share of the request's words matched) ** coordination
    semantic_weight: float = 1.5  # with vectors: z(lexical) + this x z(cosine) over the candidates
    semantic_depth: int = 300  # candidates taken from each of the lexical and the embedding ranking
    rrf: int = 0  # > 0: reciprocal rank fusion with this k instead of the z-score sum (benchmark only)
    # `_search/_intent.py`: a tool whose verb agrees with the request's (+1) or contradicts it (-1), and the
    # share of its name the request covers, move its score by these times the spread of the top scores
    intent_weight: float = 0.3
    name_weight: float = 0.05
    server_weight: float = 0.15  # ... and a request that names a tool's server (a word said, not a synonym)
    numbers_weight: float = 0.3  # ... and, against, a tool that needs numbers when the request gives none
    param_examples: bool = False  # index the example values in parameter descriptions (benchmark only)
    query: QueryOptions = field(default_factory=QueryOptions)


class SearchIndex:
    """An immutable BM25F index over tools; build it once, query it many times."""

    __slots__ = (
        "_blocker",
        "_classes",
        "_config",
        "_exact",
        "_fields",
        "_names",
        "_postings",
        "_purposes",
        "_semantic",
        "_servers",
        "_typo_candidates",
        "docs",
    )

    docs: tuple[SearchDoc, ...]

    def __init__(
        self,
        docs: tuple[SearchDoc, ...],
        rows: Sequence[tuple[dict[str, int], ...]],
        config: SearchConfig,
        vectors: Sequence[Sequence[Vector]] | None = None,
        purposes: Sequence[Sequence[float] | None] | None = None,
    ) -> None:
        self.docs = docs
        self._purposes = purposes
        self._config = config
        self._postings = _rank.bm25f(rows, config.weights, config.b, config.k1)
        self._fields = rows
        self._typo_candidates = tuple(sorted(t for t in self._postings if len(t) >= 4 and not t.isdigit()))
        self._blocker: Blocker | None = None
        self._classes = [_intent.tool_class(d.tool) for d in docs]
        self._names = _intent.distinctive_names([d.server for d in docs], [d.tool for d in docs])
        self._servers = [frozenset(_text.terms(d.server)) for d in docs]
        self._exact: dict[str, tuple[int, ...]] | None = None
        self._semantic: Semantic | None = None
        if vectors is not None:
            if len(vectors) != len(docs):
                raise ValueError(f"vectors for {len(vectors)} docs, {len(docs)} docs")
            from quiver._search._fuse import Semantic

            self._semantic = Semantic(vectors)

    @property
    def semantic(self) -> bool:
        """Whether the embedding ranking takes part (vectors were given)."""
        return self._semantic is not None

    @classmethod
    def build(
        cls,
        docs: Iterable[SearchDoc],
        *,
        config: SearchConfig | None = None,
        vectors: Sequence[Sequence[Vector]] | None = None,
        purposes: Sequence[Sequence[float] | None] | None = None,
    ) -> SearchIndex:
        """Index `docs`; their order is kept, and `similar()` refers to docs by position.

        `vectors` (per doc, its `embed_texts` encoded: from `doc_vectors`) turn on the embedding ranking,
        fused with the lexical one; each query is then encoded once (a few ms). `build_index` is the
        usual way in: it reads the vectors from the cache. `purposes` (per doc, the vector of its
        `purpose_text`, or None) let `similar()` pair tools that say the same in other words.
        """
        all_docs = tuple(docs)
        config_ = config or SearchConfig()
        rows = [_row(doc, config_.param_examples) for doc in all_docs]
        if purposes is not None and len(purposes) != len(all_docs):
            raise ValueError(f"purpose vectors for {len(purposes)} docs, {len(all_docs)} docs")
        return cls(all_docs, rows, config_, vectors, purposes)

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The best `limit` tools for `query`, best first; an empty list when nothing matches.

        A query that is a tool's exact name (`tool`, `server/tool`, `server__tool`, `mcp__server__tool`,
        any case) ranks that tool first (every tool of that name, by server, for a bare name)."""
        return [e.hit for e in self._ranked(query, limit, explain=False)]

    def explain(self, query: str, limit: int = 10, *, once: bool = False) -> list[Explained]:
        """`search`, with what made each score: the words' and the embedding's shares and each signal's move.
        `once`: this is the one query the process ranks (`_embed.encode_query`); the ranking is the same."""
        return self._ranked(query, limit, explain=True, once=once)

    def _ranked(self, query: str, limit: int, *, explain: bool, once: bool = False) -> list[Explained]:
        config = self._config
        concepts = analyze(query, self._postings, self._typo_candidates, config.query)
        scores = _rank.score(self._postings, concepts, config.coordination)
        matched = bool(scores)
        parts: dict[int, tuple[float, float, float]] | None = {} if explain else None
        if self._semantic is not None and query.strip():
            from quiver._search._embed import encode_query

            vector = encode_query(query, once=once)
            scores = self._semantic.fuse(
                vector,
                scores,
                depth=config.semantic_depth,
                weight=config.semantic_weight,
                rrf=config.rrf,
                parts=parts,
            )
        elif parts is not None:
            parts.update({i: (s, 0.0, float("nan")) for i, s in scores.items()})
        exact = self.exact(query)
        if (not scores and not exact) or limit <= 0:
            return []
        moves: dict[int, list[tuple[str, float]]] = {}
        if matched:
            self._adjust(query, concepts, scores, limit, moves if explain else None)
        docs = self.docs
        if exact:
            top = max(scores.values(), default=0.0)
            for rank, i in enumerate(exact):  # above every other candidate, in (server, tool) order
                was = scores.get(i, 0.0)
                scores[i] = top + EXACT_MARGIN * (len(exact) - rank)
                moves.setdefault(i, []).append(("exact", scores[i] - was))
        best = heapq.nsmallest(limit, scores.items(), key=lambda kv: (-kv[1], docs[kv[0]].server, docs[kv[0]].tool))
        terms = {t for c in concepts for t in c.terms}
        out = []
        for i, score in best:
            hit = SearchHit(docs[i].server, docs[i].tool, round(score, 6), self._matched(i, terms))
            words, meaning, cosine = parts.get(i, (0.0, 0.0, float("nan"))) if parts is not None else (0.0, 0.0, 0.0)
            shown = None if cosine != cosine else round(cosine, 4)  # NaN: no vectors
            made = tuple((name, round(v, 6)) for name, v in moves.get(i, ()) if v)
            out.append(Explained(hit, round(words, 6), round(meaning, 6), shown, made))
        return out

    def rank_of(self, query: str, doc_index: int, within: int) -> int | None:
        """The 1-based rank `search(query)` gives `docs[doc_index]` when it is within the first `within`,
        else None: the same answer as reading `search(query, within)`, without ranking every candidate.

        Only candidates whose score could end on either side of the doc's, once moved, are adjusted; the
        rest are decided by their unadjusted score alone (a move is at most `reach` either way, `rise` up)."""
        if self._semantic is not None or self.exact(query):  # no cheap bound: read the ranking
            hits = self.search(query, within)
            doc = self.docs[doc_index]
            found = [k for k, h in enumerate(hits) if (h.server, h.tool) == (doc.server, doc.tool)]
            return found[0] + 1 if found else None
        concepts = analyze(query, self._postings, self._typo_candidates, self._config.query)
        scores = _rank.score(self._postings, concepts, self._config.coordination)
        if doc_index not in scores or within <= 0:
            return None
        mover = self._mover(query, concepts, scores)
        reach, rise, move = mover if mover is not None else (0.0, 0.0, lambda _i, score: score)
        reach = reach * (1.0 + 1e-9) + 1e-12  # float rounding of a move never crosses the bound
        rise = rise * (1.0 + 1e-9) + 1e-12
        docs = self.docs
        mine = move(doc_index, scores[doc_index])
        order = (docs[doc_index].server, docs[doc_index].tool)
        ahead = 0
        for j, score in scores.items():
            if j == doc_index or score + rise < mine:
                continue
            if score - reach <= mine:
                moved = move(j, score)
                if moved < mine or (moved == mine and (docs[j].server, docs[j].tool) > order):
                    continue
            ahead += 1
            if ahead >= within:
                return None
        return ahead + 1

    def exact(self, query: str) -> tuple[int, ...]:
        """The docs `query` names exactly (`exact_keys`), in (server, tool) order; () for none."""
        if self._exact is None:
            found: dict[str, list[int]] = {}
            for i, doc in enumerate(self.docs):
                for key in exact_keys(doc.server, doc.tool):
                    found.setdefault(key, []).append(i)
            docs = self.docs
            self._exact = {k: tuple(sorted(v, key=lambda i: (docs[i].server, docs[i].tool))) for k, v in found.items()}
        return self._exact.get(_exact_form(query), ())

    def _mover(
        self,
        query: str,
        concepts: Sequence[Concept],
        scores: Mapping[int, float],
        moves: dict[int, list[tuple[str, float]]] | None = None,
    ) -> tuple[float, float, Callable[[int, float], float]] | None:
        """How candidates' scores move (`_adjust`): the largest move either way, the largest move up, and the
        move of one; None when nothing moves (the best score ties the `ADJUST_SPREAD`-th)."""
        config = self._config
        top = heapq.nlargest(ADJUST_SPREAD, scores.values())
        unit = top[0] - top[-1]
        if unit <= 0.0:
            return None
        weights = (config.intent_weight, config.name_weight, config.server_weight, config.numbers_weight)
        reach = unit * sum(abs(w) for w in weights)
        # up: agreement is -1, 0 or +1; name cover in [0, 1]; server named and numbers unfit are 0 or 1
        intent, name, server, numbers = weights
        rise = unit * (abs(intent) + max(name, 0.0) + max(server, 0.0) + max(-numbers, 0.0))
        asked_class = _intent.query_class(query)
        asked: dict[str, float] = {}
        said: set[str] = set()
        for concept in concepts:
            for term, weight in concept.terms.items():
                asked[term] = max(weight, asked.get(term, 0.0))
                if concept.primary and weight >= 1.0:
                    said.add(term)
        no_numbers = not any(c.isdigit() for c in query)
        docs, classes, names, servers = self.docs, self._classes, self._names, self._servers

        def move(i: int, score: float) -> float:
            agree = _intent.agreement(asked_class, classes[i])
            cover = _intent.name_cover(names[i], asked)
            named = not said.isdisjoint(servers[i])
            unfit = no_numbers and docs[i].required_numbers > 0
            if moves is not None:
                moves[i] = [
                    ("action", unit * config.intent_weight * agree),
                    ("name", unit * config.name_weight * cover),
                    ("server", unit * config.server_weight * named),
                    ("numbers", -unit * config.numbers_weight * unfit),
                ]
            return score + unit * (
                config.intent_weight * agree
                + config.name_weight * cover
                + config.server_weight * named
                - config.numbers_weight * unfit
            )

        return reach, rise, move

    def _adjust(
        self,
        query: str,
        concepts: Sequence[Concept],
        scores: dict[int, float],
        limit: int,
        moves: dict[int, list[tuple[str, float]]] | None = None,
    ) -> None:
        """Move each candidate by its action-class agreement and name cover (`_search/_intent.py`), in units
        of the gap between the best score and the `ADJUST_SPREAD`-th: comparable to the gaps among the
        tools in contention, whatever the scale of the scores (lexical alone or fused).

        A move up is at most `rise`. Candidates are adjusted best first, and once one's score plus `rise` is
        below the `limit`-th adjusted score so far, neither it nor any after it can enter the first `limit`:
        those are dropped unadjusted (the result is the same)."""
        mover = self._mover(query, concepts, scores, moves)
        if mover is None:
            return
        _, rise, move = mover
        rise = rise * (1.0 + 1e-9) + 1e-12  # float rounding of a move never crosses the bound
        kept: dict[int, float] = {}
        floor: list[float] = []  # min-heap of the best `limit` adjusted scores
        for i, score in sorted(scores.items(), key=lambda kv: -kv[1]):
            if len(floor) == limit and score + rise < floor[0]:
                break
            moved = move(i, score)
            kept[i] = moved
            if len(floor) < limit:
                heapq.heappush(floor, moved)
            elif moved > floor[0]:
                heapq.heapreplace(floor, moved)
        scores.clear()
        scores.update(kept)

    def _matched(self, i: int, terms: set[str]) -> tuple[str, ...]:
        return tuple(name for name, counts in zip(FIELDS, self._fields[i], strict=True) if not terms.isdisjoint(counts))

    def similar(self, doc_index: int, limit: int = 5) -> list[tuple[int, float]]:
        """Candidate near-duplicates of `docs[doc_index]` (by name and description, and by purpose vector when
        given), similarity in [0, 1]."""
        if self._blocker is None:
            names = [frozenset(f[0]) for f in self._fields]
            self._blocker = Blocker(names, [frozenset(f[1]) for f in self._fields], self._purposes)
        return self._blocker.similar(doc_index, limit)


EXACT_MARGIN = 1.0  # an exactly named tool scores this much above the best other candidate (per rank)


def exact_keys(server: str, tool: str) -> tuple[str, ...]:
    """The forms a request may name a tool by exactly: its name, `server/tool`, `server__tool` and the
    host form `mcp__server__tool` (compared case-insensitively)."""
    s, t = server.lower(), tool.lower()
    return (t, f"{s}/{t}", f"{s}__{t}", f"mcp__{s}__{t}")


def _exact_form(query: str) -> str:
    return query.strip().strip("`'\"").strip().lower()


Row = tuple[dict[str, int], ...]  # per field of FIELDS, term -> count
_ROWS: dict[tuple[SearchDoc, bool], Row] = {}  # a doc's row, per process: scopes that share tools share rows
_ROWS_LIMIT = 200_000


def _row(doc: SearchDoc, param_examples: bool) -> Row:
    """A doc's term counts per field (read-only: indexes share them)."""
    key = (doc, param_examples)
    row = _ROWS.get(key)
    if row is not None:
        return row
    params: list[str] = []
    if doc.params and param_examples:
        params = _text.terms(" ".join(f"{name} {text}" for name, text in doc.params))
    elif doc.params:
        params = _text.terms(" ".join(f"{name} {_text.without_examples(text)}" for name, text in doc.params))
    row = (
        _rank.count(_text.name_terms(doc.tool)),
        _rank.count(_text.terms(doc.description)),
        _rank.count(params),
        _server_counts(doc.server, doc.server_description),
        _rank.count(_text.terms(" ".join(doc.examples))) if doc.examples else {},
    )
    if len(_ROWS) < _ROWS_LIMIT:
        _ROWS[key] = row
    return row


@functools.lru_cache(maxsize=4096)
def _server_counts(server: str, description: str) -> dict[str, int]:
    return _rank.count(_text.terms(server) + _text.terms(description))


def semantic_available() -> bool:
    """Whether the embedding model can run here (numpy, onnxruntime, tokenizers, the packaged weights)."""
    return _embed_id.available()


def embed_texts(doc: SearchDoc) -> list[str]:
    """What the model reads for a doc: its server, name words and description, then each example on its own."""
    name = " ".join(_text.words(doc.tool))
    return [f"{doc.server} {name}: {doc.description}", *doc.examples]


def doc_vectors(docs: Iterable[SearchDoc], cache: VectorCache | None = None) -> list[list[Vector]]:
    """Per doc, the unit vectors of its `embed_texts`: from `cache`, encoding (and caching) only what is new.

    Raises ImportError when `semantic_available()` is false and something has to be encoded.
    """
    from quiver._search._embed import encode

    cache = cache if cache is not None else VectorCache(None)
    per_doc = [embed_texts(d) for d in docs]
    flat = cache.vectors([t for texts in per_doc for t in texts], encode)
    out: list[list[Vector]] = []
    pos = 0
    for texts in per_doc:
        out.append([v for v in flat[pos : pos + len(texts)] if v is not None])
        pos += len(texts)
    return out


def build_index(
    docs: Iterable[SearchDoc],
    *,
    semantic: bool = True,
    root: Path | None = None,
    config: SearchConfig | None = None,
) -> SearchIndex:
    """The index commands and the gateway use: semantic (vectors cached under `root`) unless `semantic` is
    False or the model cannot run here, then lexical alone."""
    all_docs = list(docs)
    if not semantic or not all_docs or not semantic_available():
        return SearchIndex.build(all_docs, config=config)
    cache = VectorCache(root)
    vectors = doc_vectors(all_docs, cache)
    cache.save()
    return SearchIndex.build(all_docs, config=config, vectors=vectors)


def docs_from_tools(server: str, tools: Iterable[Mapping[str, JSON]], server_description: str = "") -> list[SearchDoc]:
    """SearchDocs from MCP Tool JSON objects: name, description, inputSchema.properties.*.description."""
    docs: list[SearchDoc] = []
    for tool in tools:
        schema = tool.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        params: list[tuple[str, str]] = []
        if isinstance(props, Mapping):
            for pname, prop in props.items():
                desc = prop.get("description") if isinstance(prop, Mapping) else None
                params.append((str(pname), desc if isinstance(desc, str) else ""))
        desc = tool.get("description")
        required = schema.get("required") if isinstance(schema, Mapping) else None
        numbers = 0
        if isinstance(props, Mapping) and isinstance(required, list):
            numbers = sum(1 for r in required if _numeric(props.get(r)))
        docs.append(
            SearchDoc(
                server=server,
                tool=str(tool.get("name", "")),
                description=desc if isinstance(desc, str) else "",
                params=tuple(params),
                server_description=server_description,
                required_numbers=numbers,
            )
        )
    return docs


def _numeric(prop: JSON) -> bool:
    kind = prop.get("type") if isinstance(prop, Mapping) else None
    return kind in ("number", "integer") or (isinstance(kind, list) and bool({"number", "integer"} & set(kind)))
