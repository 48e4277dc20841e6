"""Shadow mode (`quiver advise --shadow`): a log of tool calls made without quiver, replayed as usage.

Pure: the logged calls and a manifest in, the usage events the gateway would have recorded (to summarise
with `stats.summarize`) and the report comparing every tool preloaded with tool search out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from quiver.advise.manifest import AgentManifest
from quiver.advise.model import AgentAdvice
from quiver.sources.shadow_log import ShadowCall as ShadowCall  # read by sources/, replayed here
from quiver.stats import UsageStats


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
