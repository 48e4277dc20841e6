"""Import a server's catalog from files: a tools/list JSON or a directory of per-tool JSON snapshots."""

from __future__ import annotations

from pathlib import Path

from quiver.errors import InputError, Position
from quiver.model import JSON
from quiver.sources._json import load_json_fast
from quiver.sources.files import MAX_LOCK_BYTES, read_text
from quiver.sources.lock import ServerCatalog

SNAPSHOT_SUFFIXES = (".snap", ".json")


def tools_list(data: JSON, shown: str, alternatives: str = "") -> tuple[JSON, list[JSON]]:
    """The tools/list result in `data` (`{"tools": [...]}`, a JSON-RPC response holding one, or a bare
    list) and its tool list; else an input error naming `shown` (`alternatives`: what else would do)."""
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise InputError(
            "no tool list found",
            position=Position(shown, 1, 1),
            hint=f'expected a tools/list result {{"tools": [...]}}{alternatives} or a directory of per-tool snapshots',
        )
    return data, tools


def import_catalog(path: Path, server: str, shown: str | None = None) -> ServerCatalog:
    """Read `{"tools": [...]}` (also a JSON-RPC response or a bare list) or a directory of Tool objects."""
    name = shown or str(path)
    if path.is_dir():
        return _from_directory(path, server, name)
    data, tools = tools_list(load_json_fast(read_text(path, name, limit=MAX_LOCK_BYTES), name), name)
    info: dict[str, JSON] = {}
    instructions = None
    if isinstance(data, dict):
        if isinstance(data.get("serverInfo"), dict):
            info = data["serverInfo"]
        if isinstance(data.get("instructions"), str):
            instructions = data["instructions"]
    return ServerCatalog(server, info or {"name": server}, instructions, None, tuple(_checked(tools, name)))


def _from_directory(path: Path, server: str, shown: str) -> ServerCatalog:
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in SNAPSHOT_SUFFIXES)
    if not files:
        raise InputError(
            "directory holds no *.snap or *.json tool snapshots",
            position=Position(shown),
            hint="point --import at a tools/list JSON file or a __toolsnaps__ directory",
        )
    tools: dict[str, JSON] = {}
    for file in files:
        rel = f"{shown.rstrip('/')}/{file.name}"
        tool = load_json_fast(read_text(file, rel), rel)
        (checked,) = _checked([tool], rel)
        # feature-flag variants (`*_ff_*.snap`) repeat a tool name: the plain file wins
        if checked["name"] in tools and "_ff_" in file.name:
            continue
        tools[checked["name"]] = checked
    return ServerCatalog(server, {"name": server}, None, None, tuple(tools.values()))


def _checked(tools: list[JSON], shown: str) -> list[dict[str, JSON]]:
    out = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
            raise InputError(
                f"tool #{i + 1} has no `name`",
                position=Position(shown),
                hint="each tool must be an MCP Tool object with a name and an inputSchema",
            )
        if not isinstance(tool.get("inputSchema"), dict):
            raise InputError(
                f"tool `{tool['name']}` has no inputSchema object",
                position=Position(shown),
                hint='an MCP Tool needs `inputSchema`; use {"type": "object"} for a tool without arguments',
            )
        out.append(tool)
    return out
