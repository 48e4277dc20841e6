"""Every MCP server entry the configs family checks, with the host that reads it.

Entries come from the project's config files and from agents' `mcp-servers`. The host decides which
keys, types and variable syntaxes are valid (formats research §2, the interpolation matrix §2.7); the
reader records who reads each config file (`McpConfig.reader`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from quiver.lint.engine import LintContext
from quiver.model import Server
from quiver.project import HOST_SERVERS
from quiver.sources.mcp_config import Reader


@dataclass(frozen=True, slots=True)
class Entry:
    """One server entry as written, where it was written, and who reads it."""

    server: Server
    file: str
    host: Reader
    inputs: tuple[str, ...] | None  # VS Code input ids of the file; None outside VS Code
    agent: str | None  # the agent whose `mcp-servers` holds the entry
    overlay: bool  # adjusts loading of a server defined elsewhere; defines nothing itself

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def raw_keys(self) -> frozenset[str]:
        return frozenset(self.server.raw)


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
        host = cfg.reader
        inputs = cfg.inputs if host == Reader.VSCODE else None
        for server in cfg.servers:
            elsewhere = defined_in.get(server.name, set()) - {cfg.path}
            overlay = not _defines(server) and (host == Reader.QUIVER or bool(elsewhere))
            yield Entry(server, cfg.path, host, inputs, None, overlay)
    for agent in project.agents:
        for server in agent.mcp_servers:
            known = server.name in project.servers or server.name in HOST_SERVERS
            yield Entry(server, agent.path, Reader.AGENT, None, agent.id, not _defines(server) and known)
