"""What advice reads of a compiled manifest, and the load `quiver compile` gives each tool under given settings.

Pure: a manifest's JSON in, frozen dataclasses out. `predict_loads` asks resolve's one load decision
(DESIGN §3 rules 2-5), so the figures of the advice are those of the manifests the changed config compiles to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from quiver.model import Load as Load  # re-exported: advise names its loads by this type
from quiver.resolve import load_decision


@dataclass(frozen=True, slots=True)
class AgentTool:
    server: str
    name: str
    tokens: int
    load: Load
    reason: str  # the manifest's reason code
    named: bool
    fixed: str | None  # why the config cannot change its load, else None

    @property
    def key(self) -> str:
        return f"{self.server}/{self.name}"


@dataclass(frozen=True, slots=True)
class AgentManifest:
    """What advice needs of one compiled manifest."""

    agent: str
    source: str  # the agent file, relative to the project root
    deferred_tool_loading: bool
    meta_tool_tokens: int
    server_index_tokens: int
    tools: tuple[AgentTool, ...]

    @property
    def overhead(self) -> int:
        return self.meta_tool_tokens + self.server_index_tokens

    @property
    def baseline_tokens(self) -> int:
        return sum(t.tokens for t in self.tools)

    def initial_tokens(self, loads: Mapping[str, str] | None = None) -> int:
        """Tokens up front under `loads` (default: the manifest's): preloaded schemas, plus overhead if deferring."""
        current = {t.key: t.load for t in self.tools} if loads is None else loads
        pre = sum(t.tokens for t in self.tools if current[t.key] == "preloaded")
        return pre + (self.overhead if any(current[t.key] != "preloaded" for t in self.tools) else 0)


@dataclass(frozen=True, slots=True)
class ServerLoading:
    """A project-level server's loading settings, after the quiver config's overlays."""

    name: str
    preload: bool | None = None
    defer_tools: str | None = None
    preload_tools: tuple[str, ...] = ()
    base_preload_tools: tuple[str, ...] = ()  # from the MCP config files: what applies when the overlay sets none


def manifest_view(data: Mapping[str, Any]) -> AgentManifest:
    """The parts of a compiled manifest (`build/quiver/<agent>.json`) that advice reads."""
    agent = data["agent"]
    source = str(agent.get("source") or "")
    inline = {str(s["name"]) for s in data.get("servers", []) if str(s.get("source") or "").split(":")[0] == source}
    budget = data.get("gateway_budget") or data.get("budget") or {}  # the tokens quiver serve costs
    tools = []
    for t in data["tools"]:
        gateway = t.get("gateway") if isinstance(t.get("gateway"), dict) else t  # advice is about quiver serve
        reason = gateway.get("reason") or {}
        rule = int(reason.get("rule") or 0)
        fixed = None
        if rule == 0:
            fixed = "tool search is inactive for this agent"
        elif str(t["server"]) in inline:
            fixed = f"server `{t['server']}` is defined in the agent's own `mcp-servers`"
        load: Load = "preloaded" if gateway.get("load") == "preloaded" else "deferred"
        tools.append(
            AgentTool(
                str(t["server"]), str(t["name"]), int(t.get("tokens") or 0), load, str(reason.get("code") or ""),
                bool(t.get("named")), fixed,
            )
        )  # fmt: skip
    return AgentManifest(
        agent=str(agent["id"]),
        source=source,
        deferred_tool_loading=bool(agent.get("deferred_tool_loading")),
        meta_tool_tokens=int(budget.get("meta_tool_tokens") or 0),
        server_index_tokens=int(budget.get("server_index_tokens") or 0),
        tools=tuple(sorted(tools, key=lambda t: t.key)),
    )


def loading_from_manifests(manifests: Iterable[AgentManifest]) -> dict[str, ServerLoading]:
    """Servers' settings as the manifests' reasons show them (when the project config is not at hand)."""
    pre: dict[str, set[str]] = {}
    flags: dict[str, set[str]] = {}
    for m in manifests:
        for t in m.tools:
            pre.setdefault(t.server, set())
            if t.reason == "preload-tools":
                pre[t.server].add(t.name)
            flags.setdefault(t.server, set()).add(t.reason)
    return {
        name: ServerLoading(
            name,
            preload=True if "server-preloaded" in flags[name] else None,
            defer_tools="never" if "server-never-defers" in flags[name] else None,
            preload_tools=tuple(sorted(names)),
        )
        for name, names in pre.items()
    }


def predict_loads(
    manifest: AgentManifest, servers: Mapping[str, ServerLoading], *, deferred_loading: bool
) -> dict[str, Load]:
    """The load `quiver compile` gives each tool under these server settings: resolve's `load_decision`."""
    out: dict[str, Load] = {}
    for t in manifest.tools:
        if t.fixed is not None:
            flips = t.reason == "named" and deferred_loading and not manifest.deferred_tool_loading
            out[t.key] = "deferred" if flips else t.load
            continue
        s = servers.get(t.server) or ServerLoading(t.server)
        out[t.key] = load_decision(
            tool=t.name,
            named=t.named,
            deferred_tool_loading=deferred_loading,
            defer_tools=s.defer_tools,
            preload=s.preload,
            preload_tools=s.preload_tools or s.base_preload_tools,
        )[0]
    return out
