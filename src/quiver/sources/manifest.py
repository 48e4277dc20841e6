"""Compiled manifests (`quiver compile` output, `build/quiver/<agent>.json`): the one reader.

Every command that reads manifests comes here: `quiver serve` (runtime/_manifest.py builds the gateway's
view), `quiver advise` and `quiver budget` (advise/manifest.py builds advice's view).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quiver.errors import InputError, Position, UsageError
from quiver.sources._json import load_json_fast
from quiver.sources.files import MAX_LOCK_BYTES, read_text


def read_manifest(path: Path, shown: str | None = None) -> Any:  # Any: JSON as read, checked by the caller's view
    """The JSON of one manifest file; InputError (naming the file) when it is missing, unreadable or not JSON."""
    where = shown or str(path)
    if not path.exists():
        raise InputError(f"manifest `{where}` does not exist", hint="run `quiver compile` first")
    text = read_text(path, where, limit=MAX_LOCK_BYTES)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InputError(f"not JSON: {exc}", position=Position(where), hint="run `quiver compile` again") from None
    except RecursionError:
        return load_json_fast(text, where)  # raises the InputError naming where the nesting is too deep


def is_manifest(data: Any) -> bool:
    """Whether parsed JSON has a manifest's shape (an `agent` object and a `tools` list)."""
    return isinstance(data, dict) and isinstance(data.get("agent"), dict) and isinstance(data.get("tools"), list)


def read_manifests(root: Path, out: str) -> list[dict[str, Any]]:
    """Every compiled manifest in `out` (relative to `root`), by agent id; UsageError when there is none."""
    directory = root / out
    files = sorted(p for p in directory.glob("*.json") if p.name != "index.json") if directory.is_dir() else []
    manifests = [data for path in files if is_manifest(data := read_manifest(path, str(path.relative_to(root))))]
    if not manifests:
        raise UsageError(f"no compiled manifests in `{out}/`", hint="run `quiver compile` first")
    return sorted(manifests, key=lambda m: str(m["agent"]["id"]))
