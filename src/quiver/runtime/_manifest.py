"""A compiled manifest as the gateway reads it: tools by exposed name and by (server, tool), servers.

Pure: no `mcp` import, no I/O but reading the file. The manifest is the gateway's whole contract: the
agent's resolved tool set (anything else is refused), each tool's pinned definition and sha256, its
load decision and execution policy, and how to reach each server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quiver.errors import InputError
from quiver.metatools import META_TOOL_NAMES
from quiver.model import JSON
from quiver.sources.manifest import read_manifest

SUPPORTED_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1's `load` was the gateway's; version 2 keeps it under `gateway`
ONE_LINE_CHARS = 160


@dataclass(frozen=True, slots=True)
class ManifestServer:
    name: str
    description: str
    transport: Mapping[str, JSON]  # {type, command, args, env, cwd, url, headers}, variable references verbatim
    timeout_ms: int | None
    source: str = ""  # where the project defines it, `file:line:col` relative to the project ("" if unknown)


@dataclass(frozen=True, slots=True)
class ManifestTool:
    server: str
    name: str  # the upstream's own name
    exposed: str  # the model-facing name (`names.quiver`)
    load: str  # "preloaded" | "deferred"
    sha256: str
    definition: Mapping[str, JSON]  # the MCP Tool object as the server sent it when snapshotted
    policy: Mapping[str, JSON]
    tokens: int = 0  # what its schema costs in the model's context
    capabilities: tuple[str, ...] = ()  # quiver.capabilities labels: untrusted_input, private_data, ...

    @property
    def description(self) -> str:
        value = self.definition.get("description")
        return value if isinstance(value, str) else ""

    @property
    def input_schema(self) -> Mapping[str, JSON]:
        value = self.definition.get("inputSchema")
        return value if isinstance(value, Mapping) else {"type": "object"}

    def exposed_definition(self) -> dict[str, JSON]:
        """The pinned definition under its model-facing name: what tools/list serves."""
        return {**self.definition, "name": self.exposed}


@dataclass(frozen=True, slots=True)
class Manifest:
    path: str
    agent_id: str
    agent_name: str
    servers: Mapping[str, ManifestServer]
    tools: tuple[ManifestTool, ...]
    by_exposed: Mapping[str, ManifestTool] = field(default_factory=dict)
    by_key: Mapping[tuple[str, str], ManifestTool] = field(default_factory=dict)
    initial_tokens: int = 0  # the budget's tokens before the first tool call
    flows_enforce: bool = False  # `[flows] enforce`: sinks need approval once a session read untrusted input

    @property
    def preloaded(self) -> tuple[ManifestTool, ...]:
        return tuple(t for t in self.tools if t.load == "preloaded")

    @property
    def deferred(self) -> tuple[ManifestTool, ...]:
        return tuple(t for t in self.tools if t.load != "preloaded")

    @property
    def meta_tools_active(self) -> bool:
        """The meta-tools are served while anything is deferred."""
        return any(t.load != "preloaded" for t in self.tools)

    def server_tools(self, server: str) -> tuple[ManifestTool, ...]:
        return tuple(t for t in self.tools if t.server == server)

    def instructions(self) -> str | None:
        """The server index the model reads at initialize: which servers hold deferred tools, and what for."""
        deferred: dict[str, int] = {}
        for tool in self.deferred:
            deferred[tool.server] = deferred.get(tool.server, 0) + 1
        if not deferred:
            return None
        lines = [
            f"Tools of agent `{self.agent_id}`. More tools than those listed are available: find them with "
            "search_tools or list_tools, read their schema with describe_tool, call them directly or with call_tool.",
        ]
        for name in sorted(deferred):
            description = self.servers[name].description if name in self.servers else ""
            lines.append(f"- {name} ({deferred[name]} more tools){': ' + description if description else ''}")
        return "\n".join(lines)


def load_manifest(path: str | Path) -> Manifest:
    """Read and index a compiled manifest (`quiver compile` output). Raises InputError when unusable."""
    return parse_manifest(read_manifest(Path(path)), str(path))


def parse_manifest(data: Any, where: str = "<manifest>") -> Manifest:
    if not isinstance(data, dict) or "tools" not in data or "agent" not in data:
        raise InputError(f"`{where}` is not a quiver manifest", hint="pass a file written by `quiver compile`")
    version = data.get("manifestVersion")
    if version not in READABLE_VERSIONS:
        raise InputError(
            f"`{where}` has manifestVersion {version!r}; this quiver serves version {SUPPORTED_VERSION}",
            hint="recompile it with this quiver",
        )
    try:
        servers = {
            str(s["name"]): ManifestServer(
                name=str(s["name"]),
                description=str(s.get("description") or ""),
                transport=dict(s.get("transport") or {}),
                timeout_ms=int(s["timeout_ms"]) if s.get("timeout_ms") is not None else None,
                source=str(s.get("source") or ""),
            )
            for s in data.get("servers", [])
        }
        tools = tuple(
            ManifestTool(
                server=str(t["server"]),
                name=str(t["name"]),
                exposed=str((t.get("names") or {}).get("quiver") or f"{t['server']}__{t['name']}"),
                load=str((t.get("gateway") or t).get("load", "deferred")),
                sha256=str(t["sha256"]),
                definition=dict(t["definition"]),
                policy=dict(t.get("policy") or {}),
                tokens=int(t.get("tokens") or 0),
                capabilities=tuple(str(c) for c in t.get("capabilities") or ()),
            )
            for t in data["tools"]
        )
        agent = data["agent"]
        agent_id = str(agent["id"])
        agent_name = str(agent.get("name") or agent_id)
        initial_tokens = int((data.get("gateway_budget") or data.get("budget") or {}).get("initial_tokens") or 0)
        flows_enforce = (data.get("flows") or {}).get("enforce") is True
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"`{where}` is malformed: {type(exc).__name__}: {exc}", hint="run `quiver compile` again"
        ) from None
    by_exposed: dict[str, ManifestTool] = {}
    for tool in tools:
        if tool.exposed in by_exposed or tool.exposed in META_TOOL_NAMES:
            raise InputError(f"`{where}`: two tools are exposed as `{tool.exposed}`", hint="run `quiver compile` again")
        by_exposed[tool.exposed] = tool
    return Manifest(
        path=where,
        agent_id=agent_id,
        agent_name=agent_name,
        servers=servers,
        tools=tools,
        by_exposed=by_exposed,
        by_key={(t.server, t.name): t for t in tools},
        initial_tokens=initial_tokens,
        flows_enforce=flows_enforce,
    )


def one_line(text: str, limit: int = ONE_LINE_CHARS) -> str:
    """The first line of a description, cut at a word boundary when longer than `limit`."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"
