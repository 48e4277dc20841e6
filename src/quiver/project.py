"""Load a project: config, agent files, MCP configs and the lock file, with every read error collected."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from quiver.config import Config, array_key_positions, load_config
from quiver.errors import InputError, InputErrors, Position, QuiverError
from quiver.hosts.model import HostId
from quiver.model import Agent, Dialect, Location, Lock, Server
from quiver.sources.agents import AgentFile, discover_agents, read_agent
from quiver.sources.files import read_text
from quiver.sources.lock import read_lock
from quiver.sources.mcp_config import CONFIG_FILES, McpConfig, discover_configs, read_mcp_config, server_from_node
from quiver.sources.skills import Skill, SkillFile, discover_skills, read_skill

# Host built-in MCP servers (DESIGN §3): known to exist even when no config defines them.
HOST_SERVERS = {
    "github": "Copilot cloud agent",
    "playwright": "Copilot cloud agent and CLI",
    "github-mcp-server": "Copilot CLI",
    "fetch": "Copilot CLI",
    "time": "Copilot CLI",
}
T = TypeVar("T")
_LOADING_FIELDS = ("preload", "preload_tools", "defer_tools", "description", "tools", "timeout_ms")


@dataclass(frozen=True, slots=True)
class Project:
    root: Path
    config: Config
    agents: tuple[Agent, ...]
    configs: tuple[McpConfig, ...]
    servers: Mapping[str, Server]  # project-level servers after merging files and overlays
    lock: Lock | None
    errors: tuple[QuiverError, ...]  # every input file that could not be read (the rest still load)
    blocking: tuple[QuiverError, ...] = ()  # the project-wide ones among them (config, MCP config, lock)
    duplicates: tuple[InputError, ...] = ()  # agent files whose id an earlier file has (not compiled)
    agent_ids: Mapping[str, str] = field(default_factory=dict)  # path -> agent id of every agent file found
    overlays: tuple[Server, ...] = ()  # the quiver config's `[[mcp_servers]]` entries
    skills: tuple[Skill, ...] = ()  # every readable SKILL.md of the project
    unlisted: tuple[AgentFile, ...] = ()  # agent-like files a plugin's `agents` list leaves out (AGT027)

    @property
    def sessions(self) -> tuple[Agent, ...]:
        """The hosts' main sessions the config asks for (`sessions`): each an agent without a file, named
        `@<host>`, that carries every tool the host sees."""
        return tuple(session_agent(self.config, host) for host in self.config.sessions)


@dataclass(frozen=True, slots=True)
class Discovery:
    """The files a project is made of, found under its config before any of them is read: its MCP configs,
    agent files and skills, as `load_project` reads them."""

    config: Config
    mcp_configs: tuple[str, ...]
    agents: tuple[AgentFile, ...]
    skills: tuple[SkillFile, ...]


def discover(root: Path, config: Config) -> Discovery:
    """Every MCP config, agent file and SKILL.md the project's `config` makes part of it."""
    return Discovery(
        config,
        tuple(discover_configs(root, config.mcp_configs)),
        tuple(discover_agents(root, config.agents, config.exclude)),
        tuple(discover_skills(root, config.exclude)),
    )


def load_project(
    root: Path, *, agent_paths: tuple[str, ...] = (), collect: bool = False, found: Discovery | None = None
) -> Project:
    """Read everything, collecting each broken file's error and reading every other file; `found` is the
    project's discovery when the caller made it (its config read without error).

    A broken project-wide file (quiver config, MCP config, lock) raises `InputErrors` naming all of
    them, unless `collect` (lint, compile): then the caller reports `errors` and `blocking` itself.
    """
    blocking: list[QuiverError] = []

    def attempt(read: Callable[[], T], fallback: T) -> T:
        try:
            return read()
        except QuiverError as exc:
            blocking.append(exc)
            return fallback

    config = found.config if found is not None else attempt(lambda: load_config(root), Config())
    files = found if found is not None else discover(root, config)
    no_servers: list[Server] = []
    read: list[McpConfig] = []
    for rel in files.mcp_configs:
        try:
            read.append(read_mcp_config(root, rel))
        except QuiverError as exc:
            blocking.append(exc)
    configs = tuple(read)
    overlays = tuple(attempt(lambda: _config_overlays(root, config), no_servers))
    servers = merge_servers(configs, overlays)
    lock = attempt(lambda: read_lock(root, config.lock), None)
    agents: list[Agent] = []
    errors: list[QuiverError] = list(blocking)
    agent_files = files.agents
    discovered = {f.path: f for f in agent_files if f.listed}
    for rel in agent_paths or tuple(discovered):
        try:
            agents.append(read_agent(root, rel, discovered.get(rel)))
        except QuiverError as exc:
            errors.append(exc)
    skills: list[Skill] = []
    for skill in files.skills:
        try:
            skills.append(read_skill(root, skill))
        except QuiverError as exc:
            errors.append(exc)
    if blocking and not collect:
        raise InputErrors(tuple(errors))
    return Project(
        root,
        config,
        tuple(agents),
        configs,
        servers,
        lock,
        tuple(errors),
        tuple(blocking),
        duplicate_ids(agents),
        {**{rel: f.id for rel, f in discovered.items()}, **{a.path: a.id for a in agents}},
        overlays,
        tuple(skills),
        tuple(f for f in agent_files if not f.listed and f.path not in discovered),
    )


