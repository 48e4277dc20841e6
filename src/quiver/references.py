"""Tool references (DESIGN §3): which tools an agent's `tools` entries select, and what they cannot.

Pure. `Selector` walks the entries in order: built-ins, servers, `server/tool`, bare names. What it cannot
honour is data: `Unresolved` entries quiver can prove wrong, `Unverified` ones only the host can resolve,
references to host-provided servers, servers without a catalog. quiver.resolve builds on the selection;
lint rules (lint/agt/tool_references.py, unverifiable_tool_references.py) report the rest.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from quiver.builtins import alias_names, builtin_alias, is_toolset, is_vscode_set_tool, is_vscode_tool, known_names
from quiver.model import Agent, Location, Lock, LockedTool, Server, ToolRef
from quiver.names import collision_free
from quiver.project import HOST_SERVERS, apply_overlay
from quiver.suggest import closest, typo_of

CLAUDE_MCP_PREFIX = "mcp__"  # Claude Code's model-facing MCP names: `mcp__server__tool`, `mcp__server`

UnresolvedKind = Literal["unknown-tool", "ambiguous-tool", "unknown-server"]


@dataclass(frozen=True, slots=True)
class ResolvedBuiltin:
    ref: str
    canonical: str
    kind: str  # alias | vscode | qualified | extension
    location: Location


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


@dataclass(frozen=True, slots=True)
class Cut:
    """A server's catalog as an agent sees it (its allow-list applied), keyed for selection."""

    keyed: tuple[tuple[tuple[str, str], LockedTool], ...]  # ((server, name), tool), the first of each name
    by_name: Mapping[str, LockedTool]  # the first tool of each name


class Catalogs:
    """The lock's catalogs as the agents of one run see them: each server's cut of the lock (its allow-list),
    built and keyed once per (server, allow-list) instead of once per agent."""

    def __init__(self, lock: Lock | None) -> None:
        self.lock = lock
        self._tools: dict[tuple[str, tuple[str, ...] | None], tuple[LockedTool, ...] | None] = {}
        self._cuts: dict[tuple[str, tuple[str, ...] | None], Cut] = {}

    @functools.cached_property
    def collision_free(self) -> bool:
        """Whether the lock's (server, tool) pairs have no two equal names on any host. Every pair an agent
        selects is one of them, so then each agent's names are the pairs' plain names."""
        servers = self.lock.servers.values() if self.lock is not None else ()
        return collision_free({(t.server, t.name) for s in servers for t in s.tools})

    def of(self, server: Server) -> tuple[LockedTool, ...] | None:
        key = (server.name, server.tools)
        if key not in self._tools:
            self._tools[key] = catalog_of(server, self.lock)
        return self._tools[key]

    def cut(self, server: Server) -> Cut:
        key = (server.name, server.tools)
        found = self._cuts.get(key)
        if found is None:
            first: dict[tuple[str, str], LockedTool] = {}
            by_name: dict[str, LockedTool] = {}
            for tool in self.of(server) or ():
                first.setdefault((tool.server, tool.name), tool)
                by_name.setdefault(tool.name, tool)
            found = self._cuts[key] = Cut(tuple(first.items()), by_name)
        return found


class Selector:
    def __init__(
        self, agent: Agent, visible: Mapping[str, Server], lock: Lock | None, catalogs: Catalogs | None = None
    ) -> None:
        self.agent = agent
        self.visible = visible
        self.shared = catalogs if catalogs is not None else Catalogs(lock)
        self.catalogs = {name: self.shared.of(server) for name, server in visible.items()}
        self.selected: dict[tuple[str, str], tuple[LockedTool, Location, bool]] = {}
        self.builtins: dict[str, ResolvedBuiltin] = {}
        self.unknown_catalogs: set[str] = set()
        self.host: dict[str, list[ToolRef]] = {}
        self.unverified: list[Unverified] = []  # what only the host can resolve, and why
        self.unresolved: list[Unresolved] = []
        self.unknown_named: list[str] = []  # `server/tool` references to servers without a catalog

    def add(self, tool: LockedTool, via: Location, named: bool) -> None:
        key = (tool.server, tool.name)
        old = self.selected.get(key)
        if old is None or (named and not old[2]):
            self.selected[key] = (tool, via, named)

    def add_server(self, name: str, via: Location) -> None:
        if self.catalogs[name] is None:
            self.unknown_catalogs.add(name)
            return
        # What `add(tool, via, named=False)` per tool does: a tool selected already keeps its entry.
        fresh = {key: (tool, via, False) for key, tool in self.shared.cut(self.visible[name]).keyed}
        fresh.update(self.selected)
        self.selected = fresh

    def builtin(self, ref: ToolRef, canonical: str, kind: str) -> None:
        self.builtins.setdefault(canonical, ResolvedBuiltin(ref.text, canonical, kind, ref.location))

    def reference(self, ref: ToolRef) -> None:
        text = ref.text
        if text == "*":
            self.builtin(ref, "*", "alias")
            for name in sorted(self.visible):
                self.add_server(name, ref.location)
            return
        if text.startswith(CLAUDE_MCP_PREFIX) and len(text) > len(CLAUDE_MCP_PREFIX):
            self.qualified(ref, *self.claude_name(text[len(CLAUDE_MCP_PREFIX) :]))
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

    def claude_name(self, name: str) -> tuple[str, str]:
        """Claude Code's `mcp__server__tool` (after `mcp__`) as (server, tool); `mcp__server` (and
        `mcp__server__*`) is the whole server. The longest known server name that fits wins (a name may hold
        `__`); otherwise the first `__` splits."""
        known = sorted((*self.visible, *HOST_SERVERS), key=len, reverse=True)
        server = next((s for s in known if name == s or name.startswith(f"{s}__")), None)
        if server is None:
            server = name.split("__", 1)[0]
        return server, name[len(server) + 2 :] or "*"

    def qualified(self, ref: ToolRef, prefix: str, rest: str) -> None:
        if prefix in self.visible:
            catalog = self.catalogs[prefix]
            if rest == "*" or catalog is None:
                if rest != "*":
                    self.unknown_named.append(ref.text)
                self.add_server(prefix, ref.location)
                return
            found = self.shared.cut(self.visible[prefix]).by_name.get(rest)
            if found is not None:
                self.add(found, ref.location, named=True)
                return
            claude = ref.text.startswith(CLAUDE_MCP_PREFIX)  # suggest in the form the author wrote
            tools = tuple(f"mcp__{prefix}__{t.name}" if claude else f"{prefix}/{t.name}" for t in catalog)
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
        elif typo := typo_of(text, alias_names()):  # `serch`: a misspelt built-in, provably wrong
            self.unresolved.append(Unresolved("unknown-tool", ref, guess=typo))
        elif guess := closest(text, [*self.visible, *(t.name for c in self.catalogs.values() for t in c or ())]):
            self.unresolved.append(Unresolved("unknown-tool", ref, guess=guess))
        else:
            near = closest(text, known_names(), minimum=0.85)
            why = f"not a built-in; did you mean `{near}`?" if near else "no built-in, MCP config or lock here has it"
            self.unverified.append(Unverified(ref, why))
