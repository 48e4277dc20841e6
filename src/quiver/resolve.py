"""Resolution (DESIGN §3): tool references -> resolved tool set -> a load decision per tool, with reasons.

Pure: values in, frozen dataclasses out. The preload rules, in order:
  1. built-ins are always loaded;
  2. the server has `deferTools: "never"` or `preload: true`;
  3. the tool is in its server's `preload_tools`;
  4. the agent names it explicitly, unless it sets `deferred-tool-loading: true`.
Rule 0 is "tool search is inactive, everything is loaded"; rule 5 is "deferred".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quiver.builtins import builtin_alias, is_toolset, is_vscode_tool, known_names
from quiver.config import Config
from quiver.lint import references as R
from quiver.model import Agent, Finding, Load, Location, Lock, LockedTool, Server, ToolRef
from quiver.names import assign_names
from quiver.project import HOST_SERVERS, Project, apply_overlay
from quiver.rules import Rule
from quiver.suggest import did_you_mean


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
class ResolvedAgent:
    agent: Agent
    servers: tuple[Server, ...]  # servers providing a carried tool, or referenced with an unknown catalog
    tools: tuple[ResolvedTool, ...]
    builtins: tuple[ResolvedBuiltin, ...]
    tool_search: ToolSearch
    host_servers: tuple[str, ...]  # host-provided servers referenced whose catalog is unknown
    findings: tuple[Finding, ...]

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


def _suggest(word: str, choices: Iterable[str]) -> str:
    return did_you_mean(word, choices, "check the spelling, or add the server that provides it")


class _Selector:
    def __init__(self, agent: Agent, visible: Mapping[str, Server], lock: Lock | None) -> None:
        self.agent = agent
        self.visible = visible
        self.catalogs = {name: catalog_of(server, lock) for name, server in visible.items()}
        self.selected: dict[tuple[str, str], tuple[LockedTool, Location, bool]] = {}
        self.builtins: dict[str, ResolvedBuiltin] = {}
        self.unknown_catalogs: set[str] = set()
        self.host: set[str] = set()
        self.findings: list[Finding] = []

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

    def finding(self, rule: Rule, at: ToolRef, **values: Any) -> None:
        self.findings.append(rule.finding(location=at.location, agent=self.agent.id, **values))

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
        elif is_vscode_tool(text):
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
            self.finding(
                R.UNKNOWN_TOOL_REFERENCE,
                ref,
                ref=ref.text,
                suggestion=_suggest(ref.text, (f"{prefix}/{t.name}" for t in catalog)),
            )
        elif prefix in HOST_SERVERS:
            self.host_reference(ref, prefix)
        elif is_toolset(prefix):
            self.builtin(ref, f"{prefix}/{rest}", "qualified")
        elif "." in prefix:
            self.builtin(ref, f"{prefix}/{rest}", "extension")
        else:
            self.finding(
                R.UNKNOWN_SERVER_REFERENCE,
                ref,
                ref=ref.text,
                server=prefix,
                suggestion=_suggest(prefix, (*self.visible, *HOST_SERVERS)),
            )

    def host_reference(self, ref: ToolRef, server: str) -> None:
        self.host.add(server)
        self.finding(R.HOST_SERVER_NOT_SNAPSHOTTED, ref, ref=ref.text, server=server, host=HOST_SERVERS[server])

    def bare(self, ref: ToolRef, text: str) -> None:
        owners = sorted(
            (name, tool) for name, catalog in self.catalogs.items() for tool in catalog or () if tool.name == text
        )
        if len(owners) == 1:
            self.add(owners[0][1], ref.location, named=True)
        elif owners:
            servers = ", ".join(f"`{name}`" for name, _ in owners)
            self.finding(R.AMBIGUOUS_TOOL_REFERENCE, ref, ref=text, servers=servers, example=f"{owners[0][0]}/{text}")
        else:
            choices = [*known_names(), *(t.name for c in self.catalogs.values() for t in c or ())]
            self.finding(R.UNKNOWN_TOOL_REFERENCE, ref, ref=text, suggestion=_suggest(text, choices))


def resolve_agent(
    agent: Agent, project_servers: Mapping[str, Server], lock: Lock | None, config: Config
) -> ResolvedAgent:
    visible = visible_servers(agent, project_servers, lock)
    selector = _Selector(agent, visible, lock)
    refs = agent.tools if agent.tools is not None else (ToolRef("*", agent.key_locations.get("tools", agent.location)),)
    for ref in refs:
        selector.reference(ref)
    for name in sorted(selector.unknown_catalogs):
        if visible[name].dialect != "host":
            selector.findings.append(
                R.SERVER_NOT_SNAPSHOTTED.finding(location=visible[name].location, agent=agent.id, server=name)
            )

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
        findings=tuple(selector.findings),
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
    keys = server.key_locations
    if server.defer_tools == "never":
        return "preloaded", Decision(
            2,
            "server-never-defers",
            f'server `{server.name}` sets `deferTools: "never"`',
            keys.get("deferTools", server.location),
        )
    if server.preload is True:
        return "preloaded", Decision(
            2, "server-preloaded", f"server `{server.name}` sets `preload: true`", keys.get("preload", server.location)
        )
    if tool.name in server.preload_tools:
        return "preloaded", Decision(
            3,
            "preload-tools",
            f"listed in `preload_tools` of server `{server.name}`",
            keys.get("preload_tools", server.location),
        )
    if named and not agent.deferred_tool_loading:
        return "preloaded", Decision(4, "named", "named explicitly in the agent's `tools`", via)
    if named:
        return "deferred", Decision(
            5,
            "deferred-tool-loading",
            "named, but the agent sets `deferred-tool-loading: true`",
            agent.key_locations.get("deferred-tool-loading", via),
        )
    if server.preload is False:
        return "deferred", Decision(
            5,
            "server-not-preloaded",
            f"server `{server.name}` sets `preload: false`",
            keys.get("preload", server.location),
        )
    return "deferred", Decision(5, "deferred", "reached only through a wildcard; tool search is active", via)


def resolve_project(project: Project) -> list[ResolvedAgent]:
    return [resolve_agent(a, project.servers, project.lock, project.config) for a in project.agents]


def project_findings(project: Project) -> list[Finding]:
    """Findings about project-level servers, reported once rather than per agent."""
    out: list[Finding] = []
    lock = project.lock
    for name in sorted(project.servers):
        server = project.servers[name]
        locked = lock.servers.get(name) if lock is not None else None
        if locked is None:
            continue
        served = [t.name for t in locked.tools]
        for field, rule in (("preload_tools", R.PRELOAD_TOOL_NOT_SERVED), ("tools", R.ALLOW_LIST_TOOL_NOT_SERVED)):
            for entry in getattr(server, field) or ():
                if entry != "*" and entry not in served:
                    out.append(
                        rule.finding(
                            location=server.key_locations.get(field, server.location),
                            server=name,
                            tool=entry,
                            suggestion=_suggest(entry, served),
                        )
                    )
    return out

