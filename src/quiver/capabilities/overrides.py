"""The `capabilities` overrides of the quiver config, and the classification of a project's tools with them.

An override sits in a server's or a tool's policy table, beside `side_effect`:

    [servers.github]
    capabilities = { private_data = false }        # our token reaches public repositories only

    [tools."fetch/fetch"]
    capabilities = { exfiltration = false }        # the proxy in front of it allows two hosts

`true` sets a label, `false` clears it; a tool's table wins over its server's for the labels it names.
An override is *used* when it changes a label of at least one tool of the lock; `Classifier.unused`
lists the others (lint reports them: SEC103), so a stale or misspelt override does not hide a flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from quiver.capabilities._builtins import classify_builtin
from quiver.capabilities._tool import ToolFacts, classify_tool
from quiver.capabilities.model import LABELS, SHOWN, Capabilities, Label, Reason
from quiver.config import Config
from quiver.model import Location, Lock, LockedServer, LockedTool, Server
from quiver.sources.capability_cache import CapabilityCache, cache_key


@dataclass(frozen=True, slots=True)
class Override:
    """One `label = true|false` of a `capabilities` table."""

    table: str  # "servers" | "tools"
    name: str  # the server, or `server/tool`
    label: Label
    value: bool
    location: Location | None  # in the quiver config

    @property
    def key(self) -> str:
        name = f'"{self.name}"' if self.table == "tools" else self.name
        return f"{self.table}.{name}.capabilities.{self.label}"


@dataclass(frozen=True, slots=True)
class Unused:
    override: Override
    why: str


def overrides_of(config: Config) -> tuple[Override, ...]:
    out = []
    for (table, name), labels in sorted(config.capabilities.items()):
        for text, value in sorted(labels.items()):
            label = _LABEL.get(text)
            if label is not None:
                where = config.position(table, name, "capabilities", text)
                location = Location(where.file, where.line, where.column) if where.line else None
                out.append(Override(table, name, label, value, location))
    return tuple(out)


_LABEL: dict[str, Label] = {label: label for label in LABELS}


class Classifier:
    """Every tool's capabilities in one project: classified once per (server, tool pin), overrides applied."""

    def __init__(
        self, config: Config, lock: Lock | None, servers: Mapping[str, Server], cache: CapabilityCache | None = None
    ) -> None:
        self._cache = cache
        self._config = config
        self._lock = lock
        self._servers = servers
        self._overrides = overrides_of(config)
        self._by_target: dict[tuple[str, str], list[Override]] = {}
        for override in self._overrides:
            self._by_target.setdefault((override.table, override.name), []).append(override)
        self._memo: dict[tuple[str, str, str], Capabilities] = {}
        self._used: set[Override] = set()
        self._abouts: dict[str, str] = {}

    def tool(self, server: str, tool: LockedTool) -> Capabilities:
        key = (server, tool.name, tool.sha256)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._classify(server, tool)
        return found

    def builtin(self, ref: str, canonical: str) -> Capabilities | None:
        return classify_builtin(ref, canonical)

    def unused(self) -> tuple[Unused, ...]:
        """Overrides that change no label of any tool the lock lists (every tool is classified for this)."""
        locked = self._lock.servers if self._lock is not None else {}
        for name in sorted(locked):
            for tool in locked[name].tools:
                self.tool(name, tool)
        out = []
        for override in self._overrides:
            if override not in self._used:
                out.append(Unused(override, self._why_unused(override, locked)))
        return tuple(out)

    def _why_unused(self, override: Override, locked: Mapping[str, LockedServer]) -> str:
        server, _, tool = override.name.partition("/")
        state = "already" if override.value else "already not"
        label = SHOWN[override.label]
        if server not in locked:
            return f"the lock ({self._config.lock}) has no server `{server}`"
        if override.table == "tools":
            if not any(t.name == tool for t in locked[server].tools):
                return f"server `{server}` has no tool `{tool}` in the lock"
            return f"`{override.name}` is {state} {label} without it"
        return f"every tool of `{server}` is {state} {label} without it, or its own table decides"

    def save(self) -> None:
        """Write the cache, when there is one and something new was classified."""
        if self._cache is not None:
            self._cache.save()

    def _derived(self, server: str, tool: LockedTool) -> tuple[Reason, ...]:
        """What the classifier says of the tool (from the cache when it said it before)."""
        facts = self._facts(server, tool)
        key = cache_key(server, tool.sha256, facts.server_description, facts.side_effect) if self._cache else ""
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            return tuple(Reason(_LABEL[label], text, origin) for label, text, origin in cached if label in _LABEL)
        reasons = classify_tool(facts).reasons
        if self._cache is not None:
            self._cache.put(key, [[r.label, r.text, r.origin] for r in reasons])
        return reasons

    def _classify(self, server: str, tool: LockedTool) -> Capabilities:
        reasons: dict[Label, Reason] = {r.label: r for r in self._derived(server, tool)}
        cleared: dict[Label, Reason] = {}
        decided: set[Label] = set()
        for target in (("tools", f"{server}/{tool.name}"), ("servers", server)):  # the tool's table wins
            for override in self._by_target.get(target, ()):
                if override.label in decided:
                    continue
                decided.add(override.label)
                where = f" ({override.location})" if override.location else ""
                because = Reason(override.label, f"`{override.key} = {str(override.value).lower()}`{where}", "override")
                if override.value and override.label not in reasons:
                    reasons[override.label] = because
                    self._used.add(override)
                elif not override.value and override.label in reasons:
                    cleared[override.label] = because
                    del reasons[override.label]
                    self._used.add(override)
        return Capabilities().with_reasons(reasons, cleared)

    def _about(self, server: str) -> str:
        """What the server says of itself: its config description, the lock's serverInfo and instructions."""
        found = self._abouts.get(server)
        if found is None:
            defined = self._servers.get(server)
            locked = self._lock.servers.get(server) if self._lock is not None else None
            about = [defined.description or "" if defined is not None else ""]
            if locked is not None:
                about += [str(locked.server_info.get(k) or "") for k in ("title", "description")]
                about.append(locked.instructions or "")
            found = self._abouts[server] = "\n".join(a for a in about if a)
        return found

    def _facts(self, server: str, tool: LockedTool) -> ToolFacts:
        definition = tool.definition
        table = {**self._config.servers.get(server, {}), **self._config.tools.get(f"{server}/{tool.name}", {})}
        side_effect = table.get("side_effect")
        title = definition.get("title")
        return ToolFacts(
            server=server,
            name=tool.name,
            description=tool.description,
            title=title if isinstance(title, str) else "",
            input_schema=tool.input_schema if isinstance(tool.input_schema, dict) else {},
            annotations=tool.annotations,
            server_description=self._about(server),
            side_effect=side_effect if isinstance(side_effect, str) else None,
        )
