"""The model: frozen dataclasses shared by every command. No I/O here."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

JSON = Any  # the JSON boundary: values parsed from or written to JSON/YAML
Severity = Literal["error", "warning", "info"]
Load = Literal["preloaded", "deferred"]
SideEffect = Literal["read_only", "reversible_write", "irreversible_write"]
Transport = Literal["stdio", "http", "sse"]
AgentKind = Literal["copilot", "claude", "chatmode"]

SEVERITY_ORDER: Mapping[str, int] = {"info": 0, "warning": 1, "error": 2}


class Dialect(StrEnum):
    """How a server entry is written: in an MCP config file of one of the dialects quiver reads
    (`sources/mcp_config.CONFIG_DIALECTS`, the mcp-config schema), or elsewhere."""

    MCP_SERVERS = "mcpServers"  # {"mcpServers": {...}}: .mcp.json, mcp-config.json, .github/mcp.json
    VSCODE = "vscode"  # {"servers": {...}, "inputs": [...]}: .vscode/mcp.json (JSONC)
    LIST = "list"  # {"mcp_servers": [...]}: quiver's list form, `preload` / `preload_tools`
    AGENT = "agent"  # an agent's frontmatter `mcp-servers` (`mcpServers` for Claude Code)
    CONFIG = "config"  # a `[[mcp_servers]]` entry of the quiver config
    HOST = "host"  # a server the host brings, with no entry of the project's


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was read: a project-relative posix path, 1-based line and column (0 = unknown)."""

    file: str
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.column or 1}"


@dataclass(frozen=True, slots=True)
class ToolRef:
    """One entry of an agent's `tools` field, as written."""

    text: str
    location: Location


@dataclass(frozen=True, slots=True)
class Server:
    """An MCP server definition from any config dialect (or an overlay from the `mcp_servers` list form)."""

    name: str
    location: Location
    dialect: Dialect
    type: Transport | None = None
    raw_type: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    tools: tuple[str, ...] | None = None  # allow-list; None = not given
    defer_tools: Literal["auto", "never"] | None = None
    preload: bool | None = None
    preload_tools: tuple[str, ...] = ()
    timeout_ms: int | None = None
    description: str | None = None
    raw: Mapping[str, JSON] = field(default_factory=dict)
    key_locations: Mapping[str, Location] = field(default_factory=dict)

    @property
    def is_definition(self) -> bool:
        """True when the entry says how to reach the server (an overlay only adjusts loading)."""
        return self.command is not None or self.url is not None


@dataclass(frozen=True, slots=True)
class RepairedValue:
    """A frontmatter value the host quotes itself before the file parses (Claude Code): where the value
    starts, as written, and as the host rewrites it."""

    key: str
    location: Location
    value: str
    rewritten: str


@dataclass(frozen=True, slots=True)
class Agent:
    """A custom agent file: frontmatter fields plus the body."""

    id: str
    path: str
    kind: AgentKind
    location: Location
    frontmatter: Mapping[str, JSON]
    key_locations: Mapping[str, Location]
    body: str
    body_line: int
    name: str | None = None
    description: str | None = None
    target: str | None = None
    tools: tuple[ToolRef, ...] | None = None  # None = unset (all tools)
    models: tuple[str, ...] = ()
    mcp_servers: tuple[Server, ...] = ()
    deferred_tool_loading: bool = False
    disallowed: tuple[ToolRef, ...] = ()  # Claude Code's `disallowedTools`
    skills: tuple[str, ...] = ()  # the skills the agent names (`skills`): their bodies are loaded up front
    host: str | None = None  # the host an `agents` glob gives it (quiver.toml `[[agents]] host`)
    session: bool = False  # a host's main session (quiver.toml `sessions`), not an agent file
    yaml_error: str = ""  # the frontmatter is not YAML, and its host reads it only after `repaired` (AGT026)
    repaired: tuple[RepairedValue, ...] = ()

    @property
    def prompt_sha256(self) -> str:
        return _sha256_hex(self.body.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class LockedTool:
    """One tool as its server really serves it: the MCP Tool object verbatim, its pin and token count."""

    server: str
    name: str
    definition: Mapping[str, JSON]
    sha256: str
    tokens: int | None
    location: Location

    @property
    def description(self) -> str:
        value = self.definition.get("description")
        return value if isinstance(value, str) else ""

    @property
    def input_schema(self) -> JSON:
        return self.definition.get("inputSchema", {})

    @property
    def annotations(self) -> Mapping[str, JSON]:
        value = self.definition.get("annotations")
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class LockedServer:
    name: str
    server_info: Mapping[str, JSON]
    instructions: str | None
    protocol_version: str | None
    tools: tuple[LockedTool, ...]
    location: Location

    @property
    def catalog_sha256(self) -> str:
        return _sha256_hex("".join(t.sha256 for t in self.tools).encode())


@dataclass(frozen=True, slots=True)
class Lock:
    path: str
    encoding: str
    servers: Mapping[str, LockedServer]
    # Purpose vectors recorded by `quiver snapshot` (DESIGN: lock `vectors`): the model id, and per text key
    # (sha256 of the purpose text, 32 hex) the float16 vector, base64. Empty for a lock written without them.
    vector_model: str = ""
    vectors: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Edit:
    """A safe textual fix: replace [start, end) of `file` (1-based line/column, end exclusive) by `text`."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found by lint, compile or diff. The fingerprint ignores line numbers."""

    rule: str
    name: str
    severity: Severity
    message: str
    location: Location | None = None
    hint: str | None = None
    server: str | None = None
    tool: str | None = None
    agent: str | None = None
    witness: JSON = None
    fixes: tuple[Edit, ...] = ()

    @property
    def fingerprint(self) -> str:
        logical = [
            self.rule,
            self.location.file if self.location else "",
            self.agent or "",
            self.server or "",
            self.tool or "",
            _normalize_message(self.message),
        ]
        return _sha256_hex("\x1f".join(logical).encode("utf-8"))[:32]

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "fingerprint": self.fingerprint,
        }
        if self.location is not None:
            out["file"] = self.location.file
            out["line"] = self.location.line
            out["column"] = self.location.column
            if self.location.end_line:
                out["end_line"] = self.location.end_line
                out["end_column"] = self.location.end_column
        for key in ("hint", "server", "tool", "agent"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.witness is not None:
            out["witness"] = self.witness
        return out


def finding_from_json(data: Mapping[str, JSON]) -> Finding:
    """The inverse of `Finding.to_json` (fixes are not serialized)."""
    location = None
    if "file" in data:
        location = Location(
            str(data["file"]),
            int(data.get("line", 0)),
            int(data.get("column", 0)),
            int(data.get("end_line", 0)),
            int(data.get("end_column", 0)),
        )
    return Finding(
        rule=str(data["rule"]),
        name=str(data["name"]),
        severity=data["severity"],
        message=str(data["message"]),
        location=location,
        hint=data.get("hint"),
        server=data.get("server"),
        tool=data.get("tool"),
        agent=data.get("agent"),
        witness=data.get("witness"),
    )


def _sha256_hex(data: bytes) -> str:
    import hashlib  # on first digest: its OpenSSL start-up costs 2 ms a run that needs none

    return hashlib.sha256(data).hexdigest()


_NUMBERS = re.compile(r"\d+")


def _normalize_message(message: str) -> str:
    return _NUMBERS.sub("#", " ".join(message.split())).lower()


def canonical_json(value: JSON) -> str:
    """Compact JSON with sorted keys: the form every sha256 pin is computed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_json(value: JSON) -> str:
    return _sha256_hex(canonical_json(value).encode("utf-8"))
