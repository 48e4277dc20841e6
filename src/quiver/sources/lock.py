"""The lock file `quiver.lock.json`: what each server really serves, byte-stable, no timestamps.

Shape (schemas/lock.schema.json):
{"lockVersion": 1, "encoding": "o200k_base",
 "servers": {NAME: {"serverInfo": {...}, "instructions": str?, "protocolVersion": str?,
                    "tools": [{"sha256": HEX, "tokens": INT, "tool": {MCP Tool object}}]}},
 "vectors": {"model": ID, "purpose": {TEXT KEY: BASE64 float16}}?}
`vectors` sorts after `servers`, so recording them moves no server or tool line.
Servers and tools are sorted by name; every object's keys are sorted; two-space indent; final newline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from quiver.errors import InputError, InputErrors, Position
from quiver.jsonout import pretty
from quiver.model import JSON, Location, Lock, LockedServer, LockedTool, sha256_json
from quiver.sources._json import load_json_fast
from quiver.sources.files import MAX_LOCK_BYTES, read_text

LOCK_VERSION = 1
_SERVER_LINE = re.compile(r'^    "((?:[^"\\]|\\.)*)": \{$')
_NAME_LINE = re.compile(r'^            "name": "((?:[^"\\]|\\.)*)",?$')


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
    data = load_json_fast(text, rel)
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        raise InputError(
            "not a quiver lock file: no `servers` object",
            position=Position(rel, 1, 1),
            hint="regenerate it with `quiver snapshot`",
        )
    lines = _line_index(text)
    servers: dict[str, LockedServer] = {}
    edited: list[InputError] = []
    for name, entry in data["servers"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("tools"), list):
            raise InputError(
                f"server `{name}` has no `tools` list",
                position=Position(rel, lines.get((name, None), 0), 1),
                hint="regenerate it with `quiver snapshot`",
            )
        tools = []
        for item in entry["tools"]:
            tool = item.get("tool") if isinstance(item, dict) else None
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                raise InputError(
                    f"server `{name}` has a tool entry without `tool.name`",
                    position=Position(rel, lines.get((name, None), 0), 1),
                    hint="regenerate it with `quiver snapshot`",
                )
            tokens = item.get("tokens")
            pin = sha256_json(tool)
            if item.get("sha256", pin) != pin:  # the definition was edited by hand, or the pin
                edited.append(
                    InputError(
                        f"tool `{name}/{tool['name']}`: its `sha256` does not match its definition (edited by hand?)",
                        position=Position(rel, lines.get((name, tool["name"]), 0), 1),
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
                    location=Location(
                        rel, lines.get((name, tool["name"]), 0), 13 if (name, tool["name"]) in lines else 0
                    ),
                )
            )
        info = entry.get("serverInfo")
        servers[name] = LockedServer(
            name=name,
            server_info=info if isinstance(info, dict) else {},
            instructions=entry.get("instructions") if isinstance(entry.get("instructions"), str) else None,
            protocol_version=entry.get("protocolVersion") if isinstance(entry.get("protocolVersion"), str) else None,
            tools=tuple(sorted(tools, key=lambda t: t.name)),
            location=Location(rel, lines.get((name, None), 0), 5 if (name, None) in lines else 0),
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


def _vectors(section: object) -> tuple[str, dict[str, str]]:
    """The model id and the purpose vectors of a lock's `vectors` section (none when absent or malformed)."""
    if not isinstance(section, dict) or not isinstance(section.get("model"), str):
        return "", {}
    purpose = section.get("purpose")
    if not isinstance(purpose, dict):
        return "", {}
    return section["model"], {k: v for k, v in purpose.items() if isinstance(v, str)}


_MARK_LINE = re.compile(f"(?m){_SERVER_LINE.pattern[:-1]}(?=\n|\\Z)|{_NAME_LINE.pattern[:-1]}(?=\n|\\Z)")


def _line_index(text: str) -> dict[tuple[str, str | None], int]:
    """Line numbers of servers and tools in a lock written by `render_lock` (best effort otherwise).

    One scan of the whole text for the marked lines (about 10,000 in a lock of 10,000 tools), counting the
    newlines between them, rather than a match per line (half a million)."""
    out: dict[tuple[str, str | None], int] = {}
    server: str | None = None
    number, last = 1, 0
    for match in _MARK_LINE.finditer(text):
        number += text.count("\n", last, match.start())
        last = match.start()
        if match.group(1) is not None:
            server = _unquoted(match.group(1))
            out[(server, None)] = number
        elif server is not None:
            out.setdefault((server, _unquoted(match.group(2))), number)
    return out


def _unquoted(body: str) -> str:
    """A JSON string literal's text (without its quotes) as the string it means; most have no escape."""
    return json.loads(f'"{body}"') if "\\" in body else body


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
