"""`quiver advise [--shadow LOG] [--patch FILE]`: preload advice from recorded sessions, and the config patch.

Reads the compiled manifests (`build/quiver/`), the project's server settings (MCP configs plus the quiver
config's `[[mcp_servers]]` overlays) and the recorded usage (`.quiver/usage/`), or with `--shadow` a
JSON-lines log of tool calls made without quiver (`{"session", "tool": "server/tool", "timestamp"}`,
optionally `"agent"`; the timestamp in seconds since the epoch or ISO 8601).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quiver.advise import (
    MIN_SESSIONS,
    Advice,
    AgentAdvice,
    AgentManifest,
    ServerLoading,
    ShadowCall,
    ShadowReport,
    advise,
    loading_from_manifests,
    manifest_view,
    render_patch,
    shadow_events,
    shadow_report,
)
from quiver.commands.outcome import Outcome
from quiver.commands.stats import load_usage
from quiver.config import load_config
from quiver.errors import QuiverError, UsageError
from quiver.model import JSON
from quiver.project import load_project, merge_servers
from quiver.report._repo import repository_prefix
from quiver.sources.files import write_output
from quiver.sources.manifest import read_manifests
from quiver.sources.shadow_log import read_shadow_log
from quiver.stats import summarize
from quiver.suggest import did_you_mean

FORMATS = ("text", "json")


def load_manifests(root: Path) -> list[dict[str, Any]]:
    """The compiled manifests of the project (`out` of the config, default build/quiver/), by agent id."""
    return read_manifests(root, load_config(root).out)


def server_settings(root: Path, manifests: Sequence[AgentManifest]) -> tuple[dict[str, ServerLoading], list[str]]:
    """Project servers' loading settings; from the manifests' reasons when the project cannot be read."""

    try:
        project = load_project(root)
    except QuiverError as exc:
        note = f"warning: reading server settings from the manifests: {exc.one_line()}"
        return loading_from_manifests(manifests), [note]
    base = merge_servers(project.configs)
    return {
        name: ServerLoading(
            name,
            preload=s.preload,
            defer_tools=s.defer_tools,
            preload_tools=s.preload_tools,
            base_preload_tools=base[name].preload_tools if name in base else (),
        )
        for name, s in project.servers.items()
    }, []


def _shadow_agent(
    calls: Sequence[tuple[ShadowCall, str | None]], views: Sequence[AgentManifest], agent: str | None
) -> str:
    named = {a for _, a in calls if a is not None}
    ids = [m.agent for m in views]
    if agent is None and len(named) == 1:
        agent = next(iter(named))
    if agent is None:  # the agent whose tool set holds the most of the logged tools, if only one does
        tools = {c.tool for c, _ in calls}
        held = {m.agent: len(tools & {t.key for t in m.tools}) for m in views}
        best = max(held.values(), default=0)
        fits = sorted(a for a, n in held.items() if n == best and n > 0)
        if len(fits) != 1:
            which = f"agents {', '.join(fits)} hold as many of them" if fits else "no agent holds any logged tool"
            raise UsageError(f"which agent made these calls? {which}", hint="pass --agent ID")
        agent = fits[0]
    if agent not in ids:
        raise UsageError(
            f"no compiled manifest for agent `{agent}`", hint=did_you_mean(agent, ids, "run quiver compile")
        )
    return agent


@dataclass(frozen=True, slots=True)
class AdviseOptions:
    root: Path
    shadow: Path | None = None  # advise from this JSON-lines log of calls made without quiver
    fmt: str = "text"
    patch_out: Path | None = None  # write the config change to this file as a patch
    agent: str | None = None
    since: str | None = None  # only sessions started since
    min_sessions: int = MIN_SESSIONS  # fewer: no advice


def run(options: AdviseOptions) -> Outcome:
    root, shadow, agent = options.root, options.shadow, options.agent
    since, min_sessions = options.since, options.min_sessions
    views = [manifest_view(m) for m in load_manifests(root)]
    settings, messages = server_settings(root, views)
    report: ShadowReport | None = None
    if shadow is not None:
        logged = read_shadow_log(shadow)
        who = _shadow_agent(logged, views, agent)
        manifest = next(m for m in views if m.agent == who)
        calls = [c for c, a in logged if a in (None, who)]
        usage = summarize(shadow_events(calls, manifest))
        advice = advise(usage, views, settings, min_sessions=min_sessions, only=[who])
        report = shadow_report(calls, manifest, usage, next(iter(advice.agents), None))
    else:
        usage, more = load_usage(root, since)
        messages += more
        if not usage.sessions:
            raise UsageError(
                "no recorded sessions in `.quiver/usage/`" + (f" since {since}" if since else ""),
                hint="serve agents with `quiver serve` to record them, or pass --shadow LOG",
            )
        ids = [m.agent for m in views]
        if agent is not None and agent not in ids:
            raise UsageError(f"no compiled manifest for agent `{agent}`", hint=did_you_mean(agent, ids, ""))
        unused = [name for name in ids if usage.agent(name) is None and agent in (None, name)]
        if unused:
            messages.append(f"note: no recorded sessions of {', '.join(f'`{name}`' for name in unused)}")
        advice = advise(usage, views, settings, min_sessions=min_sessions, only=None if agent is None else [agent])
    patch = patch_for(root, advice)
    patch_out = options.patch_out
    if patch_out is not None and patch:
        write_output(patch_out, patch, root=root)
        messages.append(f"wrote the config change to {patch_out}: apply it with `{apply_command(root, patch_out)}`")
    if options.fmt == "json":
        return Outcome(json.dumps(advice_json(advice, patch, report), indent=2, sort_keys=True) + "\n", tuple(messages))
    return Outcome(advice_text(advice, report, patch, patch_out), tuple(messages))


def apply_command(root: Path, patch: Path) -> str:
    """The command that applies `patch` from the working directory; the patch's paths are relative to `root`.

    In a git work tree `git apply` reads a patch's paths from the top of the tree and skips every path
    outside the directory it runs in ("Skipped patch"), so a project below the top is applied from the top
    with `--directory=PREFIX`; outside git, `git apply` works like `patch -p1` in the directory it runs in."""

    here = Path.cwd().resolve()
    project = root.resolve()
    prefix = repository_prefix(project).rstrip("/")
    base = Path(*project.parts[: len(project.parts) - len(prefix.split("/"))]) if prefix else project
    directory = f" --directory={shlex.quote(prefix)}" if prefix else ""
    if base == here:
        return f"git apply{directory} {shlex.quote(str(patch))}"
    where = shlex.quote(os.path.relpath(base, here))
    return f"git -C {where} apply{directory} {shlex.quote(str(patch.resolve()))}"


def patch_for(root: Path, advice: Advice) -> str:
    if not advice.change:
        return ""
    config_file = load_config(root).path or "quiver.toml"
    config_path = root / config_file
    config_text = _read_exact(config_path) if config_path.is_file() else None
    agents = {source: _read_exact(root / source) for _, source in advice.change.deferred_loading}
    return render_patch(advice.change, config_file=config_file, config_text=config_text, agent_texts=agents)


def _read_exact(path: Path) -> str:
    """Text with its line endings and BOM as they are: the patch's context lines must match the bytes."""
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


