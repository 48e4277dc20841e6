"""`quiver stats [--since]`: the recorded sessions' figures per agent and per tool, as text or JSON."""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import dataclass
from pathlib import Path

from quiver.commands.outcome import Outcome
from quiver.model import JSON
from quiver.sources.usage_log import USAGE_DIR, read_usage
from quiver.stats import AgentStats, ToolStats, UsageStats, parse_since, summarize

FORMATS = ("text", "json")


@dataclass(frozen=True, slots=True)
class StatsOptions:
    root: Path
    since: str | None = None  # only sessions started since: a duration ago (90s, 30m, 12h, 7d, 2w) or an ISO date
    fmt: str = "text"


def load_usage(root: Path, since: str | None, *, now: float | None = None) -> tuple[UsageStats, tuple[str, ...]]:
    """Every recorded session under `.quiver/usage/`, and a message per line that was skipped."""
    log = read_usage(root / USAGE_DIR)
    cutoff = parse_since(since, now=time.time() if now is None else now) if since else None
    usage = summarize(log.events, since=cutoff)
    messages = tuple(f"warning: skipped {line}" for line in log.skipped)
    if usage.ignored_events:
        messages += (f"warning: {usage.ignored_events} event(s) of sessions whose start was not recorded",)
    return usage, messages


def run(options: StatsOptions, *, now: float | None = None) -> Outcome:
    usage, messages = load_usage(options.root, options.since, now=now)
    if options.fmt == "json":
        return Outcome(json.dumps(stats_json(usage), indent=2, sort_keys=True) + "\n", messages)
    if not usage.sessions:
        where = f"{USAGE_DIR}/" + (f" since {_when(usage.since)}" if usage.since is not None else "")
        return Outcome(f"no sessions recorded in {where}\n", messages)
    return Outcome(stats_text(usage), messages)


def stats_text(usage: UsageStats) -> str:
    since = f" since {_when(usage.since)}" if usage.since is not None else ""
    agents = len(usage.agents)
    out = [f"{len(usage.sessions)} session(s) of {agents} agent{'s' if agents != 1 else ''}{since}", ""]
    for a in usage.agents:
        out += _agent_lines(a)
        out += _tool_table([t for t in usage.tools if t.agent == a.agent])
        out.append("")
    return "\n".join(out)


def _agent_lines(a: AgentStats) -> list[str]:
    n = a.sessions
    first = a.mean_seconds_to_first_success
    share = a.preloaded_used_share
    return [
        f"agent `{a.agent}`: {n} session(s)",
        f"  tokens per session          {a.tokens_per_session:,.1f} (initial {a.initial_tokens / n:,.1f}, "
        f"before the first call {a.tokens_before_first_call / n:,.1f})",
        f"  discovery steps per session {a.discovery_steps_per_session:.2f} ({a.trailing_steps} led to no new tool)",
        f"  calls                       {a.calls} ({a.validation_failures} failed validation, {a.errors} failed, "
        f"{a.refusals} refused)",
        "  first successful call       "
        + (f"after {first:.2f} s on average ({a.sessions_with_success} session(s))" if first is not None else "none"),
        "  preloaded tools used        "
        + (f"{share:.1%} ({a.preloaded_used} of {a.preloaded_tools} over all sessions)" if share is not None else "-"),
        f"  deferred tools              {a.deferred_used} used; loaded and used {a.loaded_used}, "
        f"loaded and never used {a.loaded_unused}",
    ]


def _tool_table(tools: list[ToolStats]) -> list[str]:
    head = ("tool", "sessions", "share", "calls", "invalid", "refused", "steps/1st use", "loaded unused")
    rows = []
    for t in sorted(tools, key=lambda t: (-t.sessions_used, t.tool)):
        steps = t.mean_steps_before_first_use
        rows.append(
            (
                t.tool,
                str(t.sessions_used),
                f"{t.share:.0%}",
                str(t.calls),
                str(t.validation_failures),
                str(t.refusals),
                f"{steps:.2f}" if steps is not None else "-",
                str(t.sessions_loaded_unused),
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]

    def line(cells: tuple[str, ...]) -> str:
        return "  " + "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(head), *(line(r) for r in rows)]


def stats_json(usage: UsageStats) -> dict[str, JSON]:
    return {
        "since": usage.since,
        "sessions": len(usage.sessions),
        "ignored_events": usage.ignored_events,
        "agents": [agent_json(a) for a in usage.agents],
        "tools": [tool_json(t) for t in usage.tools],
    }


def agent_json(a: AgentStats) -> dict[str, JSON]:
    return {
        "agent": a.agent,
        "sessions": a.sessions,
        "tokens_per_session": _round(a.tokens_per_session),
        "initial_tokens_per_session": _round(a.initial_tokens / a.sessions),
        "tokens_before_first_call_per_session": _round(a.tokens_before_first_call / a.sessions),
        "discovery_steps": a.discovery_steps,
        "discovery_steps_per_session": _round(a.discovery_steps_per_session),
        "trailing_steps": a.trailing_steps,
        "calls": a.calls,
        "errors": a.errors,
        "validation_failures": a.validation_failures,
        "refusals": a.refusals,
        "sessions_with_success": a.sessions_with_success,
        "mean_seconds_to_first_success": _round(a.mean_seconds_to_first_success),
        "preloaded_tools": a.preloaded_tools,
        "preloaded_used": a.preloaded_used,
        "preloaded_used_share": _round(a.preloaded_used_share),
        "deferred_used": a.deferred_used,
        "loaded_used": a.loaded_used,
        "loaded_unused": a.loaded_unused,
    }


def tool_json(t: ToolStats) -> dict[str, JSON]:
    return {
        "agent": t.agent,
        "tool": t.tool,
        "sessions_used": t.sessions_used,
        "share": _round(t.share),
        "calls": t.calls,
        "errors": t.errors,
        "validation_failures": t.validation_failures,
        "refusals": t.refusals,
        "mean_steps_before_first_use": _round(t.mean_steps_before_first_use),
        "first_uses_deferred": t.first_uses_deferred,
        "steps_deferred": t.steps_deferred,
        "first_uses_preloaded": t.first_uses_preloaded,
        "steps_preloaded": t.steps_preloaded,
        "sessions_loaded": t.sessions_loaded,
        "sessions_loaded_unused": t.sessions_loaded_unused,
    }


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def _when(ts: float | None) -> str:

    if ts is None:
        return "-"
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
