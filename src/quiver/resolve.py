"""Resolution (DESIGN §3): tool references -> resolved tool set -> a load decision per tool, with reasons.

Pure: values in, frozen dataclasses out. Each agent is resolved under its host (quiver.hosts: where and how
the agent is defined, quiver.toml's `host` / `[agent_hosts]`, or `--host`), and every tool gets two
decisions: the host's (`load`: what the host sends up front when it runs the agent with these MCP servers,
the true budget) and the gateway's (`gateway_load`: what `quiver serve` exposes directly, by quiver's own
rules in quiver.hosts.gateway).

Which tools the `tools` entries select is quiver.references'. Resolution reports what it could not honour
as data (`Unresolved` and `Unverified` references, servers without a catalog, `UnservedEntry`s); lint rules
(AGT008-011, AGT022, AGT023, MCP011-013) turn that into findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from quiver.config import Config
from quiver.hosts import Host, choose
from quiver.hosts import gateway as gateway_rules
from quiver.hosts import host as host_of
from quiver.hosts.gateway import load_decision, model_supports_tool_search
from quiver.hosts.model import Carried, Decision, HostId, HostSplit, SplitJob, ToolSearch
from quiver.model import Agent, Dialect, Load, Location, LockedTool, Server, ToolRef
from quiver.names import assign_names, plain_names
from quiver.project import Project, servers_read_by
from quiver.references import Catalogs, ResolvedBuiltin, Selector, Unresolved, Unverified, visible_servers
from quiver.sources.skills import Skill

__all__ = [
    "Decision",
    "ResolvedAgent",
    "ResolvedTool",
    "ToolSearch",
    "UnservedEntry",
    "load_decision",
    "model_supports_tool_search",
    "resolve_agent",
    "resolve_project",
    "unserved_entries",
]


class ResolvedTool(NamedTuple):
    """One carried tool of one agent. Immutable like the model's frozen dataclasses, but a tuple: resolve
    builds one per (agent, tool) pair, 127,458 for 1,000 agents, and a frozen dataclass's `__init__` costs
    four times a tuple's (0.9 against 0.2 microseconds). `load`/`decision` are the host's; `gateway_load`/
    `gateway_decision` quiver serve's."""

    server: str
    tool: LockedTool
    load: Load
    decision: Decision
    names: Mapping[str, str]
    named: bool
    gateway_load: Load = "preloaded"
    gateway_decision: Decision | None = None


@dataclass(frozen=True, slots=True)
class UnservedEntry:
    """A `preload_tools` or `tools` entry of a project server that the server's catalog does not serve."""

    server: str
    field: Literal["preload_tools", "tools"]
    entry: str
    location: Location
    served: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ResolvedAgent:
    agent: Agent
    servers: tuple[Server, ...]  # servers providing a carried tool, or referenced with an unknown catalog
    tools: tuple[ResolvedTool, ...]
    builtins: tuple[ResolvedBuiltin, ...]
    tool_search: ToolSearch  # the host's
    host_servers: tuple[str, ...]  # host-provided servers referenced whose catalog is unknown
    unresolved: tuple[Unresolved, ...] = ()  # in the order the agent wrote them
    host_refs: Mapping[str, tuple[ToolRef, ...]] = field(default_factory=dict)  # host server -> its references
    unverified: tuple[Unverified, ...] = ()  # in the order the agent wrote them
    unknown_catalogs: tuple[str, ...] = ()  # configured servers it refers to that the lock does not list
    unknown_named: tuple[str, ...] = ()  # `server/tool` references to those servers: tools it cannot carry
    host: Host = field(default_factory=lambda: host_of(HostId.COPILOT_CLI))
    host_reason: str = ""  # why this host (where the agent is defined, or the config / `--host`)
    model: str | None = None  # the model that runs it, as the host would pick it
    model_source: str = ""
    split: HostSplit | None = None  # the host's split: its own tools up front and deferred, its search tool
    gateway_search: ToolSearch | None = None  # quiver serve's tool search decision
    skills: tuple[Skill, ...] = ()  # the skills its host lists for it
    named_skills: tuple[Skill, ...] = ()  # those its `skills:` names: their bodies are up front
    unknown_skills: tuple[ToolRef, ...] = ()  # `skills:` entries naming no skill it sees

    def tool(self, server: str, name: str) -> ResolvedTool | None:
        for item in self.tools:
            if item.server == server and item.tool.name == name:
                return item
        return None


