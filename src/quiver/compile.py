"""Manifests and host exports (DESIGN §5): one self-contained JSON document per agent, plus index.json.

Building is pure given a token cache: the same inputs give byte-identical text.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quiver import __version__
from quiver.capabilities.flows import agent_flows, manifest_flows
from quiver.capabilities.overrides import Classifier
from quiver.config import Config
from quiver.errors import ConfigError, Position
from quiver.hosts.model import Decision, ToolSearch
from quiver.jsonout import pretty_bytes
from quiver.metatools import META_TOOLS
from quiver.model import JSON, Location, Lock, sha256_json
from quiver.policy import execution_policy
from quiver.resolve import ResolvedAgent, ResolvedTool
from quiver.sources.token_cache import TokenCache
from quiver.tokens import encoder_name, tool_payload

MANIFEST_VERSION = 2


@dataclass(frozen=True, slots=True)
class Budget:
    """One agent's tokens before its first tool call, as a host (or quiver's gateway) loads its tools.

    `meta_tool_tokens` is the search machinery deferral adds up front (quiver's meta-tools, or the host's
    own search tool where the host adds it only to reach deferred tools); `server_index_tokens` is what the
    model reads of the deferred tools (quiver's server index, or Claude Code's list of deferred tool names);
    `skill_tokens` the skills up front (every visible skill's name and description, and the bodies of the
    skills the agent names), `skill_deferred_tokens` the bodies loaded only when used."""

    preloaded_tools: int
    deferred_tools: int
    preloaded_tokens: int
    deferred_tokens: int
    meta_tool_tokens: int
    server_index_tokens: int
    baseline_tokens: int
    skill_tokens: int = 0
    skill_deferred_tokens: int = 0

    @property
    def initial_tokens(self) -> int:
        """Tokens before the first tool call: preloaded schemas and skills, plus the search machinery and the
        index of deferred tools when deferring."""
        if self.deferred_tools == 0:
            return self.preloaded_tokens + self.skill_tokens
        return self.preloaded_tokens + self.meta_tool_tokens + self.server_index_tokens + self.skill_tokens

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
            "skill_deferred_tokens": self.skill_deferred_tokens,
            "skill_tokens": self.skill_tokens,
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
    """What the model sees of servers whose tools quiver serve keeps behind its meta-tools: name,
    description, count of those tools."""
    deferred: dict[str, int] = {}
    for item in resolved.tools:
        if item.gateway_load == "deferred":
            deferred[item.server] = deferred.get(item.server, 0) + 1
    return [
        {"description": s.description or "", "name": s.name, "tools": deferred[s.name]}
        for s in resolved.servers
        if s.name in deferred
    ]


def skill_tokens(resolved: ResolvedAgent, cache: TokenCache) -> SkillTokens:
    """(up front, deferred) tokens of the agent's skills: the host's listing of every visible skill's name
    and description, plus the bodies of the skills it names; the other bodies load only when used."""
    if not resolved.skills:
        return 0, 0
    listing = resolved.host.skill_listing([(s.id, s.description or "") for s in resolved.skills])
    named = {s.path for s in resolved.named_skills}
    up = cache.count(listing) + sum(cache.count(s.body) for s in resolved.skills if s.path in named)
    later = sum(cache.count(s.body) for s in resolved.skills if s.path not in named)
    return up, later


def budget_of(resolved: ResolvedAgent, cache: TokenCache) -> Budget:
    """The agent's token budget as its host loads its tools and skills (the true cost of running it)."""
    pre = [tool_tokens(t, cache) for t in resolved.tools if t.load == "preloaded"]
    deferred = [t for t in resolved.tools if t.load == "deferred"]
    deferred_tokens = [tool_tokens(t, cache) for t in deferred]
    split = resolved.split
    listing = 0
    if split is not None and split.lists_deferred and deferred:
        key = resolved.host.names_key
        listing = cache.count("\n".join(t.names.get(key, t.tool.name) for t in deferred))
    up, later = skill_tokens(resolved, cache)
    return Budget(
        preloaded_tools=len(pre),
        deferred_tools=len(deferred),
        preloaded_tokens=sum(pre),
        deferred_tokens=sum(deferred_tokens),
        meta_tool_tokens=split.search_tool_tokens if split is not None else 0,
        server_index_tokens=listing,
        baseline_tokens=sum(pre) + sum(deferred_tokens) + up + later,
        skill_tokens=up,
        skill_deferred_tokens=later,
    )


def gateway_budget_of(resolved: ResolvedAgent, cache: TokenCache, index: list[dict[str, JSON]] | None = None) -> Budget:
    """The agent's token budget through `quiver serve`: what it exposes directly, plus its meta-tools and
    server index while it keeps anything behind them; `index` is its `server_index` when the caller has it."""
    pre = [tool_tokens(t, cache) for t in resolved.tools if t.gateway_load == "preloaded"]
    deferred = [tool_tokens(t, cache) for t in resolved.tools if t.gateway_load == "deferred"]
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


SkillTokens = tuple[int, int]  # (up front, deferred)