# ------------------------------------------------------------------------------------------ reports


def advice_text(advice: Advice, shadow: ShadowReport | None, patch: str, patch_out: Path | None) -> str:
    out: list[str] = []
    if shadow is not None:
        out += _shadow_lines(shadow)
    for a in advice.agents:
        out += _agent_lines(a)
    for impact in advice.affected:
        moved = [f"+{t}" for t in impact.to_preload] + [f"-{t}" for t in impact.to_defer]
        out.append(
            f"also changes `{impact.agent}` (no usage advice): {' '.join(moved)}; tokens up front "
            f"{impact.initial_tokens_before:,} -> {impact.initial_tokens_after:,}"
        )
    if not advice.change:
        out.append("config change: none (the current preloads are the advised ones)")
    else:
        out.append("config change:")
        for edit in advice.change.servers:
            parts = [f"deferTools = {edit.defer_tools!r}"] if edit.defer_tools else []
            parts += ["preload = false"] if edit.preload is False else []
            parts += [f"preload_tools = {list(edit.preload_tools)}"] if edit.preload_tools is not None else []
            out.append(f"  [[mcp_servers]] `{edit.server}`: {', '.join(parts)}")
        for agent_id, source in advice.change.deferred_loading:
            out.append(f"  {source}: deferred-tool-loading: true (agent `{agent_id}` names a tool to defer)")
        if patch_out is None:
            out += ["", patch.rstrip("\n")]
    out += [f"note: {n}" for n in advice.notes]
    return "\n".join(out) + "\n"


