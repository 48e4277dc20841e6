"""The lock file `quiver.lock.json`: what each server really serves, byte-stable, no timestamps.

Shape (schemas/lock.schema.json):
{"lockVersion": 1, "encoding": "o200k_base",
 "servers": {NAME: {"serverInfo": {...}, "instructions": str?, "protocolVersion": str?,
                    "tools": [{"sha256": HEX, "tokens": INT, "tool": {MCP Tool object}}]}},
 "vectors": {"model": ID, "purpose": {TEXT KEY: BASE64 float16}}?}
`vectors` sorts after `servers`, so recording them moves no server or tool line.
Servers and tools are sorted by name; every object's keys are sorted; two-space indent; final newline.
Reading takes any layout: positions come from the positioned JSON reader, not from that layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from quiver.errors import InputError, InputErrors, Position
from quiver.jsonout import pretty
from quiver.model import JSON, Location, Lock, LockedServer, LockedTool, sha256_json
from quiver.sources._json import Node, parse_json
from quiver.sources.files import MAX_LOCK_BYTES, read_text

LOCK_VERSION = 1
# Positions down to the keys of each tool object (root 0, `servers` 1, a server 2, `tools` 3, an entry 4,
# `tool` 5): the values inside a tool (its schemas) are read whole, at the C scanner's speed.
_POSITIONED_DEPTH = 6


@dataclass(frozen=True, slots=True)
class ServerCatalog:
    """A server's catalog before it is locked: from a live snapshot or an import."""

    name: str
    server_info: Mapping[str, JSON]
    instructions: str | None
    protocol_version: str | None
    tools: tuple[Mapping[str, JSON], ...]


def read_lock(root: Path, rel: str) -> Lock | None:
    """The lock at `rel`, or None when the project has none yet."""
    path = root / rel
    if not path.is_file():
        return None
    return parse_lock(read_text(path, rel, limit=MAX_LOCK_BYTES), rel)


def parse_lock(text: str, rel: str) -> Lock:
    root = parse_json(text, rel, whole_from=_POSITIONED_DEPTH)
    data = root.value
    section = root.get("servers")
    if not isinstance(data, dict) or section is None or not isinstance(section.value, dict):
        raise InputError(
            "not a quiver lock file: no `servers` object",
            position=Position(rel, 1, 1),
            hint="regenerate it with `quiver snapshot`",
        )
    servers: dict[str, LockedServer] = {}
    edited: list[InputError] = []
    for name, entry_node in section.children.items():
        entry = entry_node.value
        at = Location(rel, *section.key_positions[name])
        listed = entry_node.get("tools")
        if not isinstance(entry, dict) or listed is None or not isinstance(listed.value, list):
            raise InputError(
                f"server `{name}` has no `tools` list",
                position=Position(rel, at.line, at.column),
                hint="regenerate it with `quiver snapshot`",
            )
        tools = []
        for item_node in listed.items:
            tool_node = item_node.get("tool")
            tool = tool_node.value if tool_node is not None else None
            if tool_node is None or not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                raise InputError(
                    f"server `{name}` has a tool entry without `tool.name`",
                    position=Position(rel, item_node.line, item_node.column),
                    hint="regenerate it with `quiver snapshot`",
                )
            item = item_node.value
            assert isinstance(item, dict)
            where = _name_location(rel, tool_node)
            tokens = item.get("tokens")
            pin = sha256_json(tool)
            if item.get("sha256", pin) != pin:  # the definition was edited by hand, or the pin
                edited.append(
                    InputError(
                        f"tool `{name}/{tool['name']}`: its `sha256` does not match its definition (edited by hand?)",
                        position=Position(rel, where.line, where.column),
                        hint=f"`quiver snapshot` writes the lock, never a hand: restore {rel} from version "
                        "control, or delete it and run `quiver snapshot`",
                    )
                )
            tools.append(
                LockedTool(
                    server=name,
                    name=tool["name"],
                    definition=tool,
                    sha256=pin,
                    tokens=tokens if isinstance(tokens, int) else None,
                    location=where,
                )
            )
        info = entry.get("serverInfo")
        servers[name] = LockedServer(
            name=name,
            server_info=info if isinstance(info, dict) else {},
            instructions=entry.get("instructions") if isinstance(entry.get("instructions"), str) else None,
            protocol_version=entry.get("protocolVersion") if isinstance(entry.get("protocolVersion"), str) else None,
            tools=tuple(sorted(tools, key=lambda t: t.name)),
            location=at,
        )
    if edited:
        raise InputErrors(tuple(edited))
    encoding = data.get("encoding")
    model, vectors = _vectors(data.get("vectors"))
    return Lock(
        path=rel,
        encoding=encoding if isinstance(encoding, str) else "",
        servers=servers,
        vector_model=model,
        vectors=vectors,
    )


