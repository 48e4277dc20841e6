"""Preload advice (`quiver advise`): which tools each agent should carry up front, from measured use.

Pure: recorded usage (`stats.UsageStats`) and compiled manifests in, frozen dataclasses and patch text
out. The command reads the files and writes the patch.

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

import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from quiver.stats import DISCOVERY_TOKENS, AgentStats, ToolStats, UsageStats

__all__ = [
    "MIN_SESSIONS",
    "Advice",
    "AgentAdvice",
    "AgentManifest",
    "ConfigChange",
    "ServerLoading",
    "ShadowCall",
    "ShadowReport",
    "advise",
    "loading_from_manifests",
    "manifest_view",
    "predict_loads",
    "render_patch",
    "shadow_events",
    "shadow_report",
]

MIN_SESSIONS = 10
DEFAULT_STEPS = 2  # one search_tools + one describe_tool before a deferred tool's first use

Load = Literal["preloaded", "deferred"]


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


# ------------------------------------------------------------------------------------------ manifests


def manifest_view(data: Mapping[str, Any]) -> AgentManifest:
    """The parts of a compiled manifest (`build/quiver/<agent>.json`) that advice reads."""
    agent = data["agent"]
    source = str(agent.get("source") or "")
    inline = {str(s["name"]) for s in data.get("servers", []) if str(s.get("source") or "").split(":")[0] == source}
    budget = data.get("budget") or {}
    tools = []
    for t in data["tools"]:
        reason = t.get("reason") or {}
        rule = int(reason.get("rule") or 0)
        fixed = None
        if rule == 0:
            fixed = "tool search is inactive for this agent"
        elif str(t["server"]) in inline:
            fixed = f"server `{t['server']}` is defined in the agent's own `mcp-servers`"
        load: Load = "preloaded" if t.get("load") == "preloaded" else "deferred"
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
    """The load `quiver compile` gives each tool under these server settings (DESIGN §3 rules 2-5)."""
    out: dict[str, Load] = {}
    for t in manifest.tools:
        if t.fixed is not None:
            flips = t.reason == "named" and deferred_loading and not manifest.deferred_tool_loading
            out[t.key] = "deferred" if flips else t.load
            continue
        s = servers.get(t.server) or ServerLoading(t.server)
        listed = s.preload_tools or s.base_preload_tools
        pre = s.defer_tools == "never" or s.preload is True or t.name in listed or (t.named and not deferred_loading)
        out[t.key] = "preloaded" if pre else "deferred"
    return out


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


# -------------------------------------------------------------------------------------------- patch

_HEADER = re.compile(r"^\s*\[\[\s*(tool\.quiver\.)?mcp_servers\s*\]\]\s*(#.*)?$")
_NAME = re.compile(r"""^\s*name\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_KEY = re.compile(r"^(\s*)([A-Za-z0-9_-]+)\s*=")


def render_patch(
    change: ConfigChange,
    *,
    config_file: str,
    config_text: str | None,
    agent_texts: Mapping[str, str],
) -> str:
    """The change as a unified diff (`git apply` / `patch -p1`) against the config and agent files.

    `config_file` is the quiver config's path relative to the root (`quiver.toml` when there is none
    yet, `config_text` None); `agent_texts` maps each agent file named in the change to its text.
    """
    parts = []
    if change.servers:
        new = _edit_toml(config_text or "", change.servers, tool_table=_tool_table(config_file, config_text))
        parts.append(_unified(config_file, config_text, new))
    for _, source in change.deferred_loading:
        parts.append(_unified(source, agent_texts[source], _edit_frontmatter(agent_texts[source])))
    return "".join(parts)


def _tool_table(config_file: str, text: str | None) -> bool:
    return config_file.endswith("pyproject.toml") or bool(text and re.search(r"(?m)^\s*\[tool\.quiver\]", text))


def _toml_value(value: bool | str | tuple[str, ...]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _toml_string(value)
    return "[" + ", ".join(_toml_string(v) for v in value) + "]"


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _edit_toml(text: str, edits: Sequence[ServerEdit], *, tool_table: bool) -> str:
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    appended: list[str] = []
    for edit in sorted(edits, key=lambda e: e.server):
        values: list[tuple[str, bool | str | tuple[str, ...]]] = []
        if edit.defer_tools is not None:
            values.append(("deferTools", edit.defer_tools))
        if edit.preload is not None:
            values.append(("preload", edit.preload))
        if edit.preload_tools is not None:
            values.append(("preload_tools", edit.preload_tools))
        if edit.server not in _blocks(lines):
            header = "[[tool.quiver.mcp_servers]]" if tool_table else "[[mcp_servers]]"
            entry = [header, f"name = {_toml_string(edit.server)}", *(f"{k} = {_toml_value(v)}" for k, v in values)]
            appended += [newline, *(line + newline for line in entry)]
            continue
        for key, value in values:
            start, end = _blocks(lines)[edit.server]
            line = f"{key} = {_toml_value(value)}{newline}"
            span = _key_span(lines, start, end, key)
            if span is not None:
                lines[span[0] : span[1]] = [span[2] + line]
                continue
            last = start
            for i in range(start + 1, end):
                if lines[i].strip() and not lines[i].lstrip().startswith("#"):
                    last = i
            if not lines[last].endswith(("\n", "\r")):
                lines[last] += newline
            lines.insert(last + 1, line)
    if appended:
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += newline
        lines += appended if lines else appended[1:]
    return "".join(lines)


def _key_span(lines: Sequence[str], start: int, end: int, key: str) -> tuple[int, int, str] | None:
    """Where `key = value` sits in an entry: (first line, past its last line, indentation)."""
    import tomllib

    for i in range(start + 1, end):
        match = _KEY.match(lines[i])
        if match and match.group(2) == key:
            stop = i + 1
            while stop < end:  # a multi-line array ends where the value parses
                try:
                    tomllib.loads("".join(lines[i:stop]))
                    break
                except tomllib.TOMLDecodeError:
                    stop += 1
            return i, stop, match.group(1)
    return None


def _blocks(lines: Sequence[str]) -> dict[str, tuple[int, int]]:
    """`[[mcp_servers]]` entries by server name: (header line index, index past the entry's last line)."""
    out: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(lines):
        if not _HEADER.match(lines[i]):
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].lstrip().startswith("["):
            end += 1
        name = next((m.group(1) or m.group(2) for line in lines[i + 1 : end] if (m := _NAME.match(line))), None)
        if name is not None:
            out.setdefault(name, (i, end))
        i = end
    return out