def _shadow_lines(r: ShadowReport) -> list[str]:
    lines = [
        f"shadow log: {r.sessions} session(s), {r.calls} call(s) of `{r.agent}` made without quiver",
        f"  every tool preloaded:        {r.baseline_tokens:,.1f} tokens per session, no discovery",
        f"  with tool search as set now: {r.tool_search_tokens:,.1f} tokens per session "
        f"({_versus(r.baseline_tokens - r.tool_search_tokens)}), {r.tool_search_steps:.2f} discovery steps",
    ]
    if r.advised_tokens is not None and r.advised_steps is not None:
        lines.append(
            f"  with the advised preloads:   {r.advised_tokens:,.1f} tokens per session "
            f"({_versus(r.baseline_tokens - r.advised_tokens)}), {r.advised_steps:.2f} discovery steps"
        )
    if r.unknown_tools:
        lines.append(f"  not in the agent's tool set (refused by the gateway): {', '.join(r.unknown_tools)}")
    return [*lines, ""]


def _names(tools: Sequence[str], limit: int = 12) -> str:
    if len(tools) <= limit:
        return ", ".join(tools) or "-"
    return f"{len(tools)} tools ({', '.join(tools[:limit])}, ...; all of them in --format json)"


def _versus(saved: float) -> str:
    return f"{saved:,.1f} saved" if saved >= 0 else f"{-saved:,.1f} more than preloading everything"


