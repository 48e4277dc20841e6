"""The gateway's tool index: built once at start-up from the manifest, vectors read from the cache.

`serve` passes a `SearchSetup` (project root for the cache, the config's `search` mode and examples);
the index is built before the first session, encoding only tools the cache lacks, and the model is
loaded then too, so a `search_tools` call costs one query encode (a few ms) plus the ranking.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from quiver._search._scope import with_examples
from quiver.errors import QuiverError
from quiver.extras import note_semantic_once
from quiver.search import SearchDoc, SearchIndex, build_index, docs_from_tools

if TYPE_CHECKING:
    from quiver.runtime._manifest import Manifest

logger = logging.getLogger("quiver.search")


@dataclass(frozen=True, slots=True)
class SearchSetup:
    root: Path | None = None  # where `.quiver/cache/` lives; None: vectors kept in memory only
    semantic: bool = True
    examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def manifest_docs(manifest: Manifest) -> list[SearchDoc]:
    docs: list[SearchDoc] = []
    for server in sorted({t.server for t in manifest.tools}):
        description = manifest.servers[server].description if server in manifest.servers else ""
        tools = [t.definition for t in manifest.server_tools(server)]
        docs.extend(docs_from_tools(server, tools, description))
    return docs


def gateway_index(manifest: Manifest, setup: SearchSetup) -> SearchIndex:
    """The index of the manifest's tools; with the embedding on, the model is loaded and run once here."""
    docs = with_examples(manifest_docs(manifest), setup.examples)
    if setup.semantic:
        note_semantic_once()  # without the `semantic` extra: one note on stderr, then words alone
    try:
        index = build_index(docs, semantic=setup.semantic, root=setup.root)
        if index.semantic:
            index.search("warm up", 1)  # the model's first run allocates its buffers: before any caller waits
    except (ImportError, OSError, QuiverError) as exc:  # a broken model install: serve on words alone
        logger.warning("semantic tool search is off (%s); ranking by words alone", exc)
        index = build_index(docs, semantic=False)
    return index
