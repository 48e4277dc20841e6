"""Resolution (DESIGN §3): tool references -> resolved tool set -> a load decision per tool, with reasons.

Pure: values in, frozen dataclasses out. The preload rules, in order:
  1. built-ins are always loaded;
  2. the server has `deferTools: "never"` or `preload: true`;
  3. the tool is in its server's `preload_tools`;
  4. the agent names it explicitly, unless it sets `deferred-tool-loading: true`.
Rule 0 is "tool search is inactive, everything is loaded"; rule 5 is "deferred".

Resolution reports what it could not honour as data (`Unresolved` references, servers without a
catalog, `UnservedEntry`s); lint rules (AGT008-011, AGT022, MCP011-013) turn that into findings.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from quiver.builtins import builtin_alias, is_toolset, is_vscode_set_tool, is_vscode_tool, known_names
from quiver.config import Config
from quiver.model import Agent, Load, Location, Lock, LockedTool, Server, ToolRef
from quiver.names import assign_names
from quiver.project import HOST_SERVERS, Project, apply_overlay
from quiver.suggest import closest

UnresolvedKind = Literal["unknown-tool", "ambiguous-tool", "unknown-server"]


@dataclass(frozen=True, slots=True)
class Decision:
    rule: int
    code: str
    text: str
    source: Location | None


@dataclass(frozen=True, slots=True)
class ResolvedTool:
    server: str
    tool: LockedTool
    load: Load
    decision: Decision
    names: Mapping[str, str]
    named: bool


@dataclass(frozen=True, slots=True)
class ResolvedBuiltin:
    ref: str
    canonical: str
    kind: str  # alias | vscode | qualified | extension
    location: Location


@dataclass(frozen=True, slots=True)
class ToolSearch:
    active: bool
    reason: str
    mcp_tools: int
    threshold: int


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A `tools` entry quiver can prove wrong: an unknown tool or server, or a bare name several servers serve.

    `server` is the server a qualified entry names; `candidates` are that server's tools (unknown-tool) or
    the servers serving the bare name (ambiguous-tool); `guess` is the closest known name (a bare unknown
    tool, an unknown server).
    """

    kind: UnresolvedKind
    ref: ToolRef
    server: str | None = None
    candidates: tuple[str, ...] = ()
    guess: str | None = None


@dataclass(frozen=True, slots=True)
class Unverified:
    """A `tools` entry only the host can resolve (a server configured elsewhere, an extension tool, ...)."""

    ref: ToolRef
    why: str  # what makes it uncheckable, as the finding lists it


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

    def tool(self, server: str, name: str) -> ResolvedTool | None:
        for item in self.tools:
            if item.server == server and item.tool.name == name:
                return item
        return None


def model_supports_tool_search(model: str, patterns: Sequence[str]) -> bool:
    return any(re.search(p, model, re.IGNORECASE) for p in patterns)


def visible_servers(agent: Agent, project_servers: Mapping[str, Server], lock: Lock | None) -> dict[str, Server]:
    """Project servers, overridden by the agent's own `mcp-servers`, plus host servers found in the lock."""
    visible = dict(project_servers)
    for server in agent.mcp_servers:
        base = visible.get(server.name)
        visible[server.name] = apply_overlay(base, server) if base is not None and not server.is_definition else server
    if lock is not None:
        for name in HOST_SERVERS:
            if name not in visible and name in lock.servers:
                visible[name] = Server(name=name, location=lock.servers[name].location, dialect="host")
    return visible


def catalog_of(server: Server, lock: Lock | None) -> tuple[LockedTool, ...] | None:
    """The server's locked tools cut down by its allow-list; None when the lock has no catalog."""
    locked = lock.servers.get(server.name) if lock is not None else None
    if locked is None:
        return None
    if server.tools is None or "*" in server.tools:
        return locked.tools
    allowed = set(server.tools)
    return tuple(t for t in locked.tools if t.name in allowed)


