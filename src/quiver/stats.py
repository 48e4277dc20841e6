"""Session figures from usage events (`quiver stats`): what a preload policy cost and how the model fared.

Pure: events in (the dicts `runtime/usage.py` writes), frozen dataclasses out; no clock, no I/O.

Per session (`SessionStats`):
- `initial_tokens`: what the model read before any call (tools/list + instructions), as recorded;
  `tokens_before_first_call` adds the schemas loaded and the discovery responses read before the
  session's first tool call; `tokens` is the session's whole tool-definition cost: initial tokens +
  loaded schemas + discovery responses.
- discovery steps (search_tools, list_servers, list_tools, describe_tool) are attributed to the next
  *first call of a tool* in the session: each `FirstUse` carries the steps (and response tokens) made
  since the previous first use, or since the start. Steps after the last first use led to no new tool
  and are `trailing_steps`.
- calls: refused calls (tools outside the agent's set) count only as `refusals`; every other call is a
  use of its tool (`validation_failed` too: the model found the tool and tried it).
- `seconds_to_first_success`: from the session start to the first call with outcome `ok`.
- preloaded tools used; deferred tools used; deferred tools loaded (by search or describe) and then
  used, or never used.

A discovery event without a recorded response size counts `DISCOVERY_TOKENS[kind]`, measured on the
example projects with the o200k tokenizer: a search_tools answer of 5 one-line results is 170-220
tokens, list_servers 50-80, list_tools 25 per listed tool (130-2,200), describe_tool the tool's schema
(mean 228 over the demo catalog's 211 tools; the gateway passes the described tool's real size).

Aggregates: per agent (`AgentStats`) and per (agent, tool) (`ToolStats`): sessions, share of sessions using
the tool, calls, and discovery before first use split by whether the tool was preloaded then. The records, per
session and aggregated, are the dataclasses of `quiver.usage_totals`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quiver.since import parse_since
from quiver.usage_totals import AgentStats, FirstUse, SessionStats, SessionTool, ToolStats, agent_totals, tool_totals

__all__ = [
    "DISCOVERY_TOKENS",
    "AgentStats",
    "FirstUse",
    "SessionStats",
    "SessionTool",
    "ToolStats",
    "UsageStats",
    "parse_since",
    "summarize",
]

DISCOVERY_TOKENS: Mapping[str, int] = {"search": 200, "list_servers": 80, "list_tools": 400, "describe": 230}


@dataclass(frozen=True, slots=True)
class UsageStats:
    sessions: tuple[SessionStats, ...]
    agents: tuple[AgentStats, ...]
    tools: tuple[ToolStats, ...]
    ignored_events: int = 0  # malformed, or of a session whose start was not recorded
    since: float | None = None

    def agent(self, agent_id: str) -> AgentStats | None:
        return next((a for a in self.agents if a.agent == agent_id), None)

    def tools_of(self, agent_id: str) -> dict[str, ToolStats]:
        return {t.tool: t for t in self.tools if t.agent == agent_id}


def summarize(events: Iterable[Mapping[str, Any]], *, since: float | None = None) -> UsageStats:
    """Sessions (in order of their start), then aggregates per agent and per tool."""
    builders: dict[tuple[str, str], _Session] = {}
    ignored = 0
    for event in events:
        try:
            kind = str(event["event"])
            key = (str(event["agent"]), str(event["session"]))
            ts = float(event["ts"])
            if kind == "session_started":
                builders[key] = _Session(key[0], key[1], ts, int(event["initial_tokens"]))
                builders[key].preloaded_tools = int(event.get("preloaded_tools") or 0)
                continue
            builder = builders.get(key)
            if builder is None or event["agent"] is None:
                ignored += 1
                continue
            builder.apply(kind, ts, event)
        except (KeyError, TypeError, ValueError):
            ignored += 1
    sessions = tuple(
        b.build() for b in sorted(builders.values(), key=lambda b: b.started) if since is None or b.started >= since
    )
    return UsageStats(sessions, agent_totals(sessions), tool_totals(sessions), ignored, since)


@dataclass(slots=True)
class _Session:
    agent: str
    session: str
    started: float
    initial_tokens: int
    preloaded_tools: int = 0
    ended: float | None = None
    loaded: dict[str, int] = field(default_factory=dict)  # tool -> schema tokens, in load order
    used: dict[str, bool] = field(default_factory=dict)  # tool -> preloaded at first use
    first_uses: list[FirstUse] = field(default_factory=list)
    pending_steps: int = 0
    pending_tokens: int = 0
    loaded_tokens: int = 0
    discovery_tokens: int = 0
    discovery_steps: int = 0
    before_first_call: int | None = None
    calls: int = 0
    errors: int = 0
    validation_failures: int = 0
    refusals: int = 0
    per_tool: dict[str, list[int]] = field(default_factory=dict)  # tool -> [calls, errors, invalid, refused]
    first_success: float | None = None

    def apply(self, kind: str, ts: float, event: Mapping[str, Any]) -> None:
        if self.ended is not None:
            return
        if kind == "discovery":
            tokens = event.get("tokens")
            cost = int(tokens) if tokens is not None else DISCOVERY_TOKENS[str(event["kind"])]
            self.discovery_steps += 1
            self.discovery_tokens += cost
            self.pending_steps += 1
            self.pending_tokens += cost
        elif kind == "tool_loaded":
            tool = f"{event['server']}/{event['tool']}"
            if tool not in self.loaded:
                self.loaded[tool] = int(event["tokens"])
                self.loaded_tokens += self.loaded[tool]
        elif kind == "call":
            self._call(ts, f"{event['server']}/{event['tool']}", str(event["outcome"]), bool(event["preloaded"]))
        elif kind == "session_ended":
            self.ended = ts
        else:
            raise ValueError(f"unknown usage event `{kind}`")

    def _call(self, ts: float, tool: str, outcome: str, preloaded: bool) -> None:
        if self.before_first_call is None:
            self.before_first_call = self.initial_tokens + self.loaded_tokens + self.discovery_tokens
        counts = self.per_tool.setdefault(tool, [0, 0, 0, 0])
        if outcome == "refused":
            self.refusals += 1
            counts[3] += 1
            return
        if outcome not in ("ok", "error", "validation_failed"):
            raise ValueError(f"unknown call outcome `{outcome}`")
        self.calls += 1
        counts[0] += 1
        if outcome == "error":
            self.errors += 1
            counts[1] += 1
        elif outcome == "validation_failed":
            self.validation_failures += 1
            counts[2] += 1
        if outcome == "ok" and self.first_success is None:
            self.first_success = ts - self.started
        if tool not in self.used:
            self.used[tool] = preloaded
            self.first_uses.append(
                FirstUse(tool, preloaded, self.pending_steps, self.pending_tokens, ts - self.started)
            )
            self.pending_steps = self.pending_tokens = 0

    def build(self) -> SessionStats:
        used = self.used
        return SessionStats(
            agent=self.agent,
            session=self.session,
            started=self.started,
            ended=self.ended,
            initial_tokens=self.initial_tokens,
            preloaded_tools=self.preloaded_tools,
            tokens_before_first_call=(
                self.before_first_call
                if self.before_first_call is not None
                else self.initial_tokens + self.loaded_tokens + self.discovery_tokens
            ),
            loaded_tokens=self.loaded_tokens,
            discovery_tokens=self.discovery_tokens,
            discovery_steps=self.discovery_steps,
            trailing_steps=self.pending_steps,
            first_uses=tuple(self.first_uses),
            calls=self.calls,
            errors=self.errors,
            validation_failures=self.validation_failures,
            refusals=self.refusals,
            seconds_to_first_success=self.first_success,
            preloaded_used=tuple(sorted(t for t, pre in used.items() if pre)),
            deferred_used=tuple(sorted(t for t, pre in used.items() if not pre)),
            loaded_used=tuple(sorted(t for t in self.loaded if t in used)),
            loaded_unused=tuple(sorted(t for t in self.loaded if t not in used)),
            tools=tuple(self._tool(tool) for tool in sorted({*self.per_tool, *self.loaded})),
        )

    def _tool(self, tool: str) -> SessionTool:
        calls, errors, invalid, refused = self.per_tool.get(tool, [0, 0, 0, 0])
        return SessionTool(tool, calls, errors, invalid, refused, self.loaded.get(tool))