def _agent_lines(a: AgentAdvice) -> list[str]:
    change = a.token_change
    lines = [
        f"agent `{a.agent}` ({a.sessions} sessions)",
        f"  tokens per session:          {a.current_tokens:,.1f} -> {a.advised_tokens:,.1f} expected "
        f"({'+' if change > 0 else ''}{change:,.1f}; measured now {a.measured_tokens_per_session:,.1f})",
        f"  discovery steps per session: {a.current_steps:.2f} -> {a.advised_steps:.2f} ({a.steps_saved:.2f} saved)",
        f"  tokens up front:             {a.initial_tokens_before:,} -> {a.initial_tokens_after:,}",
        f"  preload: {_names(a.preload)}",
        f"  defer:   {_names(a.defer)}",
    ]
    moves = [f"+{t}" for t in a.to_preload] + [f"-{t}" for t in a.to_defer]
    lines.append(f"  changes: {' '.join(moves) or 'none'}")
    head = ("tool", "tokens", "used", "wasted", "steps", "cost preloaded", "cost deferred", "now", "advised")
    rows = [
        (
            t.tool,
            str(t.model.tokens),
            f"{t.model.share:.0%}",
            f"{t.model.wasted_loads:.0%}",
            f"{t.model.steps_deferred:.1f}" + ("" if t.model.measured_deferred else "*"),
            f"{t.model.cost('preloaded'):.1f}",
            f"{t.model.cost('deferred'):.1f}",
            t.current,
            t.advised + (" (fixed)" if t.fixed else ""),
        )
        for t in sorted(a.tools, key=lambda t: (-t.model.share, t.tool))
        if t.model.share or t.model.wasted_loads or t.advised != t.current
    ]
    quiet = len(a.tools) - len(rows)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

    def line(cells: tuple[str, ...]) -> str:
        just = [
            c.ljust(w) if i in (0, 7, 8) else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return ("    " + "  ".join(just)).rstrip()

    lines += [line(head), *(line(r) for r in rows)]
    if quiet:
        lines.append(f"    ... and {quiet} tool(s) never called nor loaded, whose load does not change")
    lines.append("    (* steps when deferred not measured: 1 search + 1 describe assumed)")
    return [*lines, ""]


def advice_json(advice: Advice, patch: str, shadow: ShadowReport | None) -> dict[str, JSON]:
    agents: list[JSON] = [
        {
            "agent": a.agent,
            "sessions": a.sessions,
            "measured_tokens_per_session": _r(a.measured_tokens_per_session),
            "measured_steps_per_session": _r(a.measured_steps_per_session),
            "expected_tokens_per_session": {"current": _r(a.current_tokens), "advised": _r(a.advised_tokens)},
            "token_change_per_session": _r(a.token_change),
            "expected_steps_per_session": {"current": _r(a.current_steps), "advised": _r(a.advised_steps)},
            "steps_saved_per_session": _r(a.steps_saved),
            "initial_tokens": {"current": a.initial_tokens_before, "advised": a.initial_tokens_after},
            "preload": list(a.preload),
            "defer": list(a.defer),
            "to_preload": list(a.to_preload),
            "to_defer": list(a.to_defer),
            "tools": [
                {
                    "tool": t.tool,
                    "tokens": t.model.tokens,
                    "share": _r(t.model.share),
                    "wasted_loads": _r(t.model.wasted_loads),
                    "steps_deferred": _r(t.model.steps_deferred),
                    "discovery_tokens_deferred": _r(t.model.discovery_tokens_deferred),
                    "measured_deferred": t.model.measured_deferred,
                    "cost_preloaded": _r(t.model.cost("preloaded")),
                    "cost_deferred": _r(t.model.cost("deferred")),
                    "current": t.current,
                    "advised": t.advised,
                    "fixed": t.fixed,
                }
                for t in a.tools
            ],
        }
        for a in advice.agents
    ]
    change: dict[str, JSON] = {
        "servers": [
            {
                "server": e.server,
                "preload_tools": list(e.preload_tools) if e.preload_tools is not None else None,
                "preload": e.preload,
                "deferTools": e.defer_tools,
            }
            for e in advice.change.servers
        ],
        "deferred_tool_loading": [{"agent": a, "file": f} for a, f in advice.change.deferred_loading],
    }
    out: dict[str, JSON] = {
        "agents": agents,
        "config_change": change,
        "patch": patch,
        "affected": [
            {
                "agent": i.agent,
                "to_preload": list(i.to_preload),
                "to_defer": list(i.to_defer),
                "initial_tokens": {"current": i.initial_tokens_before, "advised": i.initial_tokens_after},
            }
            for i in advice.affected
        ],
        "notes": list(advice.notes),
        "shadow": None,
    }
    if shadow is not None:
        out["shadow"] = {
            "agent": shadow.agent,
            "sessions": shadow.sessions,
            "calls": shadow.calls,
            "unknown_tools": list(shadow.unknown_tools),
            "baseline_tokens_per_session": _r(shadow.baseline_tokens),
            "tool_search_tokens_per_session": _r(shadow.tool_search_tokens),
            "tool_search_saved_tokens_per_session": _r(shadow.saved_tokens),
            "tool_search_steps_per_session": _r(shadow.tool_search_steps),
            "advised_tokens_per_session": _r(shadow.advised_tokens),
            "advised_steps_per_session": _r(shadow.advised_steps),
        }
    return out


def _r(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None
