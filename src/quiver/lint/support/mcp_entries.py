"""Every MCP server entry the configs family checks, with the host that reads it.

Entries come from the project's config files and from agents' `mcp-servers`. The host decides which
keys, types and variable syntaxes are valid (formats research §2, the interpolation matrix §2.7).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from quiver.lint.engine import LintContext
from quiver.model import Server
from quiver.project import HOST_SERVERS

# host -> how messages name it
HOST_NAMES = {
    "vscode": "VS Code",
    "agent": "the Copilot cloud agent and CLI",
    "copilot": "Copilot (CLI and cloud agent)",
    "shared": "Claude Code and the Copilot CLI",
    "other": "MCP hosts",
    "quiver": "quiver",
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One server entry as written, where it was written, and who reads it."""

    server: Server
    file: str
    host: str  # vscode | agent | copilot | shared | other | quiver
    inputs: tuple[str, ...] | None  # VS Code input ids of the file; None outside VS Code
    agent: str | None  # the agent whose `mcp-servers` holds the entry
    overlay: bool  # adjusts loading of a server defined elsewhere; defines nothing itself

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def raw_keys(self) -> frozenset[str]:
        return frozenset(self.server.raw)


def host_of(path: str, dialect: str) -> str:
    """Which host reads a config file: decides required keys and the variable syntax it expands."""
    if dialect in ("vscode", "agent"):
        return dialect
    if dialect == "list":
        return "quiver"
    base = path.rsplit("/", 1)[-1]
    if base == "mcp-config.json" or path == ".github/mcp.json":
        return "copilot"
    if base == ".mcp.json":
        return "shared"
    return "other"


def _defines(server: Server) -> bool:
    return server.is_definition or server.raw_type is not None


def entries(ctx: LintContext) -> Iterator[Entry]:
    project = ctx.project
    defined_in: dict[str, set[str]] = {}
    for cfg in project.configs:
        for server in cfg.servers:
            if _defines(server):
                defined_in.setdefault(server.name, set()).add(cfg.path)
    for cfg in project.configs:
        host = host_of(cfg.path, cfg.dialect)
        inputs = cfg.inputs if host == "vscode" else None
        for server in cfg.servers:
            elsewhere = defined_in.get(server.name, set()) - {cfg.path}
            overlay = not _defines(server) and (host == "quiver" or bool(elsewhere))
            yield Entry(server, cfg.path, host, inputs, None, overlay)
    for agent in project.agents:
        for server in agent.mcp_servers:
            known = server.name in project.servers or server.name in HOST_SERVERS
            yield Entry(server, agent.path, "agent", None, agent.id, not _defines(server) and known)
