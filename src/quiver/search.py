"""The tool search index shared by lint, route tests and the runtime.

Each tool is a `SearchDoc` with five fields: its name (split on case and separators, plus adjacent word
pairs joined), its description, its parameters (names and descriptions), its server (name and
description) and the examples its user wrote (`examples = [...]` in config). Ranking is BM25F
(`_search/_rank.py`): term frequencies are length-normalised per field, weighted, summed, then saturated
once, so a word in the name counts more than the same word deep in a parameter description. A query
becomes concepts (`_search/_query.py`): one per word, each holding the word and its alternatives
(synonyms from `_search/_vocab.py`, typo corrections of unknown words, compounds); a tool scores the best
alternative of each concept, and its sum is scaled by the share of the request's words it covers.
Literal values (URLs, paths, repository slugs, quoted text) count by their shape more than by their words.

Semantic search is the default (`build_index`): all-MiniLM-L6-v2 (`_search/_embed.py`, int8 ONNX) reads
each tool's name and description and each example; the vectors are cached per text and model in
`.quiver/cache/vectors/` (`_search/_vectors.py`), so an unchanged tool is never encoded twice, and the
query is encoded per search (a few ms). Lexical and cosine scores are fused by a z-score sum
(`_search/_fuse.py`). `search = "lexical"` in config, or `semantic=False`, keeps the pure-Python lexical
path. Results are deterministic: ties are broken by (server, tool).
"""

from __future__ import annotations

from quiver._search._doc import SearchDoc
from quiver._search._index import (
    Explained,
    SearchConfig,
    SearchHit,
    SearchIndex,
    build_index,
    doc_vectors,
    docs_from_tools,
    embed_texts,
    semantic_available,
)
from quiver._search._similar import SimilarityIndex

__all__ = [
    "Explained",
    "SearchConfig",
    "SearchDoc",
    "SearchHit",
    "SearchIndex",
    "SimilarityIndex",
    "build_index",
    "doc_vectors",
    "docs_from_tools",
    "embed_texts",
    "semantic_available",
]
