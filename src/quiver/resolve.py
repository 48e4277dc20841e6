"""Resolution (DESIGN §3): tool references -> resolved tool set -> a load decision per tool, with reasons.

Pure: values in, frozen dataclasses out. The preload rules, in order:
  1. built-ins are always loaded;
  2. the server has `deferTools: "never"` or `preload: true`;
  3. the tool is in its server's `preload_tools`;
  4. the agent names it explicitly, unless it sets `deferred-tool-loading: true`.
Rule 0 is "tool search is inactive, everything is loaded"; rule 5 is "deferred".

Which tools the `tools` entries select is quiver.references'. Resolution reports what it could not honour
as data (`Unresolved` and `Unverified` references, servers without a catalog, `UnservedEntry`s); lint rules
(AGT008-011, AGT022, MCP011-013) turn that into findings.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from quiver.config import Config
from quiver.model import Agent, Load, Location, Lock, LockedTool, Server, ToolRef
from quiver.names import assign_names, plain_names
from quiver.project import Project
from quiver.references import Catalogs, ResolvedBuiltin, Selector, Unresolved, Unverified, visible_servers


@dataclass(frozen=True, slots=True)
class Decision:
    rule: int
    code: str
    text: str
    source: Location | None


class ResolvedTool(NamedTuple):
    """One carried tool of one agent. Immutable like the model's frozen dataclasses, but a tuple: resolve
    builds one per (agent, tool) pair, 127,458 for 1,000 agents, and a frozen dataclass's `__init__` costs
    four times a tuple's (0.9 against 0.2 microseconds)."""

    server: str
    tool: LockedTool
    load: Load
    decision: Decision
    names: Mapping[str, str]
    named: bool


@dataclass(frozen=True, slots=True)
class ToolSearch:
    active: bool
    reason: str
    mcp_tools: int
    threshold: int


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
    tool_search: ToolSearch
    host_servers: tuple[str, ...]  # host-provided servers referenced whose catalog is unknown
    unresolved: tuple[Unresolved, ...] = ()  # in the order the agent wrote them
    host_refs: Mapping[str, tuple[ToolRef, ...]] = field(default_factory=dict)  # host server -> its references
    unverified: tuple[Unverified, ...] = ()  # in the order the agent wrote them
    unknown_catalogs: tuple[str, ...] = ()  # configured servers it refers to that the lock does not list
    unknown_named: tuple[str, ...] = ()  # `server/tool` references to those servers: tools it cannot carry

    def tool(self, server: str, name: str) -> ResolvedTool | None:
        for item in self.tools:
            if item.server == server and item.tool.name == name:
                return item
        return None


def model_supports_tool_search(model: str, patterns: Sequence[str]) -> bool:
    return any(re.search(p, model, re.IGNORECASE) for p in patterns)


def resolve_agent(
    agent: Agent,
    project_servers: Mapping[str, Server],
    lock: Lock | None,
    config: Config,
    catalogs: Catalogs | None = None,
) -> ResolvedAgent:
    """One agent's tools and their load decisions; `catalogs` shares the servers' cut catalogs across the
    agents of a run."""
    visible = visible_servers(agent, project_servers, lock)
    selector = Selector(agent, visible, lock, catalogs)
    refs = agent.tools if agent.tools is not None else (ToolRef("*", agent.key_locations.get("tools", agent.location)),)
    for ref in refs:
        selector.reference(ref)

    count = len(selector.selected)
    search = _tool_search(agent, count, config, visible, selector.selected)
    keys = sorted(selector.selected)
    names = _names(keys, catalogs)
    model_ok = config.tool_search != "never" and (
        not agent.models or model_supports_tool_search(agent.models[0], config.tool_search_models)
    )
    tools = []
    memo: dict[tuple[str, str, Location], Decision] = {}
    # A decision depends on the tool only through `preload_tools`: one per (server, reference, named, listed).
    # The reference is its Location object (one per `tools` entry, alive while `selected` is).
    decided: dict[tuple[str, int, bool, bool], tuple[Load, Decision]] = {}
    for key in keys:
        tool, via, named = selector.selected[key]
        server = visible[key[0]]
        seen = (key[0], id(via), named, tool.name in server.preload_tools)
        found = decided.get(seen)
        if found is None:
            found = decided[seen] = _decide(agent, server, tool, via, named, search, model_ok, config, memo)
        tools.append(ResolvedTool(key[0], tool, found[0], found[1], names[key], named))

    used = {seen[0] for seen in decided} | selector.unknown_catalogs  # every carried tool's server
    return ResolvedAgent(
        agent=agent,
        servers=tuple(visible[n] for n in sorted(used)),
        tools=tuple(tools),
        builtins=tuple(selector.builtins[k] for k in sorted(selector.builtins)),
        tool_search=search,
        host_servers=tuple(sorted(selector.host)),
        unresolved=tuple(selector.unresolved),
        host_refs={server: tuple(selector.host[server]) for server in sorted(selector.host)},
        unverified=tuple(selector.unverified),
        unknown_catalogs=tuple(sorted(n for n in selector.unknown_catalogs if visible[n].dialect != "host")),
        unknown_named=tuple(selector.unknown_named),
    )


