"""The tool search index shared by lint, route tests and the runtime.

Each tool is a `SearchDoc` with four fields: its name (split on case and separators, plus adjacent word
pairs joined), its description, its parameters (names and descriptions) and its server (name and
description). Ranking is BM25F (`_search/_rank.py`): term frequencies are length-normalised per field,
weighted, summed, then saturated once, so a word in the name counts more than the same word deep in a
parameter description. A query becomes concepts (`_search/_query.py`): one per word, each holding the
word and its alternatives (synonyms from `_search/_vocab.py`, typo corrections, compounds); a tool scores
the best alternative of each concept, and its sum is scaled by the share of the request's words it covers.
Literal values (URLs, paths, selectors, quoted text) count by their shape more than by their words.

The lexical path is pure Python plus rapidfuzz (imported on the first query with an unknown word).
`bench/search.py` measures each of these ideas. An optional embedding model (`_search/_embed.py`,
all-MiniLM-L6-v2 on numpy) can be fused in when vectors are given to `build`. Results are
deterministic: ties are broken by (server, tool).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from quiver._search import _embed, _rank, _text
from quiver._search._query import QueryOptions, analyze
from quiver._search._similar import Blocker

__all__ = [
    "SearchConfig",
    "SearchDoc",
    "SearchHit",
    "SearchIndex",
    "doc_vectors",
    "docs_from_tools",
    "semantic_available",
]

FIELDS = ("name", "description", "params", "server")
JSON = Any  # the JSON boundary: MCP Tool objects as parsed


@dataclass(frozen=True, slots=True)
class SearchDoc:
    """One tool as the index sees it."""

    server: str
    tool: str
    description: str = ""
    params: tuple[tuple[str, str], ...] = ()  # (parameter name, parameter description)
    server_description: str = ""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: higher scores are better; scores compare only within one query."""

    server: str
    tool: str
    score: float
    matched: tuple[str, ...]  # which fields matched: "name", "description", "params", "server"


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Ranking knobs. The defaults are the shipped ranking; the benchmark switches parts off to measure them."""

    weights: tuple[float, float, float, float] = (3.0, 1.0, 0.4, 0.6)  # name, description, params, server
    b: tuple[float, float, float, float] = (0.3, 0.75, 0.75, 0.75)
    k1: float = 1.2
    coordination: float = 1.0  # score x (share of the request's words matched) ** coordination
    semantic_weight: float = 0.5  # with vectors: lexical score / best lexical score + this x cosine
    semantic_depth: int = 50  # candidates taken from each of the lexical and the embedding ranking
    query: QueryOptions = field(default_factory=QueryOptions)


class SearchIndex:
    """An immutable BM25F index over tools; build it once, query it many times."""

    __slots__ = ("_blocker", "_config", "_fields", "_postings", "_semantic", "_typo_candidates", "docs")

    docs: tuple[SearchDoc, ...]

    def __init__(
        self,
        docs: tuple[SearchDoc, ...],
        rows: list[tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int]]],
        config: SearchConfig,
        vectors: Sequence[Sequence[float]] | None = None,
    ) -> None:
        self.docs = docs
        self._config = config
        self._postings = _rank.bm25f(rows, config.weights, config.b, config.k1)
        self._fields = rows
        self._typo_candidates = tuple(sorted(t for t in self._postings if len(t) >= 4 and not t.isdigit()))
        self._blocker: Blocker | None = None
        self._semantic: _embed.Semantic | None = None
        if vectors is not None:
            if len(vectors) != len(docs):
                raise ValueError(f"{len(vectors)} vectors for {len(docs)} docs")
            self._semantic = _embed.Semantic(vectors)

    @classmethod
    def build(
        cls,
        docs: Iterable[SearchDoc],
        *,
        config: SearchConfig | None = None,
        vectors: Sequence[Sequence[float]] | None = None,
    ) -> SearchIndex:
        """Index `docs`; their order is kept, and `similar()` refers to docs by position.

        `vectors` (one per doc, from `doc_vectors`) turn on the optional embedding ranking, fused with
        the lexical one; it needs the optional packages (`semantic_available()`) and costs one sentence
        encode per query (about 10 ms on two cores), so lint and tests leave it off.
        """
        all_docs = tuple(docs)
        server_counts: dict[tuple[str, str], dict[str, int]] = {}
        rows = []
        for doc in all_docs:
            key = (doc.server, doc.server_description)
            server = server_counts.get(key)
            if server is None:
                server = _rank.count(_text.terms(doc.server) + _text.terms(doc.server_description))
                server_counts[key] = server
            params = _text.terms(" ".join(f"{name} {text}" for name, text in doc.params)) if doc.params else []
            rows.append(
                (
                    _rank.count(_text.name_terms(doc.tool)),
                    _rank.count(_text.terms(doc.description)),
                    _rank.count(params),
                    server,
                )
            )
        return cls(all_docs, rows, config or SearchConfig(), vectors)

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The best `limit` tools for `query`, best first; an empty list when nothing matches."""
        config = self._config
        concepts = analyze(query, self._postings, self._typo_candidates, config.query)
        scores = _rank.score(self._postings, concepts, config.coordination)
        if self._semantic is not None:
            scores = self._semantic.fuse(query, scores, depth=config.semantic_depth, weight=config.semantic_weight)
        if not scores or limit <= 0:
            return []
        docs = self.docs
        best = heapq.nsmallest(limit, scores.items(), key=lambda kv: (-kv[1], docs[kv[0]].server, docs[kv[0]].tool))
        terms = {t for c in concepts for t in c.terms}
        return [SearchHit(docs[i].server, docs[i].tool, round(s, 6), self._matched(i, terms)) for i, s in best]

    def _matched(self, i: int, terms: set[str]) -> tuple[str, ...]:
        return tuple(name for name, counts in zip(FIELDS, self._fields[i], strict=True) if not terms.isdisjoint(counts))

    def similar(self, doc_index: int, limit: int = 5) -> list[tuple[int, float]]:
        """Candidate near-duplicates of `docs[doc_index]` (by name and description), similarity in [0, 1]."""
        if self._blocker is None:
            self._blocker = Blocker([frozenset(f[0]) for f in self._fields], [frozenset(f[1]) for f in self._fields])
        return self._blocker.similar(doc_index, limit)


def semantic_available() -> bool:
    """Whether the optional embedding model can run here (numpy, tokenizers, safetensors, the weights)."""
    return _embed.available()


def doc_vectors(docs: Iterable[SearchDoc]) -> list[tuple[float, ...]]:
    """Unit-length sentence embeddings of docs (name and description), for `SearchIndex.build(vectors=...)`.

    About 40 ms per tool on two cores: compute them when a manifest is compiled and store them.
    Raises ImportError when `semantic_available()` is false.
    """
    return _embed.encode([_embed_text(d) for d in docs])


def _embed_text(doc: SearchDoc) -> str:
    name = " ".join(_text.words(doc.tool))
    return f"{name}: {doc.description}"


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
        docs.append(
            SearchDoc(
                server=server,
                tool=str(tool.get("name", "")),
                description=desc if isinstance(desc, str) else "",
                params=tuple(params),
                server_description=server_description,
            )
        )
    return docs