def effective_model(agent: Agent, host: Host, config: Config) -> tuple[str | None, str]:
    """The model that runs the agent: its own `model` (first of a list), else the host's `model` setting in
    quiver.toml, else the host's default (None). Claude Code's `inherit` is the main session's model."""
    settings = config.hosts.get(host.id.value, {})
    if agent.models and agent.models[0].lower() != "inherit":
        return agent.models[0], "the agent's `model`"
    model = settings.get("model")
    if isinstance(model, str):
        return model, f"`[hosts.{host.id.value}] model`"
    if agent.models:
        return None, "`model: inherit`: the main session's model (the host's default)"
    return None, "the host's default model"


def resolve_agent(
    agent: Agent,
    project: Project,
    catalogs: Catalogs | None = None,
    host: str | None = None,
    servers: Mapping[HostId, Mapping[str, Server]] | None = None,
) -> ResolvedAgent:
    """One agent's tools and their load decisions, under its host (`host` is `--host`; else the config's
    or the agent file's), from the MCP configs that host reads. `catalogs` shares the servers' cut catalogs
    across the agents of a run, `servers` each host's view of the configs."""
    config, lock = project.config, project.lock
    host_id, host_reason = choose(agent, agent.host or config.host, config.agent_hosts, host)
    chosen = host_of(host_id)
    if servers is not None and host_id in servers:
        project_servers = servers[host_id]
    else:
        project_servers = servers_read_by(project, chosen.config_files)
        if servers is not None and isinstance(servers, dict):
            servers[host_id] = project_servers
    visible = visible_servers(agent, project_servers, lock, chosen.builtin_servers)
    selector = Selector(agent, visible, lock, catalogs, chosen, project.servers, config.hosts.get(host_id.value))
    refs = agent.tools if agent.tools is not None else (ToolRef("*", agent.key_locations.get("tools", agent.location)),)
    for ref in refs:
        selector.reference(ref)
    _disallow(selector, agent)

    keys = sorted(selector.selected)
    names = _names(keys, catalogs)
    carried = []
    for key in keys:
        tool, via, named = selector.selected[key]
        carried.append(Carried(visible[key[0]], tool, via, named))
    builtins = tuple(selector.builtins[k] for k in sorted(selector.builtins))
    settings = gateway_rules.Settings(config.tool_search, config.threshold, config.tool_search_models)
    gateway_search, gateway_loads = gateway_rules.split(agent, carried, settings)
    model, model_source = effective_model(agent, chosen, config)
    if chosen.split is None:  # an API host: the caller decides, by quiver's rules
        split = HostSplit(gateway_search, gateway_loads)
    else:
        job = SplitJob(
            agent=agent,
            model=model,
            model_source=model_source,
            settings=config.hosts.get(host_id.value, {}),
            tools=carried,
            builtins=builtins,
            explicit_tools=agent.tools is not None,
            session=agent.session,
        )
        split = chosen.split(job)
    tools = tuple(
        ResolvedTool(c.server.name, c.tool, load, decision, names[(c.server.name, c.tool.name)], c.named, gw, gwd)
        for c, (load, decision), (gw, gwd) in zip(carried, split.loads, gateway_loads, strict=True)
    )
    used = {c.server.name for c in carried} | selector.unknown_catalogs  # every carried tool's server
    skills, named_skills, unknown_skills = _skills(agent, chosen, project.skills)
    return ResolvedAgent(
        agent=agent,
        servers=tuple(visible[n] for n in sorted(used)),
        tools=tools,
        builtins=builtins,
        tool_search=split.tool_search,
        host_servers=tuple(sorted(selector.host)),
        unresolved=tuple(selector.unresolved),
        host_refs={server: tuple(selector.host[server]) for server in sorted(selector.host)},
        unverified=tuple(selector.unverified),
        unknown_catalogs=tuple(sorted(n for n in selector.unknown_catalogs if visible[n].dialect != Dialect.HOST)),
        unknown_named=tuple(selector.unknown_named),
        host=chosen,
        host_reason=host_reason,
        model=model,
        model_source=model_source,
        split=split,
        gateway_search=gateway_search,
        skills=skills,
        named_skills=named_skills,
        unknown_skills=unknown_skills,
    )