def _edit_frontmatter(text: str) -> str:
    """Set `deferred-tool-loading: true` in an agent file's YAML frontmatter."""
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
    if not lines or lines[0].lstrip("\ufeff").rstrip("\r\n") != "---" or close is None:
        return text
    for i in range(1, close):
        if re.match(r"^deferred-tool-loading\s*:", lines[i]):
            lines[i] = f"deferred-tool-loading: true{newline}"
            return "".join(lines)
    lines.insert(close, f"deferred-tool-loading: true{newline}")
    return "".join(lines)


def _unified(rel: str, old: str | None, new: str) -> str:
    a = (old or "").splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = f"diff --git a/{rel} b/{rel}\n" + ("new file mode 100644\n" if old is None else "")
    body = []
    for line in difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{rel}", f"b/{rel}"):
        body.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return head + "".join(body) if body else ""


# ------------------------------------------------------------------------------------------- shadow


@dataclass(frozen=True, slots=True)
class ShadowCall:
    """One line of a log of tool calls made without quiver."""

    session: str
    tool: str  # "server/tool"
    timestamp: float


@dataclass(frozen=True, slots=True)
class ShadowReport:
    """What tool search would have cost and saved on a log of calls made with every tool preloaded."""

    agent: str
    sessions: int
    calls: int
    unknown_tools: tuple[str, ...]  # called in the log, not in the agent's tool set
    baseline_tokens: float  # per session, every tool preloaded, no discovery
    tool_search_tokens: float  # per session under the manifest's loads, discovery simulated
    tool_search_steps: float
    advised_tokens: float | None  # per session under the advised loads
    advised_steps: float | None

    @property
    def saved_tokens(self) -> float:
        return self.baseline_tokens - self.tool_search_tokens


def shadow_events(calls: Iterable[ShadowCall], manifest: AgentManifest) -> list[dict[str, Any]]:
    """Usage events as the gateway would have recorded the logged calls under the manifest's loads.

    Every logged call is a success. Before the first call of a deferred tool the model makes one
    search_tools (a default-size answer, loading the tool) and one describe_tool (the schema's tokens).
    A tool outside the agent's set is a refused call.
    """
    tools = {t.key: t for t in manifest.tools}
    sessions: dict[str, list[ShadowCall]] = {}
    for call in calls:
        sessions.setdefault(call.session, []).append(call)
    ordered = sorted(sessions.items(), key=lambda item: (min(c.timestamp for c in item[1]), item[0]))
    events: list[dict[str, Any]] = []
    preloaded = sum(1 for t in manifest.tools if t.load == "preloaded")
    for session, mine in ordered:
        mine = sorted(mine, key=lambda c: c.timestamp)
        head = {"v": 1, "session": session, "agent": manifest.agent}
        initial = manifest.initial_tokens()
        events.append({**head, "event": "session_started", "ts": mine[0].timestamp, "initial_tokens": initial,
                       "preloaded_tools": preloaded})  # fmt: skip
        loaded: set[str] = set()
        for call in mine:
            server, _, name = call.tool.partition("/")
            at = {**head, "ts": call.timestamp, "server": server, "tool": name}
            tool = tools.get(call.tool)
            if tool is None:
                events.append({**at, "event": "call", "outcome": "refused", "preloaded": False})
                continue
            if tool.load == "deferred" and call.tool not in loaded:
                loaded.add(call.tool)
                events.append({**head, "event": "discovery", "ts": call.timestamp, "kind": "search", "tokens": None})
                events.append({**at, "event": "tool_loaded", "via": "search", "tokens": tool.tokens})
                events.append({**head, "event": "discovery", "ts": call.timestamp, "kind": "describe",
                               "tokens": tool.tokens})  # fmt: skip
            events.append({**at, "event": "call", "outcome": "ok", "preloaded": tool.load == "preloaded"})
        events.append({**head, "event": "session_ended", "ts": mine[-1].timestamp})
    return events


def shadow_report(
    calls: Sequence[ShadowCall], manifest: AgentManifest, usage: UsageStats, advice: AgentAdvice | None
) -> ShadowReport:
    """`usage` is `stats.summarize(shadow_events(calls, manifest))`."""
    a = usage.agent(manifest.agent)
    n = a.sessions if a is not None else 0
    known = {t.key for t in manifest.tools}
    return ShadowReport(
        agent=manifest.agent,
        sessions=n,
        calls=len(calls),
        unknown_tools=tuple(sorted({c.tool for c in calls if c.tool not in known})),
        baseline_tokens=float(manifest.baseline_tokens),
        tool_search_tokens=a.tokens_per_session if a is not None else 0.0,
        tool_search_steps=a.discovery_steps_per_session if a is not None else 0.0,
        advised_tokens=advice.advised_tokens if advice is not None else None,
        advised_steps=advice.advised_steps if advice is not None else None,
    )
