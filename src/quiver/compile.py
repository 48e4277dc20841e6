"""Manifests and host exports (DESIGN §5): one self-contained JSON document per agent, plus index.json.

Building is pure given a token cache: the same inputs give byte-identical text.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from quiver import __version__
from quiver.capabilities.flows import agent_flows, manifest_flows, tool_labels
from quiver.capabilities.overrides import Classifier
from quiver.config import Config
from quiver.errors import ConfigError, Position
from quiver.jsonout import pretty_bytes
from quiver.metatools import META_TOOLS
from quiver.model import JSON, Location, Lock, sha256_json
from quiver.policy import execution_policy
from quiver.resolve import ResolvedAgent, ResolvedTool
from quiver.sources.token_cache import TokenCache
from quiver.tokens import encoder_name, tool_payload

MANIFEST_VERSION = 1


@dataclass(frozen=True, slots=True)
class Budget:
    preloaded_tools: int
    deferred_tools: int
    preloaded_tokens: int
    deferred_tokens: int
    meta_tool_tokens: int
    server_index_tokens: int
    baseline_tokens: int

    @property
    def initial_tokens(self) -> int:
        """Tokens before the first tool call: preloaded schemas, plus meta-tools and index when deferring."""
        if self.deferred_tools == 0:
            return self.preloaded_tokens
        return self.preloaded_tokens + self.meta_tool_tokens + self.server_index_tokens

    @property
    def saving_tokens(self) -> int:
        return self.baseline_tokens - self.initial_tokens

    def to_json(self) -> dict[str, JSON]:
        ratio = round(self.saving_tokens / self.baseline_tokens, 4) if self.baseline_tokens else 0.0
        return {
            "baseline_tokens": self.baseline_tokens,
            "deferred_tokens": self.deferred_tokens,
            "deferred_tools": self.deferred_tools,
            "initial_tokens": self.initial_tokens,
            "meta_tool_tokens": self.meta_tool_tokens,
            "preloaded_tokens": self.preloaded_tokens,
            "preloaded_tools": self.preloaded_tools,
            "saving_ratio": ratio,
            "saving_tokens": self.saving_tokens,
            "server_index_tokens": self.server_index_tokens,
        }


def loc(location: Location | None) -> str | None:
    return _loc(location) if location is not None else None


@functools.lru_cache(maxsize=65_536)
def _loc(location: Location) -> str:
    return str(location)  # the same reason sources recur across the tools and agents of a run


def tool_tokens(item: ResolvedTool, cache: TokenCache) -> int:
    if item.tool.tokens is not None:
        return item.tool.tokens
    return cache.count_json(tool_payload(item.tool.definition))


def server_index(resolved: ResolvedAgent) -> list[dict[str, JSON]]:
    """What the model sees of servers whose tools are deferred: name, description, deferred count."""
    deferred: dict[str, int] = {}
    for item in resolved.tools:
        if item.load == "deferred":
            deferred[item.server] = deferred.get(item.server, 0) + 1
    return [
        {"description": s.description or "", "name": s.name, "tools": deferred[s.name]}
        for s in resolved.servers
        if s.name in deferred
    ]


def budget_of(resolved: ResolvedAgent, cache: TokenCache, index: list[dict[str, JSON]] | None = None) -> Budget:
    """The agent's token budget; `index` is its `server_index` when the caller has it already."""
    pre = [tool_tokens(t, cache) for t in resolved.tools if t.load == "preloaded"]
    deferred = [tool_tokens(t, cache) for t in resolved.tools if t.load == "deferred"]
    index = server_index(resolved) if index is None else index
    return Budget(
        preloaded_tools=len(pre),
        deferred_tools=len(deferred),
        preloaded_tokens=sum(pre),
        deferred_tokens=sum(deferred),
        meta_tool_tokens=cache.count_json([tool_payload(t) for t in META_TOOLS]),
        server_index_tokens=cache.count_json(index) if index else 0,
        baseline_tokens=sum(pre) + sum(deferred),
    )