def _skills(
    agent: Agent, host: Host, skills: tuple[Skill, ...]
) -> tuple[tuple[Skill, ...], tuple[Skill, ...], tuple[ToolRef, ...]]:
    """The skills the host lists for the agent (the project's skill folders it reads, and the skills of the
    agent's own Claude Code plugin), those its `skills:` names, and the names that match none."""
    plugin = agent.id.split(":", 1)[0] if ":" in agent.id else None
    visible = tuple(
        s for s in skills if (s.plugin is None and s.root in host.skill_dirs) or (plugin and s.plugin == plugin)
    )
    by_name: dict[str, Skill] = {}
    for skill in visible:
        by_name.setdefault(skill.id, skill)
        by_name.setdefault(skill.name or skill.folder, skill)
    named: list[Skill] = []
    unknown: list[ToolRef] = []
    where = agent.key_locations.get("skills", agent.location)
    for name in agent.skills:
        found = by_name.get(name)
        if found is None:
            unknown.append(ToolRef(name, where))
        elif found not in named:
            named.append(found)
    return visible, tuple(named), tuple(unknown)


def _disallow(selector: Selector, agent: Agent) -> None:
    """Claude Code's `disallowedTools`: drop the tools and built-ins it names from what the agent carries."""
    if not agent.disallowed:
        return
    from quiver.references import CLAUDE_MCP_PREFIX

    for ref in agent.disallowed:
        text = ref.text
        if text.startswith(CLAUDE_MCP_PREFIX):
            server, rest = selector.claude_name(text[len(CLAUDE_MCP_PREFIX) :])
            for key in [k for k in selector.selected if k[0] == server and rest in ("*", k[1])]:
                del selector.selected[key]
        elif text in selector.builtins:
            del selector.builtins[text]
        elif agent.tools is None:  # an inherited built-in: a marker the host's split reads
            selector.builtins.setdefault(f"-{text}", ResolvedBuiltin(text, f"-{text}", "disallowed", ref.location))


def _names(keys: list[tuple[str, str]], catalogs: Catalogs | None) -> Mapping[tuple[str, str], Mapping[str, str]]:
    """The model-facing names of the selected pairs: in a run over many agents, plain when no two of the
    lock's pairs collide (decided once per run); else assigned among the agent's own pairs."""
    if catalogs is not None and catalogs.collision_free:
        return {key: plain_names(*key) for key in keys}
    return assign_names(keys)


def resolve_project(project: Project, host: str | None = None) -> list[ResolvedAgent]:
    catalogs = Catalogs(project.lock)  # one cut of each server's catalog for every agent
    servers: dict[HostId, Mapping[str, Server]] = {}  # each host's view of the configs, merged once
    return [resolve_agent(a, project, catalogs, host, servers) for a in (*project.agents, *project.sessions)]


def unserved_entries(project: Project) -> list[UnservedEntry]:
    """`preload_tools` and `tools` entries of project servers that their snapshotted catalog does not serve."""
    out: list[UnservedEntry] = []
    lock = project.lock
    for name in sorted(project.servers):
        server = project.servers[name]
        locked = lock.servers.get(name) if lock is not None else None
        if locked is None:
            continue
        served = tuple(t.name for t in locked.tools)
        fields: tuple[Literal["preload_tools", "tools"], ...] = ("preload_tools", "tools")
        for key in fields:
            for entry in getattr(server, key) or ():
                if entry != "*" and entry not in served:
                    where = server.key_locations.get(key, server.location)
                    out.append(UnservedEntry(name, key, entry, where, served))
    return out
