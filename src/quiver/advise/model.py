"""The cost model of preloading a tool, and the project-wide decision it leads to (`advise`).

Pure: recorded usage (`stats.UsageStats`) and manifests in, frozen dataclasses out.

## The model

For one tool of one agent, over the agent's N recorded sessions:

- T: the tool's schema tokens (the manifest's `tokens`);
- u: share of sessions that called it (P(use));
- w: share of sessions that loaded it (a search hit, or described) and never called it;
- D_def: discovery tokens before its first call when it was deferred: the measured mean over those first
  uses; never measured (it was always preloaded): one search_tools answer plus one describe_tool answer,
  `DISCOVERY_TOKENS["search"] + T` (2 steps);
- D_pre: the same when it was preloaded (measured; 0 when never measured: preloaded tools need no search).

Expected tokens it costs a session:

    preloaded:  T + u * D_pre                  (its schema is in every session)
    deferred:   u * (T + D_def) + w * T        (schema and discovery only when used, plus wasted loads)

**Rule**: preload iff  T * (1 - u - w)  <  u * (D_def - D_pre), that is when the discovery a use costs,
times how often it is used, outweighs carrying the schema in the sessions that do not use it. A tool
used in most sessions with a small schema is preloaded; a large schema used rarely is deferred.

Across agents: a server's `preload_tools` is project-wide, so each tool gets one decision, the one that
minimises the expected tokens of all recorded sessions: preload iff sum over agents of
N_a * (deferred_a - preloaded_a) > 0 (a single agent reduces to the rule above).

Then per agent: while anything is deferred the agent also carries the meta-tools and the server index
(`meta_tool_tokens + server_index_tokens` of its budget). When preloading every tool still deferred
costs less than keeping them deferred plus that overhead, all of them are preloaded.

Discovery steps a session saves follow the same shape: preloaded u * d_pre, deferred u * d_def
(d_def = 2 when never measured). Agents with fewer than `min_sessions` sessions get no advice.

## The config change

Decisions become `[[mcp_servers]]` entries of the quiver config (`preload_tools`; `deferTools = "auto"`
or `preload = false` when a server that preloads everything must defer some tools), plus
`deferred-tool-loading: true` in an agent file whose explicitly named tool should be deferred (naming
a tool preloads it, DESIGN §3 rule 4). Tools whose load the config cannot change (tool search
inactive: rule 0; a server defined in the agent's own `mcp-servers`) keep their load. The advice's
figures are computed on the loads the changed config produces (`predict_loads`), so they are what
`quiver compile` will write once the patch is applied.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from quiver.advise.manifest import AgentManifest, AgentTool, Load, ServerLoading, loading_from_manifests, predict_loads
from quiver.stats import DISCOVERY_TOKENS, AgentStats, ToolStats, UsageStats

MIN_SESSIONS = 10
DEFAULT_STEPS = 2  # one search_tools + one describe_tool before a deferred tool's first use


@dataclass(frozen=True, slots=True)
class ToolModel:
    tool: str
    tokens: int
    share: float  # u
    wasted_loads: float  # w
    steps_deferred: float  # d_def, per first use
    discovery_tokens_deferred: float  # D_def, per first use
    steps_preloaded: float
    discovery_tokens_preloaded: float
    measured_deferred: bool  # D_def was measured, not assumed

    def cost(self, load: str) -> float:
        if load == "preloaded":
            return self.tokens + self.share * self.discovery_tokens_preloaded
        return self.share * (self.tokens + self.discovery_tokens_deferred) + self.wasted_loads * self.tokens

    def steps(self, load: str) -> float:
        return self.share * (self.steps_preloaded if load == "preloaded" else self.steps_deferred)


@dataclass(frozen=True, slots=True)
class ToolAdvice:
    tool: str
    model: ToolModel
    current: Load
    advised: Load
    fixed: str | None


@dataclass(frozen=True, slots=True)
class AgentAdvice:
    agent: str
    sessions: int
    measured_tokens_per_session: float
    measured_steps_per_session: float
    current_tokens: float  # modelled, per session
    advised_tokens: float
    current_steps: float
    advised_steps: float
    initial_tokens_before: int
    initial_tokens_after: int
    tools: tuple[ToolAdvice, ...]

    @property
    def token_change(self) -> float:
        """Expected change of tokens per session (negative: saved)."""
        return self.advised_tokens - self.current_tokens

    @property
    def steps_saved(self) -> float:
        return self.current_steps - self.advised_steps

    @property
    def preload(self) -> tuple[str, ...]:
        return tuple(t.tool for t in self.tools if t.advised == "preloaded")

    @property
    def defer(self) -> tuple[str, ...]:
        return tuple(t.tool for t in self.tools if t.advised == "deferred")

    @property
    def to_preload(self) -> tuple[str, ...]:
        return tuple(t.tool for t in self.tools if t.advised == "preloaded" != t.current)

    @property
    def to_defer(self) -> tuple[str, ...]:
        return tuple(t.tool for t in self.tools if t.advised == "deferred" != t.current)


@dataclass(frozen=True, slots=True)
class ServerEdit:
    server: str
    preload_tools: tuple[str, ...] | None = None  # the overlay's new list; None = unchanged
    preload: bool | None = None  # False to turn a server-wide preload off; None = unchanged
    defer_tools: str | None = None  # "auto" to turn `deferTools: "never"` off; None = unchanged


@dataclass(frozen=True, slots=True)
class ConfigChange:
    servers: tuple[ServerEdit, ...] = ()
    deferred_loading: tuple[tuple[str, str], ...] = ()  # (agent id, agent file) gaining `deferred-tool-loading`

    def __bool__(self) -> bool:
        return bool(self.servers or self.deferred_loading)


@dataclass(frozen=True, slots=True)
class AgentImpact:
    """An agent without enough usage whose loads the change also moves (servers are shared)."""

    agent: str
    to_preload: tuple[str, ...]
    to_defer: tuple[str, ...]
    initial_tokens_before: int
    initial_tokens_after: int


@dataclass(frozen=True, slots=True)
class Advice:
    agents: tuple[AgentAdvice, ...]
    change: ConfigChange
    affected: tuple[AgentImpact, ...] = ()
    notes: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------------- advice


def tool_model(tool: AgentTool, stats: ToolStats | None, sessions: int) -> ToolModel:
    if stats is None or sessions == 0:
        used = wasted = fud = fup = 0
        sd = td = sp = tp = 0
    else:
        used, wasted = stats.sessions_used, stats.sessions_loaded_unused
        fud, sd, td = stats.first_uses_deferred, stats.steps_deferred, stats.discovery_tokens_deferred
        fup, sp, tp = stats.first_uses_preloaded, stats.steps_preloaded, stats.discovery_tokens_preloaded
    n = sessions or 1
    return ToolModel(
        tool=tool.key,
        tokens=tool.tokens,
        share=used / n,
        wasted_loads=wasted / n,
        steps_deferred=sd / fud if fud else float(DEFAULT_STEPS),
        discovery_tokens_deferred=td / fud if fud else float(DISCOVERY_TOKENS["search"] + tool.tokens),
        steps_preloaded=sp / fup if fup else 0.0,
        discovery_tokens_preloaded=tp / fup if fup else 0.0,
        measured_deferred=bool(fud),
    )


def advise(
    usage: UsageStats,
    manifests: Sequence[AgentManifest],
    servers: Mapping[str, ServerLoading] | None = None,
    *,
    min_sessions: int = MIN_SESSIONS,
    only: Collection[str] | None = None,
) -> Advice:
    """Recommend each agent's preload set and the config change that produces it (see the module doc).

    `manifests` are all the project's agents: those without usage are not advised, but the change can
    still move their loads (`Advice.affected`). `only` restricts the advice to these agent ids.
    """
    settings = dict(servers) if servers is not None else loading_from_manifests(manifests)
    notes: list[str] = []
    advised: list[tuple[AgentManifest, AgentStats, dict[str, ToolModel]]] = []
    for m in sorted(manifests, key=lambda m: m.agent):
        a = usage.agent(m.agent)
        if a is None or (only is not None and m.agent not in only):
            continue
        if a.sessions < min_sessions:
            notes.append(f"`{m.agent}`: {a.sessions} recorded session(s), fewer than {min_sessions}: no advice")
            continue
        if predict_loads(m, settings, deferred_loading=m.deferred_tool_loading) != {t.key: t.load for t in m.tools}:
            notes.append(f"`{m.agent}`: its manifest does not match the config; run `quiver compile` and advise again")
        per_tool = usage.tools_of(m.agent)
        advised.append((m, a, {t.key: tool_model(t, per_tool.get(t.key), a.sessions) for t in m.tools}))
    known = {m.agent for m in manifests}
    notes += [f"`{a.agent}`: usage recorded but no compiled manifest" for a in usage.agents if a.agent not in known]

    desired = _desired(advised)
    change, new_settings = _realize(advised, desired, settings, notes)
    dtl = {agent for agent, _ in change.deferred_loading}
    out, affected = [], []
    for m in sorted(manifests, key=lambda m: m.agent):
        after = predict_loads(m, new_settings, deferred_loading=m.deferred_tool_loading or m.agent in dtl)
        entry = next((e for e in advised if e[0] is m), None)
        if entry is None:
            if any(after[t.key] != t.load for t in m.tools):
                affected.append(_impact(m, after))
            continue
        out.append(_agent_advice(m, entry[1], entry[2], after))
        missed = sorted(k for k, load in after.items() if k in desired and desired[k] != load)
        if missed:
            notes.append(f"`{m.agent}`: the config cannot express the advice for {', '.join(missed)}")
    return Advice(tuple(out), change, tuple(affected), tuple(notes))


def _desired(advised: Sequence[tuple[AgentManifest, AgentStats, dict[str, ToolModel]]]) -> dict[str, Load]:
    score: dict[str, float] = {}
    for m, a, models in advised:
        for t in m.tools:
            if t.fixed is None:
                model = models[t.key]
                score[t.key] = score.get(t.key, 0.0) + a.sessions * (model.cost("deferred") - model.cost("preloaded"))
    desired: dict[str, Load] = {k: "preloaded" if v > 0 else "deferred" for k, v in score.items()}
    changed = True
    while changed:  # the overhead check: only ever turns tools to preloaded, so it ends
        changed = False
        for m, _, models in advised:
            deferred = [t for t in m.tools if (t.load if t.fixed else desired[t.key]) == "deferred"]
            if not deferred or any(t.fixed for t in deferred):
                continue
            keep = sum(models[t.key].cost("deferred") for t in deferred) + m.overhead
            if sum(models[t.key].cost("preloaded") for t in deferred) < keep:
                desired.update({t.key: "preloaded" for t in deferred})
                changed = True
    return desired


def _realize(
    advised: Sequence[tuple[AgentManifest, AgentStats, dict[str, ToolModel]]],
    desired: Mapping[str, Load],
    settings: Mapping[str, ServerLoading],
    notes: list[str],
) -> tuple[ConfigChange, dict[str, ServerLoading]]:
    dtl = [
        (m.agent, m.source)
        for m, _, _ in advised
        if not m.deferred_tool_loading
        and any(t.named and not t.fixed and desired[t.key] == "deferred" for t in m.tools)
    ]
    new_settings = dict(settings)
    edits = []
    for server in sorted({t.server for m, _, _ in advised for t in m.tools if t.fixed is None}):
        s = settings.get(server) or ServerLoading(server)
        mine = {k.split("/", 1)[1]: load for k, load in desired.items() if k.split("/", 1)[0] == server}
        to_defer = {name for name, load in mine.items() if load == "deferred"}
        defer_tools = "auto" if to_defer and s.defer_tools == "never" else None
        preload = False if to_defer and s.preload is True else None
        current = s.preload_tools or s.base_preload_tools
        listed = tuple(sorted(current))
        if (defer_tools or s.defer_tools) != "never" and (s.preload if preload is None else preload) is not True:
            keep = {name for name in current if name not in to_defer}
            wanted = {n for n, load in mine.items() if load == "preloaded" and _needs_listing(advised, server, n, dtl)}
            listed = tuple(sorted(keep | wanted))
            if not listed and s.base_preload_tools and set(s.base_preload_tools) & to_defer:
                notes.append(
                    f"server `{server}`: its MCP config lists `preload_tools` {list(s.base_preload_tools)}; "
                    "an empty list in the quiver config cannot clear it: remove them there"
                )
        new_list = listed if set(listed) != set(current) else None
        if new_list is not None or preload is not None or defer_tools is not None:
            edits.append(ServerEdit(server, new_list, preload, defer_tools))
            new_settings[server] = ServerLoading(
                server,
                preload=s.preload if preload is None else preload,
                defer_tools=defer_tools or s.defer_tools,
                preload_tools=new_list if new_list is not None else s.preload_tools,
                base_preload_tools=s.base_preload_tools,
            )
    return ConfigChange(tuple(edits), tuple(sorted(dtl))), new_settings


def _needs_listing(
    advised: Sequence[tuple[AgentManifest, AgentStats, dict[str, ToolModel]]],
    server: str,
    name: str,
    dtl: Sequence[tuple[str, str]],
) -> bool:
    """Would some advised agent defer `server/name` without a `preload_tools` entry (it does not name it)?"""
    gaining = {agent for agent, _ in dtl}
    return any(
        t.server == server
        and t.name == name
        and t.fixed is None
        and not (t.named and not (m.deferred_tool_loading or m.agent in gaining))
        for m, _, _ in advised
        for t in m.tools
    )


def _modelled(m: AgentManifest, models: Mapping[str, ToolModel], loads: Mapping[str, str]) -> tuple[float, float]:
    tokens = sum(models[t.key].cost(loads[t.key]) for t in m.tools)
    overhead = m.overhead if any(loads[t.key] != "preloaded" for t in m.tools) else 0
    return tokens + overhead, sum(models[t.key].steps(loads[t.key]) for t in m.tools)


def _agent_advice(
    m: AgentManifest, a: AgentStats, models: Mapping[str, ToolModel], after: Mapping[str, Load]
) -> AgentAdvice:
    before = {t.key: t.load for t in m.tools}
    cur_tokens, cur_steps = _modelled(m, models, before)
    new_tokens, new_steps = _modelled(m, models, after)
    return AgentAdvice(
        agent=m.agent,
        sessions=a.sessions,
        measured_tokens_per_session=a.tokens_per_session,
        measured_steps_per_session=a.discovery_steps_per_session,
        current_tokens=cur_tokens,
        advised_tokens=new_tokens,
        current_steps=cur_steps,
        advised_steps=new_steps,
        initial_tokens_before=m.initial_tokens(before),
        initial_tokens_after=m.initial_tokens(after),
        tools=tuple(ToolAdvice(t.key, models[t.key], t.load, after[t.key], t.fixed) for t in m.tools),
    )


def _impact(m: AgentManifest, after: Mapping[str, Load]) -> AgentImpact:
    return AgentImpact(
        agent=m.agent,
        to_preload=tuple(t.key for t in m.tools if after[t.key] == "preloaded" != t.load),
        to_defer=tuple(t.key for t in m.tools if after[t.key] == "deferred" != t.load),
        initial_tokens_before=m.initial_tokens(),
        initial_tokens_after=m.initial_tokens(after),
    )