# A tool's execution policy by (server, tool sha256, server timeout): one per distinct tool in a run. The dicts
# are shared by every manifest carrying the tool and never changed once built.
Policies = dict[tuple[str, str, int | None], dict[str, JSON]]


def tool_policy(item: ResolvedTool, timeout_ms: int | None, config: Config, lock: Lock | None) -> dict[str, JSON]:
    """The execution policy of a resolved tool (with its reconcile tool's pin)."""
    definition = item.tool.definition
    annotations = definition.get("annotations") if isinstance(definition.get("annotations"), dict) else {}
    policy = execution_policy(
        server=item.server,
        tool=item.tool.name,
        annotations=annotations or {},
        server_timeout_ms=timeout_ms,
        server_policy=config.servers.get(item.server, {}),
        tool_policy=config.tools.get(f"{item.server}/{item.tool.name}", {}),
    )
    if "reconcile" in policy:
        policy["reconcile"] = pin_reconcile(policy["reconcile"], item.server, item.tool.name, lock, config)
    return policy


def build_manifest(
    resolved: ResolvedAgent,
    config: Config,
    cache: TokenCache,
    lock: Lock | None = None,
    policies: Policies | None = None,
    classifier: Classifier | None = None,
) -> dict[str, JSON]:
    """One agent's manifest; `policies` shares the per-tool policies across the agents of a run, `classifier`
    the tools' capability labels (quiver.capabilities)."""
    agent = resolved.agent
    if classifier is None:
        classifier = Classifier(config, lock, {s.name: s for s in resolved.servers})
    flows = agent_flows(resolved, classifier)
    labels = tool_labels(flows)
    index = server_index(resolved)
    budget = budget_of(resolved, cache, index)
    pins: dict[str, list[str]] = {}  # server -> its carried tools' pins, in tool order
    for item in resolved.tools:
        pins.setdefault(item.server, []).append(item.tool.sha256)
    servers = []
    for server in resolved.servers:
        transport: dict[str, JSON] = {"type": server.type or server.raw_type}
        for key in ("command", "cwd", "url"):
            if getattr(server, key) is not None:
                transport[key] = getattr(server, key)
        if server.args:
            transport["args"] = list(server.args)
        if server.env:
            transport["env"] = dict(server.env)
        if server.headers:
            transport["headers"] = dict(server.headers)
        entry: dict[str, JSON] = {
            "name": server.name,
            "description": server.description or "",
            "source": loc(server.location),
            "transport": transport,
            "timeout_ms": server.timeout_ms,
        }
        if server.name in pins:
            entry["catalog_sha256"] = _catalog_sha(pins[server.name])
        servers.append(entry)
    tools = []
    memo = policies if policies is not None else {}
    timeouts = {s.name: s.timeout_ms for s in resolved.servers}
    reasons: dict[int, dict[str, JSON]] = {}  # by id: the agent's tools share a few Decision objects
    for item in resolved.tools:
        definition = item.tool.definition
        distinct = (item.server, item.tool.sha256, timeouts[item.server])
        policy = memo.get(distinct)
        if policy is None:
            policy = memo[distinct] = tool_policy(item, timeouts[item.server], config, lock)
        reason = reasons.get(id(item.decision))
        if reason is None:
            reason = reasons[id(item.decision)] = {
                "code": item.decision.code,
                "rule": item.decision.rule,
                "source": loc(item.decision.source),
                "text": item.decision.text,
            }
        tools.append(
            {
                "server": item.server,
                "name": item.tool.name,
                "load": item.load,
                "reason": reason,
                "names": dict(item.names),
                "named": item.named,
                "side_effect": policy["side_effect"],
                "capabilities": labels.get(f"{item.server}/{item.tool.name}", []),
                "policy": policy,
                "sha256": item.tool.sha256,
                "tokens": tool_tokens(item, cache),
                "definition": definition,
            }
        )
    manifest: dict[str, JSON] = {
        "manifestVersion": MANIFEST_VERSION,
        "generator": f"quiver {__version__}",
        "encoder": encoder_name(),
        "agent": {
            "id": agent.id,
            "name": agent.name or agent.id,
            "description": agent.description or "",
            "source": agent.path,
            "kind": agent.kind,
            "target": agent.target,
            "models": list(agent.models),
            "deferred_tool_loading": agent.deferred_tool_loading,
            "prompt_sha256": agent.prompt_sha256,
        },
        "tool_search": {
            "active": resolved.tool_search.active,
            "reason": resolved.tool_search.reason,
            "mcp_tools": resolved.tool_search.mcp_tools,
            "threshold": resolved.tool_search.threshold,
        },
        "builtins": [
            {"canonical": b.canonical, "kind": b.kind, "ref": b.ref, "source": loc(b.location)}
            for b in resolved.builtins
        ],
        "host_servers": list(resolved.host_servers),
        "servers": servers,
        "tools": tools,
        "meta_tools": [str(t["name"]) for t in META_TOOLS] if budget.deferred_tools else [],
        "server_index": index,
        "budget": budget.to_json(),
        "flows": manifest_flows(flows, enforce=config.flows_enforce),
    }
    return manifest


