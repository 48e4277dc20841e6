"""Read MCP server configs in every dialect into Server objects that keep their positions.

Dialects (`Dialect`): `mcpServers` (Copilot CLI `mcp-config.json`, `.mcp.json`, `.github/mcp.json`, Claude
Code), `servers` + `inputs` (VS Code `.vscode/mcp.json`, JSONC), agent frontmatter `mcp-servers`, and the
`mcp_servers` list form with `preload` / `preload_tools`. Variable references stay as written. Each file
records who reads it (`McpConfig.reader`), which decides its valid keys and variable syntax.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from quiver.errors import InputError, Position
from quiver.model import JSON, Dialect, Location, Server, Transport
from quiver.sources._json import parse_json
from quiver.sources.files import inside, read_text

# Discovery order: a later file's definition of the same server wins (docs/decisions.md, "MCP config discovery
# and overlays").
CONFIG_FILES = (
    ".copilot/mcp-config.json",
    "mcp-config.json",
    ".vscode/mcp.json",
    ".github/mcp.json",
    ".mcp.json",
)
JSONC_FILES = frozenset({".vscode/mcp.json"})
# The dialects of a config file, by the top-level key that marks each (the mcp-config schema's `oneOf`).
CONFIG_DIALECTS: Mapping[Dialect, str] = {
    Dialect.MCP_SERVERS: "mcpServers",
    Dialect.VSCODE: "servers",
    Dialect.LIST: "mcp_servers",
}
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


class Reader(StrEnum):
    """Who reads a server entry: decides its required keys and the variable syntax expanded in it (formats
    research §2, the interpolation matrix §2.7)."""

    VSCODE = "vscode"
    AGENT = "agent"  # an agent's `mcp-servers`
    COPILOT = "copilot"
    SHARED = "shared"
    OTHER = "other"
    QUIVER = "quiver"  # quiver's list form: it adjusts loading, no host reads it

    @property
    def label(self) -> str:
        """How messages name the hosts that read it."""
        return _READER_LABELS[self]


_READER_LABELS: Mapping[Reader, str] = {
    Reader.VSCODE: "VS Code",
    Reader.AGENT: "the Copilot cloud agent and CLI",
    Reader.COPILOT: "Copilot (CLI and cloud agent)",
    Reader.SHARED: "Claude Code and the Copilot CLI",
    Reader.OTHER: "MCP hosts",
    Reader.QUIVER: "quiver",
}


def reader_of(path: str, dialect: Dialect) -> Reader:
    """Which host reads a config file (project-relative `path`) written in `dialect`."""
    if dialect == Dialect.VSCODE:
        return Reader.VSCODE
    if dialect == Dialect.AGENT:
        return Reader.AGENT
    if dialect == Dialect.LIST:
        return Reader.QUIVER
    base = path.rsplit("/", 1)[-1]
    if base == "mcp-config.json" or path == ".github/mcp.json":
        return Reader.COPILOT
    if base == ".mcp.json":
        return Reader.SHARED
    return Reader.OTHER


@dataclass(frozen=True, slots=True)
class McpConfig:
    path: str
    dialect: Dialect
    servers: tuple[Server, ...]
    inputs: tuple[str, ...] = ()  # VS Code input ids

    @property
    def reader(self) -> Reader:
        """Who reads the file."""
        return reader_of(self.path, self.dialect)


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
    dialect = next((d for d, key in CONFIG_DIALECTS.items() if key in keys), None)
    if dialect is not None:
        section = _child(node, CONFIG_DIALECTS[dialect])
        inputs: tuple[str, ...] = ()
        if dialect == Dialect.LIST:
            servers = tuple(servers_from_list(section, rel))
        else:
            servers = tuple(servers_from_mapping(section, rel, dialect=dialect))
        if dialect == Dialect.VSCODE:
            inputs = tuple(
                item["id"]
                for item in node.value.get("inputs") or []
                if isinstance(item, dict) and isinstance(item.get("id"), str)
            )
        return McpConfig(rel, dialect, servers, inputs)
    raise InputError(
        f"unknown MCP config dialect: no {_either(CONFIG_DIALECTS.values())} key",
        position=Position(rel, node.line, node.column),
        hint='use {"mcpServers": {...}} (Copilot, Claude), {"servers": {...}} (VS Code) or {"mcp_servers": [...]}',
    )


def _either(keys: Iterable[str]) -> str:
    quoted = [f"`{key}`" for key in keys]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _child(node: PositionedNode, key: str) -> PositionedNode:
    child = node.get(key)
    assert child is not None
    return child


def servers_from_mapping(node: PositionedNode, rel: str, *, dialect: Dialect = Dialect.MCP_SERVERS) -> Iterator[Server]:
    if not isinstance(node.value, dict):
        raise InputError(
            f"`{'mcp-servers' if dialect == Dialect.AGENT else 'servers'}` must map server names to objects",
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
        yield server_from_node(name, item, Location(rel, item.line, item.column), Dialect.LIST)


def server_from_node(name: str, node: PositionedNode, location: Location, dialect: Dialect) -> Server:
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

    return json.dumps(value)


def _allow_list(value: JSON) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, list):
        return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
    return None
