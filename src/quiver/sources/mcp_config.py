"""Read MCP server configs in every dialect into Server objects that keep their positions.

Dialects: `mcpServers` (Copilot CLI `mcp-config.json`, `.mcp.json`, `.github/mcp.json`, Claude Code),
`servers` + `inputs` (VS Code `.vscode/mcp.json`, JSONC), agent frontmatter `mcp-servers`, and the
`mcp_servers` list form with `preload` / `preload_tools`. Variable references stay as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from quiver.errors import InputError, Position
from quiver.model import JSON, Location, Server, Transport
from quiver.sources._json import parse_json
from quiver.sources.files import inside, read_text

# Discovery order: a later file's definition of the same server wins (see docs/decisions.md).
CONFIG_FILES = (
    ".copilot/mcp-config.json",
    "mcp-config.json",
    ".vscode/mcp.json",
    ".github/mcp.json",
    ".mcp.json",
)
JSONC_FILES = frozenset({".vscode/mcp.json"})
TYPE_MAP: dict[str, Transport] = {
    "local": "stdio",
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}


class PositionedNode(Protocol):
    """What both the JSON and the YAML readers produce."""

    value: JSON
    line: int
    column: int

    def get(self, key: str) -> PositionedNode | None: ...

    @property
    def key_positions(self) -> dict[str, tuple[int, int]]: ...


@dataclass(frozen=True, slots=True)
class McpConfig:
    path: str
    dialect: str
    servers: tuple[Server, ...]
    inputs: tuple[str, ...] = ()  # VS Code input ids


def discover_configs(root: Path, extra: Iterable[str] = ()) -> list[str]:
    """The standard config files present, then `mcp_configs` entries (a glob adds every file it matches)."""
    found = [rel for rel in CONFIG_FILES if (root / rel).is_file()]
    for entry in extra:
        if any(c in entry for c in "*?["):
            matched = sorted(
                p.relative_to(root).as_posix()
                for p in root.glob(entry)
                if p.is_file() and inside(root, p.relative_to(root))
            )
        else:
            matched = [entry]  # a named file that is missing is an error when it is read
        found.extend(rel for rel in matched if rel not in found)
    return found


def read_mcp_config(root: Path, rel: str) -> McpConfig:
    text = read_text(root / rel, rel)
    node = parse_json(text, rel, jsonc=rel in JSONC_FILES or rel.endswith(".jsonc"))
    return config_from_node(node, rel)


def config_from_node(node: PositionedNode, rel: str) -> McpConfig:
    if not isinstance(node.value, dict):
        raise InputError(
            "an MCP config must be a JSON object",
            position=Position(rel, node.line, node.column),
            hint='write {"mcpServers": {...}}',
        )
    keys = node.value.keys()
    if "mcpServers" in keys:
        return McpConfig(rel, "mcpServers", tuple(servers_from_mapping(_child(node, "mcpServers"), rel)))
    if "servers" in keys:
        inputs = tuple(
            item["id"]
            for item in node.value.get("inputs") or []
            if isinstance(item, dict) and isinstance(item.get("id"), str)
        )
        servers = tuple(servers_from_mapping(_child(node, "servers"), rel, dialect="vscode"))
        return McpConfig(rel, "vscode", servers, inputs)
    if "mcp_servers" in keys:
        return McpConfig(rel, "list", tuple(servers_from_list(_child(node, "mcp_servers"), rel)))
    raise InputError(
        "unknown MCP config dialect: no `mcpServers`, `servers` or `mcp_servers` key",
        position=Position(rel, node.line, node.column),
        hint='use {"mcpServers": {...}} (Copilot, Claude), {"servers": {...}} (VS Code) or {"mcp_servers": [...]}',
    )


def _child(node: PositionedNode, key: str) -> PositionedNode:
    child = node.get(key)
    assert child is not None
    return child


def servers_from_mapping(node: PositionedNode, rel: str, *, dialect: str = "mcpServers") -> Iterator[Server]:
    if not isinstance(node.value, dict):
        raise InputError(
            f"`{'mcp-servers' if dialect == 'agent' else 'servers'}` must map server names to objects",
            position=Position(rel, node.line, node.column),
            hint='write {"name": {"command": ...}}',
        )
    for name in node.value:
        child = node.get(name)
        assert child is not None
        line, col = node.key_positions[name]
        yield server_from_node(name, child, Location(rel, line, col), dialect)


def servers_from_list(node: PositionedNode, rel: str) -> Iterator[Server]:
    items = getattr(node, "items", None)
    if not isinstance(node.value, list) or items is None:
        raise InputError(
            "`mcp_servers` must be a list of objects",
            position=Position(rel, node.line, node.column),
            hint='write [{"name": "github", "preload": false}]',
        )
    for item in items:
        name = item.value.get("name") if isinstance(item.value, dict) else None
        if not isinstance(name, str) or not name:
            raise InputError(
                "each `mcp_servers` entry needs a `name`",
                position=Position(rel, item.line, item.column),
                hint='add "name": "<server>"',
            )
        yield server_from_node(name, item, Location(rel, item.line, item.column), "list")


def server_from_node(name: str, node: PositionedNode, location: Location, dialect: str) -> Server:
    raw = node.value
    if not isinstance(raw, dict):
        raise InputError(
            f"server `{name}` must be an object",
            position=Position(location.file, node.line, node.column),
            hint="give it `command` and `args`, or `url`",
        )
    key_locations = {k: Location(location.file, ln, col) for k, (ln, col) in node.key_positions.items()}
    raw_type = raw.get("type") if isinstance(raw.get("type"), str) else None
    command = raw.get("command") if isinstance(raw.get("command"), str) else None
    url = raw.get("url") if isinstance(raw.get("url"), str) else None
    transport: Transport | None
    if raw_type is not None:
        transport = TYPE_MAP.get(raw_type.lower())
    else:
        transport = "stdio" if command else ("http" if url else None)
    defer = raw.get("deferTools")
    preload = raw.get("preload")
    timeout = raw.get("timeout")
    return Server(
        name=name,
        location=location,
        dialect=dialect,
        type=transport,
        raw_type=raw_type,
        command=command,
        args=_strings(raw.get("args")),
        env=_pairs(raw.get("env")),
        cwd=raw.get("cwd") if isinstance(raw.get("cwd"), str) else None,
        url=url,
        headers=_pairs(raw.get("headers")),
        tools=_allow_list(raw.get("tools")),
        defer_tools=defer if defer in ("auto", "never") else None,
        preload=preload if isinstance(preload, bool) else None,
        preload_tools=_strings(raw.get("preload_tools")),
        timeout_ms=timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else None,
        description=raw.get("description") if isinstance(raw.get("description"), str) else None,
        raw=raw,
        key_locations=key_locations,
    )


def _strings(value: JSON) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str | int | float) and not isinstance(v, bool))
    return ()


def _pairs(value: JSON) -> tuple[tuple[str, str], ...]:
    if isinstance(value, dict):
        return tuple((str(k), v if isinstance(v, str) else _scalar(v)) for k, v in value.items())
    return ()


def _scalar(value: JSON) -> str:
    import json

    return json.dumps(value)


def _allow_list(value: JSON) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, list):
        return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
    return None