# A tool's execution policy by (server, tool sha256, server timeout): one per distinct tool in a run. The dicts
# are shared by every manifest carrying the tool and never changed once built.
Policies = dict[tuple[str, str, int | None], dict[str, JSON]]
Definitions = dict[int, "Definition"]  # id of a locked tool's definition -> its manifest copy, per run


class Definition(dict[str, JSON]):
    """A locked tool's definition as manifests carry it: a plain mapping to every reader, whose JSON is
    rendered once per run (`render_json`), however many manifests carry the tool (the definitions are
    most of a manifest's bytes: 127,458 entries of 10,000 distinct tools in a 1,000-agent fleet)."""

    __slots__ = ("_fragment",)
    _fragment: object

    def fragment(self) -> object:
        """The definition's pretty JSON indented for its place in a manifest (`tools[i].definition`)."""
        try:
            return self._fragment
        except AttributeError:
            import orjson

            text = orjson.dumps(dict(self), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
            self._fragment = orjson.Fragment(text.replace(b"\n", b"\n" + b" " * _DEFINITION_INDENT))
            return self._fragment


_DEFINITION_INDENT = 6  # a manifest's tool entry is at depth 2: its keys, and so a definition's lines, at 6


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
    definitions: Definitions | None = None,
    classifier: Classifier | None = None,
) -> dict[str, JSON]:
    """One agent's manifest; `policies` and `definitions` share the per-tool policies and definitions
    across the agents of a run, `classifier` the tools' capability labels (quiver.capabilities)."""
    agent = resolved.agent
    if classifier is None:
        classifier = Classifier(config, lock, {s.name: s for s in resolved.servers})
    flows = agent_flows(resolved, classifier)
    carried = flows.carried  # one per resolved tool, in the same order (the built-ins after them)
    index = server_index(resolved)
    budget = budget_of(resolved, cache)
    gateway = gateway_budget_of(resolved, cache, index)
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

    def reason_of(decision: Decision | None) -> dict[str, JSON]:
        if decision is None:
            decision = _NO_DECISION
        found = reasons.get(id(decision))
        if found is None:
            found = reasons[id(decision)] = {
                "basis": decision.basis,
                "code": decision.code,
                "host": decision.host,
                "rule": decision.rule,
                "source": loc(decision.source),
                "text": decision.text,
            }
        return found

    gateway_entries: dict[tuple[str, int], dict[str, JSON]] = {}
    shared = definitions if definitions is not None else {}
    for position, item in enumerate(resolved.tools):
        definition = shared.get(id(item.tool.definition))
        if definition is None:
            definition = shared[id(item.tool.definition)] = Definition(item.tool.definition)
        distinct = (item.server, item.tool.sha256, timeouts[item.server])
        policy = memo.get(distinct)
        if policy is None:
            policy = memo[distinct] = tool_policy(item, timeouts[item.server], config, lock)
        through = (item.gateway_load, id(item.gateway_decision))
        gateway_entry = gateway_entries.get(through)
        if gateway_entry is None:
            gateway_entry = gateway_entries[through] = {
                "load": item.gateway_load,
                "reason": reason_of(item.gateway_decision),
            }
        tools.append(
            {
                "server": item.server,
                "name": item.tool.name,
                "load": item.load,
                "reason": reason_of(item.decision),
                "gateway": gateway_entry,
                "names": dict(item.names),
                "named": item.named,
                "side_effect": policy["side_effect"],
                "capabilities": list(carried[position].capabilities.labels),
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
        "host": host_json(resolved),
        "tool_search": tool_search_json(resolved.tool_search),
        "gateway_tool_search": tool_search_json(resolved.gateway_search or resolved.tool_search),
        "builtins": [
            {
                "canonical": b.canonical,
                "kind": b.kind,
                "note": b.note,
                "ref": b.ref,
                "sent": list(b.sent),
                "source": loc(b.location),
            }
            for b in resolved.builtins
        ],
        "host_servers": list(resolved.host_servers),
        "unresolved": unresolved_json(resolved),
        "servers": servers,
        "tools": tools,
        "meta_tools": [str(t["name"]) for t in META_TOOLS] if gateway.deferred_tools else [],
        "server_index": index,
        "skills": [
            {
                "body": "up_front" if s in resolved.named_skills else "deferred",
                "description": s.description or "",
                "name": s.id,
                "source": s.path,
            }
            for s in resolved.skills
        ],
        "budget": budget.to_json(),
        "gateway_budget": gateway.to_json(),
        "flows": manifest_flows(flows, enforce=config.flows_enforce),
    }
    return manifest


_NO_DECISION = Decision(0, "tool-search-inactive", "", None)


def tool_search_json(search: ToolSearch) -> dict[str, JSON]:
    return {
        "active": search.active,
        "measured": search.measured,
        "mcp_tools": search.mcp_tools,
        "reason": search.reason,
        "threshold": search.threshold,
        "unit": search.unit,
    }


_UNRESOLVED_WHY = {
    "unknown-tool": "the server serves no tool of this name",
    "ambiguous-tool": "several servers serve a tool of this name",
    "unknown-server": "no MCP config quiver reads defines this server",
}


def unresolved_json(resolved: ResolvedAgent) -> list[JSON]:
    """The `tools` entries the manifest carries no tool or built-in for, in file order, each with why: quiver
    can prove it wrong (`unresolved`: lint says how to fix it) or only the host can resolve it (`unverified`).
    No entry the agent wrote leaves the manifest without a trace."""
    rows: list[tuple[tuple[int, int], JSON]] = []
    for item in resolved.unresolved:
        why = item.why or _UNRESOLVED_WHY.get(item.kind, item.kind)
        at = item.ref.location
        rows.append(
            (
                (at.line, at.column),
                {"ref": item.ref.text, "status": "unresolved", "kind": item.kind, "why": why, "source": loc(at)},
            )
        )
    for unverified in resolved.unverified:
        at = unverified.ref.location
        rows.append(
            (
                (at.line, at.column),
                {
                    "ref": unverified.ref.text,
                    "status": "unverified",
                    "kind": "host-only",
                    "why": unverified.why,
                    "source": loc(at),
                },
            )
        )
    return [row for _, row in sorted(rows, key=lambda r: r[0])]


def host_json(resolved: ResolvedAgent) -> dict[str, JSON]:
    """The host an agent is resolved for, why, its model, and what it does with its own tools."""
    host = resolved.host
    split = resolved.split
    return {
        "basis": host.basis,
        "behind_gateway": host.behind_gateway(),
        "builtins_deferred": list(split.builtins_deferred) if split else [],
        "builtins_up_front": list(split.builtins_up) if split else [],
        "description_limit": host.description_limit,
        "id": host.id.value,
        "lists_deferred_names": bool(split and split.lists_deferred),
        "model": resolved.model,
        "model_source": resolved.model_source,
        "name": host.name,
        "reason": resolved.host_reason,
        "search_tool": split.search_tool if split else None,
        "version": host.version,
    }


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
        self._kinds: set[tuple[str, str, str, str]] = set()

    def _add(self, label: str, document: dict[str, JSON], schema: str) -> None:
        self.units.setdefault(sha256_json(document), CheckUnit(label, document, schema))

    def manifest(self, agent: str, manifest: dict[str, JSON]) -> dict[str, JSON]:
        """Add a manifest's units; returns its skeleton (the manifest with no tools)."""
        skeleton = {**manifest, "tools": []}
        self._add(agent, skeleton, "manifest")
        for tool in manifest["tools"]:
            kind = (tool["load"], tool["reason"]["code"], tool["side_effect"], tool["gateway"]["reason"]["code"])
            if kind not in self._kinds:
                self._kinds.add(kind)
                label = f"{agent} (tool `{tool['server']}/{tool['name']}`)"
                self._add(label, {**manifest, "tools": [tool]}, "manifest")
        return skeleton

    def index(self, index: dict[str, JSON]) -> None:
        self._add("index.json", index, "index")


def manifest_file(agent_id: str, suffix: str = ".json") -> str:
    """An agent's manifest file, relative to the output folder: a Claude Code plugin's agent
    (`plugin:agent`) in its plugin's folder (`plugin/agent.json`)."""
    return agent_id.replace(":", "/") + suffix


def output_files(out: str, agent_id: str, emit_hosts: Sequence[str] = ()) -> tuple[str, ...]:
    """The project-relative files compile writes for an agent: its manifest, then one export per `--emit`."""
    return (
        f"{out}/{manifest_file(agent_id)}",
        *(f"{out}/{manifest_file(agent_id, f'.{api}.json')}" for api in emit_hosts),
    )


def render_json(document: JSON) -> bytes:
    """A manifest, index or host export as the bytes compile writes (`pretty_bytes`'s): a manifest's
    `Definition`s are spliced in as rendered once (the same bytes, in about half the time)."""
    try:
        import orjson

        options = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
        return orjson.dumps(document, option=options | orjson.OPT_PASSTHROUGH_SUBCLASS, default=_plain)
    except (ImportError, TypeError):
        return pretty_bytes(document)


def _plain(value: object) -> object:
    """orjson's `default` with OPT_PASSTHROUGH_SUBCLASS: a Definition at a manifest's tool depth is its
    fragment; any other subclass of a JSON type is serialised as that type."""
    if isinstance(value, Definition):
        return value.fragment()
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def index_entry(agent_id: str, manifest: Mapping[str, JSON]) -> dict[str, JSON]:
    """An agent's entry in index.json, from its manifest (its tools are not read)."""
    return {
        "id": agent_id,
        "manifest": manifest_file(agent_id),
        "source": manifest["agent"]["source"],
        "host": manifest["host"]["id"],
        "tool_search": manifest["tool_search"]["active"],
        "budget": manifest["budget"],
        "gateway_budget": manifest["gateway_budget"],
    }


def build_index(entries: Mapping[str, Mapping[str, JSON]], out: str) -> dict[str, JSON]:
    """index.json: the agents' `index_entry`s by agent id."""
    agents: list[JSON] = [entries[agent_id] for agent_id in sorted(entries)]
    return {"manifestVersion": MANIFEST_VERSION, "generator": f"quiver {__version__}", "out": out, "agents": agents}
