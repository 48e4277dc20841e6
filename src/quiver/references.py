"""Tool references (DESIGN §3): which tools an agent's `tools` entries select, and what they cannot.

Pure. `Selector` walks the entries in order: built-ins, servers, `server/tool`, bare names. What it cannot
honour is data: `Unresolved` entries quiver can prove wrong, `Unverified` ones only the host can resolve,
references to host-provided servers, servers without a catalog. quiver.resolve builds on the selection;
lint rules (lint/agt/tool_references.py, unverifiable_tool_references.py) report the rest.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from quiver.builtins import alias_names, is_toolset, is_vscode_set_tool, known_names
from quiver.hosts import claude_code
from quiver.hosts.base import Host
from quiver.hosts.model import BuiltinRef, HostId
from quiver.model import Agent, Dialect, Location, Lock, LockedTool, Server, ToolRef
from quiver.names import collision_free
from quiver.project import HOST_SERVERS, apply_overlay
from quiver.suggest import closest, typo_of

CLAUDE_MCP_PREFIX = "mcp__"  # Claude Code's model-facing MCP names: `mcp__server__tool`, `mcp__server`
# The host's own server behind a shadowing name: a project server at this address is that same server.
SHADOWING_URLS = {"github": "https://api.githubcopilot.com/mcp"}

UnresolvedKind = Literal[
    "unknown-tool", "ambiguous-tool", "unknown-server", "host-syntax", "not-read-by-host", "shadowed-by-host"
]  # fmt: skip
ResolvedBuiltin = BuiltinRef  # a `tools` entry naming one of the host's own tools


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
    why: str = ""  # host-syntax: what the host does with the entry as written


@dataclass(frozen=True, slots=True)
class Unverified:
    """A `tools` entry only the host can resolve (a server configured elsewhere, an extension tool, ...)."""

    ref: ToolRef
    why: str  # what makes it uncheckable, as the finding lists it


def visible_servers(
    agent: Agent, project_servers: Mapping[str, Server], lock: Lock | None, host_servers: Collection[str] = HOST_SERVERS
) -> dict[str, Server]:
    """Project servers, overridden by the agent's own `mcp-servers`, plus the host's own servers that the
    lock has a catalog of."""
    visible = dict(project_servers)
    for server in agent.mcp_servers:
        base = visible.get(server.name)
        visible[server.name] = apply_overlay(base, server) if base is not None and not server.is_definition else server
    if lock is not None:
        for name in sorted(host_servers):
            if name not in visible and name in lock.servers:
                visible[name] = Server(name=name, location=lock.servers[name].location, dialect=Dialect.HOST)
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
        self,
        agent: Agent,
        visible: Mapping[str, Server],
        lock: Lock | None,
        catalogs: Catalogs | None = None,
        host: Host | None = None,
        everywhere: Mapping[str, Server] | None = None,
        settings: Mapping[str, object] | None = None,
    ) -> None:
        from quiver.hosts import HostId as _Id
        from quiver.hosts import host as host_of

        self.runner = host if host is not None else host_of(_Id.COPILOT_CLI)
        # the `tools` syntax is the file's (a Claude Code subagent's), whichever host runs it (`--host`)
        self.claude = agent.kind == "claude"
        self.agent = agent
        self.visible = visible
        self.everywhere = everywhere or {}  # servers of every config file, read by this host or not
        self.offline = bool((settings or {}).get("offline"))  # the host runs without its own servers
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
        self.builtins.setdefault(canonical, BuiltinRef(ref.text, canonical, kind, ref.location))

    def host_syntax(self, ref: ToolRef, guess: str | None, why: str, server: str | None = None) -> None:
        self.unresolved.append(Unresolved("host-syntax", ref, server=server, guess=guess, why=why))

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
            if self.claude:
                self.claude_foreign(ref, *text.split("/", 1))
            else:
                self.qualified(ref, *text.split("/", 1))
            return
        found = self.runner.builtin(text, ref.location)
        if found is None and not self.claude and self.runner.id == HostId.CLAUDE_CODE:
            found = claude_code.from_alias(text, ref.location)  # a Copilot agent run on Claude Code (`--host`)
        if found is not None:
            self.builtins.setdefault(found.canonical, found)
        elif self.claude:
            self.claude_bare(ref, text)
        elif text in self.visible:
            self.add_server(text, ref.location)
        elif text in self.runner.builtin_servers:
            self.host_reference(ref, text)
        elif text in self.everywhere:
            self.not_read(ref, text)
        else:
            self.bare(ref, text)

    def claude_name(self, name: str) -> tuple[str, str]:
        """Claude Code's `mcp__server__tool` (after `mcp__`) as (server, tool); `mcp__server` (and
        `mcp__server__*`) is the whole server. The longest known server name that fits wins (a name may hold
        `__`); otherwise the first `__` splits."""
        known = sorted((*self.visible, *self.runner.builtin_servers, *self.everywhere), key=len, reverse=True)
        server = next((s for s in known if name == s or name.startswith(f"{s}__")), None)
        if server is None:
            server = name.split("__", 1)[0]
        return server, name[len(server) + 2 :] or "*"

    def qualified(self, ref: ToolRef, prefix: str, rest: str) -> None:
        if prefix in self.runner.shadowing_servers and prefix in self.visible and not self.claude:
            own = self.runner.name
            if self.offline:  # recorded offline: the host's own server is not there, and the project's is shadowed
                self.host_reference(ref, prefix)
                why = f"offline, {own} has no `{prefix}` server of its own and does not use the project's"
                self.unresolved.append(Unresolved("shadowed-by-host", ref, server=prefix, why=why))
                return
            url = self.visible[prefix].url or ""
            if not url.rstrip("/").startswith(SHADOWING_URLS.get(prefix, "-")):
                why = (
                    f"{own} serves `{prefix}/...` from its own `{prefix}` server, not the project's "
                    f"({self.visible[prefix].location}); quiver counts the project's catalog for it"
                )
                self.unresolved.append(Unresolved("shadowed-by-host", ref, server=prefix, why=why))
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
        elif prefix in self.runner.builtin_servers:
            self.host_reference(ref, prefix)
        elif prefix in self.everywhere:
            self.not_read(ref, prefix)
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

    def not_read(self, ref: ToolRef, server: str) -> None:
        """A server some config file defines, but not one the agent's host reads."""
        where = self.everywhere[server].location.file
        host = self.runner
        why = f"`{server}` is defined in {where}, which {host.name} does not read"
        read = sorted(host.config_files or ())
        guess = read[0] if read else None
        self.unresolved.append(Unresolved("not-read-by-host", ref, server=server, guess=guess, why=why))

    def claude_foreign(self, ref: ToolRef, prefix: str, rest: str) -> None:
        """`server/tool` in a Claude Code subagent: Copilot's form, which Claude Code ignores."""
        server = prefix if prefix in self.visible or prefix in self.everywhere else None
        guess = f"mcp__{prefix}" if rest == "*" else f"mcp__{prefix}__{rest}"
        why = "Claude Code reads MCP tools as `mcp__server__tool` and ignores this entry"
        self.host_syntax(ref, guess if server or prefix else None, why, server)

    def claude_bare(self, ref: ToolRef, text: str) -> None:
        """A bare name in a Claude Code subagent that is not one of its built-ins (names are case-sensitive)."""
        if (cased := claude_code.case_of(text)) is not None:
            why = f"Claude Code's tool names are case-sensitive: it sends no tool for `{text}`"
            self.host_syntax(ref, cased, why)
            return
        if text in self.visible or text in self.everywhere:
            why = "Claude Code names a whole server `mcp__server` and ignores a bare server name"
            self.host_syntax(ref, f"mcp__{text}", why, text)
            return
        owners = sorted(name for name, catalog in self.catalogs.items() for t in catalog or () if t.name == text)
        if owners:
            why = "Claude Code reads MCP tools as `mcp__server__tool` and ignores a bare tool name"
            self.host_syntax(ref, f"mcp__{owners[0]}__{text}", why, owners[0])
            return
        near = closest(text, sorted(claude_code.BUILTIN_NAMES), minimum=0.8)
        if near is not None:
            self.unresolved.append(Unresolved("unknown-tool", ref, guess=near))
        else:
            self.unverified.append(Unverified(ref, "not a Claude Code tool quiver knows, nor an MCP tool here"))

    def copilot_named(self, text: str) -> LockedTool | None:
        """The tool whose Copilot CLI name (`server-tool`) is `text`, when the entry is written that way."""
        from quiver.names import copilot_cli_name

        for name in sorted(self.catalogs):
            if text.startswith(f"{name}-") or copilot_cli_name(name, "") == text[: len(name) + 1]:
                for tool in self.catalogs[name] or ():
                    if copilot_cli_name(name, tool.name) == text:
                        return tool
        return None

    def host_reference(self, ref: ToolRef, server: str) -> None:
        self.host.setdefault(server, []).append(ref)

    def bare(self, ref: ToolRef, text: str) -> None:
        owners = sorted(
            (name, tool) for name, catalog in self.catalogs.items() for tool in catalog or () if tool.name == text
        )
        if not owners and self.runner.id == HostId.COPILOT_CLI and (named := self.copilot_named(text)):
            self.add(named, ref.location, named=True)  # `server-tool`, the form Copilot CLI sends (recorded)
            return
        if owners and not self.runner.bare_names_resolve:
            server = owners[0][0]
            why = f"{self.runner.name} reaches MCP tools only as `server/tool`, not by a bare name"
            self.host_syntax(ref, f"{server}/{text}", why, server)
        elif len(owners) == 1:
            self.add(owners[0][1], ref.location, named=True)
        elif owners:
            servers = tuple(name for name, _ in owners)
            self.unresolved.append(Unresolved("ambiguous-tool", ref, candidates=servers))
        elif not self.visible:  # no config here defines a server: the host's own configs may serve it
            near = closest(text, known_names(), minimum=0.85)
            why = f"not a built-in; did you mean `{near}`?" if near else "no built-in, MCP config or lock here has it"
            self.unverified.append(Unverified(ref, why))
        elif typo := typo_of(text, alias_names()):  # `serch`: a misspelt built-in, provably wrong
            self.unresolved.append(Unresolved("unknown-tool", ref, guess=typo))
        elif guess := closest(text, [*self.visible, *(t.name for c in self.catalogs.values() for t in c or ())]):
            self.unresolved.append(Unresolved("unknown-tool", ref, guess=guess))
        else:
            near = closest(text, known_names(), minimum=0.85)
            why = f"not a built-in; did you mean `{near}`?" if near else "no built-in, MCP config or lock here has it"
            self.unverified.append(Unverified(ref, why))