def _names(keys: list[tuple[str, str]], catalogs: Catalogs | None) -> Mapping[tuple[str, str], Mapping[str, str]]:
    """The model-facing names of the selected pairs: in a run over many agents, plain when no two of the
    lock's pairs collide (decided once per run); else assigned among the agent's own pairs."""
    if catalogs is not None and catalogs.collision_free:
        return {key: plain_names(*key) for key in keys}
    return assign_names(keys)


def _tool_search(
    agent: Agent,
    count: int,
    config: Config,
    visible: Mapping[str, Server],
    selected: Mapping[tuple[str, str], tuple[LockedTool, Location, bool]],
) -> ToolSearch:
    threshold = config.threshold

    def result(active: bool, reason: str) -> ToolSearch:
        return ToolSearch(active, reason, count, threshold)

    if config.tool_search == "never":
        return result(False, 'tool_search = "never" in the quiver config')
    if agent.models and not model_supports_tool_search(agent.models[0], config.tool_search_models):
        return result(False, f"model `{agent.models[0]}` does not support tool search")
    if config.tool_search == "always":
        return result(True, 'tool_search = "always" in the quiver config')
    carried = f"{count} MCP tool{'' if count == 1 else 's'}"
    if count >= threshold:
        return result(True, f"{carried} >= threshold {threshold}")
    explicit = sorted({s for s, _ in selected if visible[s].preload is False})
    if explicit:
        names = ", ".join(f"`{s}`" for s in explicit)
        return result(True, f"{carried} < threshold {threshold}, but {names} set `preload: false`")
    return result(False, f"{carried} < threshold {threshold}")


LoadCode = Literal[
    "server-never-defers", "server-preloaded", "preload-tools", "named", "deferred-tool-loading",
    "server-not-preloaded", "deferred",
]  # fmt: skip


def load_decision(
    *,
    tool: str,
    named: bool,
    deferred_tool_loading: bool,
    defer_tools: str | None,
    preload: bool | None,
    preload_tools: Collection[str],
) -> tuple[Load, int, LoadCode]:
    """DESIGN §3 rules 2-5 for a tool reached while tool search is active: (load, rule, reason code).

    The one load decision: `resolve_agent` explains it with positions, and advice predicts with it what
    a changed config compiles to.
    """
    if defer_tools == "never":
        return "preloaded", 2, "server-never-defers"
    if preload is True:
        return "preloaded", 2, "server-preloaded"
    if tool in preload_tools:
        return "preloaded", 3, "preload-tools"
    if named and not deferred_tool_loading:
        return "preloaded", 4, "named"
    if named:
        return "deferred", 5, "deferred-tool-loading"
    if preload is False:
        return "deferred", 5, "server-not-preloaded"
    return "deferred", 5, "deferred"


def _decide(
    agent: Agent,
    server: Server,
    tool: LockedTool,
    via: Location,
    named: bool,
    search: ToolSearch,
    model_ok: bool,
    config: Config,
    memo: dict[tuple[str, str, Location], Decision],
) -> tuple[Load, Decision]:
    """The load decision of one tool; `memo` (per agent) shares equal decisions, whose text and source
    depend on the server, the reason and the reference only (not on the tool)."""
    below = config.tool_search != "always" and search.mcp_tools < search.threshold
    if not model_ok or not search.active or (below and server.preload is not False):
        key: tuple[str, str, Location] = ("", "tool-search-inactive", via)
        found = memo.get(key)
        if found is None:
            found = memo[key] = Decision(0, "tool-search-inactive", f"tool search inactive: {search.reason}", None)
        return "preloaded", found
    load, rule, code = load_decision(
        tool=tool.name,
        named=named,
        deferred_tool_loading=agent.deferred_tool_loading,
        defer_tools=server.defer_tools,
        preload=server.preload,
        preload_tools=server.preload_tools,
    )
    key = (server.name, code, via)
    decision = memo.get(key)
    if decision is None:
        text, source = _reason(agent, server, via, code)
        decision = memo[key] = Decision(rule, code, text, source or server.location)
    return load, decision


def _reason(agent: Agent, server: Server, via: Location, code: LoadCode) -> tuple[str, Location | None]:
    """What a load decision says, and where its cause is written."""
    keys, name = server.key_locations, server.name
    if code == "server-never-defers":
        return f'server `{name}` sets `deferTools: "never"`', keys.get("deferTools")
    if code == "server-preloaded":
        return f"server `{name}` sets `preload: true`", keys.get("preload")
    if code == "preload-tools":
        return f"listed in `preload_tools` of server `{name}`", keys.get("preload_tools")
    if code == "named":
        return "named explicitly in the agent's `tools`", via
    if code == "deferred-tool-loading":
        return (
            "named, but the agent sets `deferred-tool-loading: true`",
            agent.key_locations.get("deferred-tool-loading", via),
        )
    if code == "server-not-preloaded":
        return f"server `{name}` sets `preload: false`", keys.get("preload")
    return "reached only through a wildcard; tool search is active", via


def resolve_project(project: Project) -> list[ResolvedAgent]:
    catalogs = Catalogs(project.lock)  # one cut of each server's catalog for every agent
    return [resolve_agent(a, project.servers, project.lock, project.config, catalogs) for a in project.agents]


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
