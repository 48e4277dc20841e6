"""Purpose vectors recorded in the lock file, so `quiver lint` never runs the model (issue 18).

`quiver snapshot` encodes each tool's purpose text (name words and first sentence, `_similar.purpose_text`)
and writes it to the lock's `vectors` section: float16, little-endian, base64, keyed by the text key. The
ROUTE pair rules read them from there: the lock is the catalog of record, so what lint finds depends on the
project's files only, never on the state of `.quiver/cache`, and a cold lint loads no model. A text the lock
has no vector for (an older lock, a hand-written one, agent descriptions) is compared by its words alone.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from quiver._search._embed_id import DIM, MODEL_ID
from quiver._search._index import semantic_available
from quiver._search._similar import purpose_text
from quiver._search._vectors import Vector, VectorCache, text_key
from quiver.extras import install_hint, note_once
from quiver.model import Lock
from quiver.sources.lock import ServerCatalog

_FORMAT = f"<{DIM}e"


def pack(vector: Sequence[float]) -> str:
    return base64.b64encode(struct.pack(_FORMAT, *vector)).decode("ascii")


def unpack(text: str) -> Vector | None:
    try:
        return struct.unpack(_FORMAT, base64.b64decode(text, validate=True))
    except (ValueError, struct.error):
        return None  # malformed: no vector, the words decide


def catalog_purposes(catalogs: Iterable[ServerCatalog]) -> list[str]:
    """The purpose text of every tool of `catalogs`."""
    out = []
    for catalog in catalogs:
        for tool in catalog.tools:
            description = tool.get("description")
            out.append(purpose_text(str(tool.get("name", "")), description if isinstance(description, str) else ""))
    return out


def lock_vectors(
    catalogs: Sequence[ServerCatalog], old: Lock | None, root: Path | None
) -> tuple[str, dict[str, str]] | None:
    """What `render_lock` records: (model id, packed vector per purpose text key) for every tool of `catalogs`.

    Reuses the old lock's vectors and the vector cache; encodes the rest. Without the model (the light
    install) nothing is encoded: the vectors the old lock or the cache has are kept, the other tools get
    none (one note on stderr), and a lock that had none still gets none (None)."""
    encodes = semantic_available()
    texts = catalog_purposes(catalogs)
    known = dict(old.vectors) if old is not None and old.vector_model == MODEL_ID else {}
    if not encodes and not known:
        return None
    todo = [t for t in texts if text_key(t) not in known]
    if todo:
        cache = VectorCache(root)
        missing = cache.missing(todo)
        encoder = None
        if missing and encodes:
            from quiver._search._embed import encode

            encoder = encode
        for text, vector in zip(todo, cache.vectors(todo, encoder), strict=True):
            if vector is not None:
                known[text_key(text)] = pack(vector)
        cache.save()
    wanted = {text_key(t) for t in texts}
    kept = {k: v for k, v in known.items() if k in wanted}
    if not encodes and len(kept) < len(wanted):
        note_once(
            "lock-vectors",
            f"note: {len(wanted) - len(kept)} tool(s) got no purpose vector in the lock, so the ROUTE pair rules "
            "compare them by their words (the `semantic` extra encodes them: "
            f"{install_hint('semantic')}, then `quiver snapshot` again)",
        )
    return MODEL_ID, kept


def recorded(lock: Lock | None, texts: Sequence[str]) -> list[Vector | None]:
    """Per text, the vector the lock records for it (None when it records none for this model)."""
    vectors: Mapping[str, str] = lock.vectors if lock is not None and lock.vector_model == MODEL_ID else {}
    out: list[Vector | None] = []
    for text in texts:
        packed = vectors.get(text_key(text))
        out.append(unpack(packed) if packed is not None else None)
    return out