def pin_reconcile(reconcile: JSON, server: str, tool: str, lock: Lock | None, config: Config) -> dict[str, JSON]:
    """The reconcile table with its tool's pin from the server's locked catalog; ConfigError if not locked."""
    name = reconcile["tool"]
    locked = lock.servers.get(server) if lock is not None else None
    found = next((t for t in locked.tools if t.name == name), None) if locked is not None else None
    if found is None:
        raise ConfigError(
            f"reconcile tool `{name}` of `{server}/{tool}` is not in the locked catalog of `{server}`",
            position=Position(config.path) if config.path else None,
            hint=f"name a tool `{server}` serves, or run `quiver snapshot` if it is new",
        )
    return {**reconcile, "tool_sha256": found.sha256}


def _catalog_sha(pins: list[str]) -> str:
    import hashlib

    return hashlib.sha256("".join(pins).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CheckUnit:
    """One schema check of compile's output: `label` names it in a problem line."""

    label: str
    document: dict[str, JSON]
    schema: str


class CheckUnits:
    """What a run checks against the schemas, by the sha256 of each unit's canonical JSON: every manifest
    without its tools; one tool entry per (load, reason, side effect) kind in the run, inside the first
    manifest (in agent order) that carries it; the index. Every tool entry comes from one code path, and a
    unit's hash says whether these exact bytes were checked before. Manifests are added as they are built,
    so a run keeps only their skeletons once they are rendered."""

    def __init__(self) -> None:
        self.units: dict[str, CheckUnit] = {}
        self._kinds: set[tuple[str, str, str]] = set()

    def _add(self, label: str, document: dict[str, JSON], schema: str) -> None:
        self.units.setdefault(sha256_json(document), CheckUnit(label, document, schema))

    def manifest(self, agent: str, manifest: dict[str, JSON]) -> dict[str, JSON]:
        """Add a manifest's units; returns its skeleton (the manifest with no tools)."""
        skeleton = {**manifest, "tools": []}
        self._add(agent, skeleton, "manifest")
        for tool in manifest["tools"]:
            kind = (tool["load"], tool["reason"]["code"], tool["side_effect"])
            if kind not in self._kinds:
                self._kinds.add(kind)
                label = f"{agent} (tool `{tool['server']}/{tool['name']}`)"
                self._add(label, {**manifest, "tools": [tool]}, "manifest")
        return skeleton

    def index(self, index: dict[str, JSON]) -> None:
        self._add("index.json", index, "index")


def render_json(document: JSON) -> bytes:
    """A manifest, index or host export as the bytes compile writes."""
    return pretty_bytes(document)


def build_index(manifests: Mapping[str, Mapping[str, JSON]], out: str) -> dict[str, JSON]:
    agents = []
    for agent_id in sorted(manifests):
        m = manifests[agent_id]
        agents.append(
            {
                "id": agent_id,
                "manifest": f"{agent_id}.json",
                "source": m["agent"]["source"],
                "tool_search": m["tool_search"]["active"],
                "budget": m["budget"],
            }
        )
    return {"manifestVersion": MANIFEST_VERSION, "generator": f"quiver {__version__}", "out": out, "agents": agents}
