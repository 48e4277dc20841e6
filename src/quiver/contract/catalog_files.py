"""Tool catalogs for `quiver diff` from a tools/list JSON or a directory of per-tool snapshots.

Unlike `quiver snapshot --import`, a diff side is read leniently: a tool entry that cannot be read is kept,
marked with the reason (`diff.UNREADABLE`), so that the diff reports it as one finding on that tool and
compares every other tool. Only a side that cannot be read at all (not JSON, no tool list) is an error.
An empty directory is an empty catalog (the first commit of a history). Every file has the same size
limit, whatever the side kind.
"""

from __future__ import annotations

from pathlib import Path

from quiver.errors import InputError
from quiver.model import JSON
from quiver.sources.imports import SNAPSHOT_SUFFIXES, tools_list

UNREADABLE = "quiver_unreadable"  # the key diff.py reads; kept here so reading a side imports no diff code

Catalog = dict[str, dict[str, JSON]]


def read_tools_list(data: JSON, shown: str) -> Catalog:
    """`{"tools": [...]}`, a JSON-RPC response holding one, or a bare list."""
    _, tools = tools_list(data, shown, ", a lock file")
    out: Catalog = {}
    for index, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        key = name if isinstance(name, str) and name else f"(tool #{index + 1})"
        out[key] = _checked(tool, key)
    return out


def read_snapshot_dir(path: Path, shown: str) -> tuple[Catalog, dict[str, str]]:
    """Every `*.snap`/`*.json` file of the directory; a feature-flag variant (`*_ff_*`) loses to the plain file.
    Also {tool: the file it was read from, as `shown`/file name}, where the diff locates its findings."""
    from quiver.sources._json import load_json_fast
    from quiver.sources.files import MAX_LOCK_BYTES, read_text

    out: Catalog = {}
    files: dict[str, str] = {}
    for file in sorted(p for p in path.iterdir() if p.is_file() and p.suffix in SNAPSHOT_SUFFIXES):
        rel = f"{shown.rstrip('/')}/{file.name}"
        try:
            tool: JSON = load_json_fast(read_text(file, rel, limit=MAX_LOCK_BYTES), rel)
        except InputError as error:
            tool = {"name": file.stem, UNREADABLE: f"cannot be read: {error.one_line()}"}
        key = add_snapshot(out, file.name, tool)
        if key is not None:
            files[key] = rel
    return out, files


def add_snapshot(out: Catalog, filename: str, tool: JSON) -> str | None:
    """Add one per-tool snapshot (also used for snapshots read from git); the tool's key, None when skipped."""
    stem = filename.rsplit(".", 1)[0]
    name = tool.get("name") if isinstance(tool, dict) else None
    key = name if isinstance(name, str) and name else stem
    if key in out and "_ff_" in filename:
        return None
    out[key] = _checked(tool, key)
    return key


def _checked(tool: JSON, key: str) -> dict[str, JSON]:
    if not isinstance(tool, dict):
        return {"name": key, UNREADABLE: f"is a JSON {type(tool).__name__}, not a Tool object"}
    if not isinstance(tool.get("name"), str) or not tool["name"]:
        return {"name": key, UNREADABLE: "has no `name`"}
    return tool