def session_agent(config: Config, host: str) -> Agent:
    """A host's main session as an agent: no `tools` (everything the host sees), its host's own name."""
    rel = config.path or "quiver.toml"
    where = Location(rel, *config.positions.get(("sessions",), (1, 1)))
    return Agent(
        id=f"@{host}",
        path=rel,
        kind="claude" if host == HostId.CLAUDE_CODE else "copilot",
        location=where,
        frontmatter={},
        key_locations={},
        body="",
        body_line=1,
        name=f"{host} session",
        description=f"the main session of {host}, with every MCP server it reads",
        host=host,
        session=True,
    )


def servers_read_by(project: Project, files: frozenset[str] | None) -> dict[str, Server]:
    """The project's servers as a host sees them: merged from the config files it reads (`files`; None: all),
    the files the quiver config adds (`mcp_configs`) and quiver's own `mcp_servers` overlays."""
    if files is None:
        return dict(project.servers)
    standard = set(CONFIG_FILES)  # any other file is one the quiver config adds: every host reads it
    configs = tuple(
        c for c in project.configs if c.path in files or c.path not in standard or c.dialect == Dialect.LIST
    )
    return merge_servers(configs, project.overlays)


def duplicate_ids(agents: list[Agent]) -> tuple[InputError, ...]:
    """One error per agent file whose id an earlier file (in path order) has: quiver writes one manifest per
    id, so the later file is not compiled until one is renamed or excluded."""
    first: dict[str, Agent] = {}
    out = []
    for agent in sorted(agents, key=lambda a: a.path):
        seen = first.setdefault(agent.id, agent)
        if seen is not agent:
            out.append(
                InputError(
                    f"agent id `{agent.id}` is also the id of {seen.path}: quiver writes one manifest per id",
                    position=Position(agent.path, 1, 1),
                    hint="rename one of the files, or leave one out with `exclude` in the quiver config",
                )
            )
    return tuple(out)


def _config_overlays(root: Path, config: Config) -> list[Server]:
    """`[[mcp_servers]]` entries of the quiver config, with the line of each entry and key."""
    from quiver.sources._json import Node

    rel = config.path or "quiver.toml"
    blocks = _toml_array_positions(root / rel, "mcp_servers") if config.mcp_servers else []
    out = []
    for i, entry in enumerate(config.mcp_servers):
        name = entry.get("name")
        if not isinstance(name, str):
            continue
        line, keys = blocks[i] if i < len(blocks) else (0, {})
        node = Node(dict(entry), line, 1 if line else 0)
        node.key_positions = {k: keys.get(k, (line, 1 if line else 0)) for k in entry}
        out.append(server_from_node(name, node, Location(rel, line, 1 if line else 0), Dialect.CONFIG))
    return out


def _toml_array_positions(path: Path, table: str) -> list[tuple[int, dict[str, tuple[int, int]]]]:
    """For each `mcp_servers` entry (a `[[mcp_servers]]` header or an inline table): its line and the line
    and column of each of its keys."""
    try:
        text = read_text(path, path.name)
    except QuiverError:
        return []
    return array_key_positions(text, table)


def merge_servers(configs: tuple[McpConfig, ...], overlays: tuple[Server, ...] = ()) -> dict[str, Server]:
    """Definitions by name (a later file wins), then loading overlays from `mcp_servers` entries."""
    servers: dict[str, Server] = {}
    pending: list[Server] = list(overlays)
    for cfg in configs:
        for server in cfg.servers:
            if server.is_definition:
                servers[server.name] = server
            else:
                pending.append(server)
    for overlay in pending:
        base = servers.get(overlay.name)
        servers[overlay.name] = apply_overlay(base, overlay) if base is not None else overlay
    return servers


def apply_overlay(base: Server, overlay: Server) -> Server:
    """Copy the loading fields an overlay sets onto a definition; keys keep the overlay's position."""
    changes: dict[str, object] = {}
    for name in _LOADING_FIELDS:
        value = getattr(overlay, name)
        if value is not None and value != ():
            changes[name] = value
    key_locations = {**base.key_locations, **overlay.key_locations}
    return replace(base, key_locations=key_locations, **changes)  # type: ignore[arg-type]  # fields checked above