class _Selector:
    def __init__(self, agent: Agent, visible: Mapping[str, Server], lock: Lock | None) -> None:
        self.agent = agent
        self.visible = visible
        self.catalogs = {name: catalog_of(server, lock) for name, server in visible.items()}
        self.selected: dict[tuple[str, str], tuple[LockedTool, Location, bool]] = {}
        self.builtins: dict[str, ResolvedBuiltin] = {}
        self.unknown_catalogs: set[str] = set()
        self.host: dict[str, list[ToolRef]] = {}
        self.unverified: list[Unverified] = []  # what only the host can resolve, and why
        self.unresolved: list[Unresolved] = []

    def add(self, tool: LockedTool, via: Location, named: bool) -> None:
        key = (tool.server, tool.name)
        old = self.selected.get(key)
        if old is None or (named and not old[2]):
            self.selected[key] = (tool, via, named)

    def add_server(self, name: str, via: Location) -> None:
        catalog = self.catalogs[name]
        if catalog is None:
            self.unknown_catalogs.add(name)
            return
        for tool in catalog:
            self.add(tool, via, named=False)

    def builtin(self, ref: ToolRef, canonical: str, kind: str) -> None:
        self.builtins.setdefault(canonical, ResolvedBuiltin(ref.text, canonical, kind, ref.location))

    def reference(self, ref: ToolRef) -> None:
        text = ref.text
        if text == "*":
            self.builtin(ref, "*", "alias")
            for name in sorted(self.visible):
                self.add_server(name, ref.location)
            return
        if "/" in text:
            self.qualified(ref, *text.split("/", 1))
            return
        alias = builtin_alias(text)
        if alias is not None:
            self.builtin(ref, alias, "alias")
        elif is_vscode_tool(text) or is_toolset(text):
            self.builtin(ref, text, "vscode")
        elif text in self.visible:
            self.add_server(text, ref.location)
        elif text in HOST_SERVERS:
            self.host_reference(ref, text)
        else:
            self.bare(ref, text)

    def qualified(self, ref: ToolRef, prefix: str, rest: str) -> None:
        if prefix in self.visible:
            catalog = self.catalogs[prefix]
            if rest == "*" or catalog is None:
                self.add_server(prefix, ref.location)
                return
            for tool in catalog:
                if tool.name == rest:
                    self.add(tool, ref.location, named=True)
                    return
            tools = tuple(f"{prefix}/{t.name}" for t in catalog)
            self.unresolved.append(Unresolved("unknown-tool", ref, server=prefix, candidates=tools))
        elif prefix in HOST_SERVERS:
            self.host_reference(ref, prefix)
        elif is_toolset(prefix):
            self.builtin(ref, f"{prefix}/{rest}", "qualified")
            if not is_vscode_set_tool(prefix, rest) and rest != "*":
                self.unverified.append(Unverified(ref, f"not a VS Code `{prefix}` tool quiver knows"))
        elif "." in prefix:
            self.builtin(ref, f"{prefix}/{rest}", "extension")
            self.unverified.append(Unverified(ref, "an extension tool, or a server no MCP config here defines"))
        elif guess := closest(prefix, self.visible):
            self.unresolved.append(Unresolved("unknown-server", ref, server=prefix, guess=guess))
        else:
            self.unverified.append(Unverified(ref, f"no MCP config here defines server `{prefix}`"))

    def host_reference(self, ref: ToolRef, server: str) -> None:
        self.host.setdefault(server, []).append(ref)

    def bare(self, ref: ToolRef, text: str) -> None:
        owners = sorted(
            (name, tool) for name, catalog in self.catalogs.items() for tool in catalog or () if tool.name == text
        )
        if len(owners) == 1:
            self.add(owners[0][1], ref.location, named=True)
        elif owners:
            servers = tuple(name for name, _ in owners)
            self.unresolved.append(Unresolved("ambiguous-tool", ref, candidates=servers))
        elif guess := closest(text, [*self.visible, *(t.name for c in self.catalogs.values() for t in c or ())]):
            self.unresolved.append(Unresolved("unknown-tool", ref, guess=guess))
        else:
            near = closest(text, known_names(), minimum=0.85)
            why = f"not a built-in; did you mean `{near}`?" if near else "no built-in, MCP config or lock here has it"
            self.unverified.append(Unverified(ref, why))


def resolve_agent(
    agent: Agent, project_servers: Mapping[str, Server], lock: Lock | None, config: Config
) -> ResolvedAgent:
    visible = visible_servers(agent, project_servers, lock)
    selector = _Selector(agent, visible, lock)
    refs = agent.tools if agent.tools is not None else (ToolRef("*", agent.key_locations.get("tools", agent.location)),)
    for ref in refs:
        selector.reference(ref)

    count = len(selector.selected)
    search = _tool_search(agent, count, config, visible, selector.selected)
    names = assign_names(selector.selected)
    model_ok = config.tool_search != "never" and (
        not agent.models or model_supports_tool_search(agent.models[0], config.tool_search_models)
    )
    tools = []
    for key in sorted(selector.selected):
        tool, via, named = selector.selected[key]
        server = visible[key[0]]
        load, decision = _decide(agent, server, tool, via, named, search, model_ok, config)
        tools.append(ResolvedTool(key[0], tool, load, decision, names[key], named))

    used = {t.server for t in tools} | selector.unknown_catalogs
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
    )


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
    if count >= threshold:
        return result(True, f"{count} MCP tools >= threshold {threshold}")
    explicit = sorted({s for s, _ in selected if visible[s].preload is False})
    if explicit:
        names = ", ".join(f"`{s}`" for s in explicit)
        return result(True, f"{count} MCP tools < threshold {threshold}, but {names} set `preload: false`")
    return result(False, f"{count} MCP tools < threshold {threshold}")


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
) -> tuple[Load, Decision]:
    below = config.tool_search != "always" and search.mcp_tools < search.threshold
    if not model_ok or not search.active or (below and server.preload is not False):
        return "preloaded", Decision(0, "tool-search-inactive", f"tool search inactive: {search.reason}", None)
    load, rule, code = load_decision(
        tool=tool.name,
        named=named,
        deferred_tool_loading=agent.deferred_tool_loading,
        defer_tools=server.defer_tools,
        preload=server.preload,
        preload_tools=server.preload_tools,
    )
    keys, name = server.key_locations, server.name
    text, source = {
        "server-never-defers": (f'server `{name}` sets `deferTools: "never"`', keys.get("deferTools")),
        "server-preloaded": (f"server `{name}` sets `preload: true`", keys.get("preload")),
        "preload-tools": (f"listed in `preload_tools` of server `{name}`", keys.get("preload_tools")),
        "named": ("named explicitly in the agent's `tools`", via),
        "deferred-tool-loading": (
            "named, but the agent sets `deferred-tool-loading: true`",
            agent.key_locations.get("deferred-tool-loading", via),
        ),
        "server-not-preloaded": (f"server `{name}` sets `preload: false`", keys.get("preload")),
        "deferred": ("reached only through a wildcard; tool search is active", via),
    }[code]
    return load, Decision(rule, code, text, source or server.location)


def resolve_project(project: Project) -> list[ResolvedAgent]:
    return [resolve_agent(a, project.servers, project.lock, project.config) for a in project.agents]


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
