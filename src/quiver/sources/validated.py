"""The validated-outputs cache (`.quiver/cache/validated.json`): the sha256 of each unit of compiled output
(`quiver.compile.CheckUnits`: a manifest without its tools, a sampled tool entry, the index) that quiver
already checked against its schema, so a repeat `quiver compile` skips checking the same JSON again.

Keyed by quiver's version and the sha256 of the schemas used, so a changed schema or quiver checks everything
again. Only identical JSON is skipped. Its one reader and writer; git-ignored; `QUIVER_NO_CACHE=1` stops
writing it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from quiver.sources.files import write_cache

VALIDATED_FILE = ".quiver/cache/validated.json"


def read_validated(path: Path, key: str) -> set[str]:
    """The unit hashes checked under `key` (quiver version and schema hashes); empty when absent or other."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("units"), list):
        return set()
    return {t for t in data["units"] if isinstance(t, str)}


def write_validated(path: Path, key: str, units: Iterable[str]) -> None:
    if os.environ.get("QUIVER_NO_CACHE"):
        return
    with contextlib.suppress(OSError):  # a cache: the next run checks again
        write_cache(path, json.dumps({"key": key, "units": sorted(set(units))}, separators=(",", ":")) + "\n")
