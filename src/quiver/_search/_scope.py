"""Which tools an index holds and how it is built, for each place that searches.

`project_docs` (every locked server) and `agent_docs` (one agent's resolved tools) carry the examples
users wrote in config (`[tools."server/tool"] examples = [...]`); route cases are never read here, so a
route test cannot pass by finding its own query. `project_index` builds the index the config asks for
(`search = "semantic"` by default, `"lexical"` or `--lexical` for none of the model), with the vector
cache under the project root. `warm_project` encodes what is new in a project, `warm_catalogs` what
`snapshot` brought in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from quiver._search._doc import SearchDoc
from quiver._search._index import SearchIndex, build_index, docs_from_tools, embed_texts, semantic_available
from quiver._search._similar import purpose_text
from quiver._search._vectors import Vector, VectorCache
from quiver.extras import note_semantic_once

if TYPE_CHECKING:
    from quiver.config import Config
    from quiver.project import Project
    from quiver.resolve import ResolvedAgent
    from quiver.sources.lock import ServerCatalog

Examples = Mapping[str, tuple[str, ...]]


def with_examples(docs: Iterable[SearchDoc], examples: Examples) -> list[SearchDoc]:
    """`docs` with each tool's configured examples (keyed `server/tool`)."""
    out = []
    for doc in docs:
        given = examples.get(f"{doc.server}/{doc.tool}")
        out.append(replace(doc, examples=given) if given else doc)
    return out


def project_docs(project: Project) -> list[SearchDoc]:
    """Every locked server's tools (cut by the project's allow-list), with the config description."""
    from quiver.references import catalog_of

    lock = project.lock
    if lock is None:
        return []
    docs: list[SearchDoc] = []
    for name in sorted(lock.servers):
        server = project.servers.get(name)
        tools = catalog_of(server, lock) if server is not None else lock.servers[name].tools
        description = (server.description or "") if server is not None else ""
        docs.extend(docs_from_tools(name, [t.definition for t in tools or ()], description))
    return with_examples(docs, project.config.examples)


def agent_docs(resolved: ResolvedAgent, examples: Examples | None = None) -> list[SearchDoc]:
    """An agent's tools as the gateway indexes its manifest: per server (sorted), with the server's description."""
    described = {s.name: s.description or "" for s in resolved.servers}
    docs: list[SearchDoc] = []
    for server in sorted({t.server for t in resolved.tools}):
        tools = [t.tool.definition for t in resolved.tools if t.server == server]
        docs.extend(docs_from_tools(server, tools, described.get(server, "")))
    return with_examples(docs, examples or {})


def semantic_for(project: Project, lexical: bool = False) -> bool:
    return not lexical and project.config.search == "semantic"


def project_index(project: Project, docs: Iterable[SearchDoc], *, lexical: bool = False) -> SearchIndex:
    """The index for `docs` as the project's config asks: semantic unless `lexical` or `search = "lexical"`
    (without the `semantic` extra, lexical with one note on stderr)."""
    semantic = semantic_for(project, lexical)
    if semantic:
        note_semantic_once()
    return build_index(docs, semantic=semantic, root=project.root)


def purpose_vectors(project: Project, docs: Sequence[SearchDoc]) -> list[Vector | None] | None:
    """Per doc, the vector of its `purpose_text` as the lock records it (`_lock_vectors`), for the ROUTE pair
    rules; None with `search = "lexical"`. Nothing is encoded and the model is never loaded: the findings depend
    on the project's files, not on `.quiver/cache` (a doc without a recorded vector is compared by its words)."""
    if not semantic_for(project) or not docs:
        return None
    from quiver._search._lock_vectors import recorded

    vectors = recorded(project.lock, [purpose_text(d.tool, d.description) for d in docs])
    return vectors if any(v is not None for v in vectors) else None


def _texts(project: Project) -> list[str]:
    """Every text the project's searches and the lock's purpose vectors embed: tools (with examples), purposes."""
    docs = project_docs(project)
    return [t for d in docs for t in embed_texts(d)] + [purpose_text(d.tool, d.description) for d in docs]


def warm_project(project: Project) -> int:
    """Encode and cache every text the project embeds that is not cached yet; how many were new.
    Skipped for `search = "lexical"`, without the model, and when caches are off (`QUIVER_NO_CACHE`)."""
    if not semantic_for(project) or os.environ.get("QUIVER_NO_CACHE") or not semantic_available():
        return 0
    return _warm(project.root, _texts(project))


def warm_catalogs(root: Path, config: Config, catalogs: Iterable[ServerCatalog]) -> int:
    """What `snapshot` warms once it wrote the lock: the search texts of the catalogs it captured or imported
    (with the examples `config` gives them), so its work follows what came in, not the size of the lock; how
    many were new. The other servers' texts were warmed when they came in (a search or `serve` encodes what a
    deleted cache lost), and the tools' purpose texts are the lock's (`_lock_vectors`)."""
    if config.search != "semantic" or os.environ.get("QUIVER_NO_CACHE") or not semantic_available():
        return 0
    docs = with_examples([d for c in catalogs for d in docs_from_tools(c.name, c.tools)], config.examples)
    return _warm(root, [t for d in docs for t in embed_texts(d)])


def _warm(root: Path, texts: Sequence[str]) -> int:
    cache = VectorCache(root)
    todo = cache.missing(texts)
    if todo:
        from quiver._search._embed import encode

        cache.vectors(todo, encode)
        cache.save()
    return len(todo)