def _name_location(rel: str, tool: Node) -> Location:
    """Where a tool is written: its `name` key (the tool object's place when the name comes first)."""
    return Location(rel, *tool.key_positions.get("name", (tool.line, tool.column)))


def _vectors(section: object) -> tuple[str, dict[str, str]]:
    """The model id and the purpose vectors of a lock's `vectors` section (none when absent or malformed)."""
    if not isinstance(section, dict) or not isinstance(section.get("model"), str):
        return "", {}
    purpose = section.get("purpose")
    if not isinstance(purpose, dict):
        return "", {}
    return section["model"], {k: v for k, v in purpose.items() if isinstance(v, str)}


def render_lock(
    catalogs: Iterable[ServerCatalog],
    known_tokens: Mapping[str, int] | None = None,
    vectors: tuple[str, Mapping[str, str]] | None = None,
) -> str:
    """The lock file text: sorted, canonical, with a sha256 and token count per tool.

    `known_tokens` maps tool sha256 to a count already in a lock: those tools skip the tokenizer.
    `vectors` (model id, purpose vectors by text key) is recorded as the `vectors` section when non-empty.
    """
    known = known_tokens or {}
    from quiver.tokens import ENCODING, count_tool

    servers: dict[str, JSON] = {}
    for catalog in sorted(catalogs, key=lambda c: c.name):
        entries = []
        seen: set[str] = set()
        for tool in sorted(catalog.tools, key=lambda t: str(t.get("name"))):
            name = str(tool.get("name"))
            if name in seen:
                raise InputError(
                    f"server `{catalog.name}` serves two tools named `{name}`",
                    hint="tool names must be unique within a server",
                )
            seen.add(name)
            pin = sha256_json(tool)
            entry: dict[str, JSON] = {"sha256": pin, "tokens": known.get(pin) or count_tool(tool), "tool": tool}
            entries.append(entry)
        body: dict[str, JSON] = {"serverInfo": dict(catalog.server_info), "tools": entries}
        if catalog.instructions:
            body["instructions"] = catalog.instructions
        if catalog.protocol_version:
            body["protocolVersion"] = catalog.protocol_version
        servers[catalog.name] = body
    doc: dict[str, JSON] = {"encoding": ENCODING, "lockVersion": LOCK_VERSION, "servers": servers}
    if vectors is not None and vectors[1]:
        doc["vectors"] = {"model": vectors[0], "purpose": dict(vectors[1])}
    return pretty(doc)


def known_tokens(lock: Lock | None) -> dict[str, int]:
    if lock is None:
        return {}
    return {t.sha256: t.tokens for s in lock.servers.values() for t in s.tools if t.tokens is not None}


def catalogs_from_lock(lock: Lock) -> list[ServerCatalog]:
    return [
        ServerCatalog(
            name=s.name,
            server_info=s.server_info,
            instructions=s.instructions,
            protocol_version=s.protocol_version,
            tools=tuple(t.definition for t in s.tools),
        )
        for s in lock.servers.values()
    ]
