"""Session figures from usage events: hand-built streams with exact figures, and a scripted workload."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from fixtures.usage.workload import MIX, REFUSED_TOOL, SessionPlan, TickClock, plan_workload, play
from quiver.commands import stats as stats_command
from quiver.commands.stats import StatsOptions
from quiver.errors import UsageError
from quiver.runtime.usage import UsageRecorder, read_usage, usage_path
from quiver.stats import FirstUse, SessionTool, parse_since, summarize

ROOT = Path(__file__).resolve().parents[1]
ASSISTANT = ROOT / "examples" / "serve" / "build" / "quiver" / "assistant.json"


def ev(event: str, ts: float, session: str = "s1", agent: str | None = "a", **fields: Any) -> dict[str, Any]:
    return {"v": 1, "event": event, "ts": ts, "session": session, "agent": agent, **fields}


def call(ts: float, tool: str, outcome: str, preloaded: bool, session: str = "s1") -> dict[str, Any]:
    server, name = tool.split("/")
    return ev("call", ts, session, server=server, tool=name, outcome=outcome, preloaded=preloaded)


def loaded(ts: float, tool: str, tokens: int, via: str = "search", session: str = "s1") -> dict[str, Any]:
    server, name = tool.split("/")
    return ev("tool_loaded", ts, session, server=server, tool=name, via=via, tokens=tokens)


EVENTS = [
    ev("session_started", 1000, initial_tokens=500, preloaded_tools=2),
    ev("discovery", 1001, kind="search", tokens=None),  # 200 by default
    loaded(1002, "x/t1", 80),
    loaded(1002, "x/t2", 120),
    ev("discovery", 1003, kind="describe", tokens=80),
    call(1004, "x/t1", "validation_failed", False),
    call(1005, "x/t1", "ok", False),
    call(1006, "x/p1", "ok", True),
    ev("discovery", 1007, kind="list_servers", tokens=None),  # 80 by default
    ev("discovery", 1008, kind="list_tools", tokens=150),
    call(1009, "x/p2", "error", True),
    call(1010, "y/zz", "refused", False),
    ev("discovery", 1011, kind="search", tokens=None),  # led to no new tool
    ev("session_ended", 1012),
    call(1013, "x/t1", "ok", False),  # after the end: not counted
    ev("session_started", 2000, "s2", initial_tokens=500, preloaded_tools=2),
    call(2001, "x/p1", "ok", True, "s2"),
    ev("discovery", 2003, "s2", kind="describe", tokens=120),
    loaded(2003, "x/t2", 120, "describe", "s2"),
    call(2004, "x/t2", "ok", False, "s2"),
    ev("session_started", 1500, "s1", agent="b", initial_tokens=50, preloaded_tools=0),
    ev("session_ended", 1600, "s1", agent="b"),
    call(3000, "x/p1", "ok", True, "ghost"),  # no recorded start
    {"v": 1, "event": "call", "ts": 3001},  # malformed
]


def test_a_hand_built_stream_gives_exact_session_figures() -> None:
    usage = summarize(EVENTS)
    assert [(s.agent, s.session) for s in usage.sessions] == [("a", "s1"), ("b", "s1"), ("a", "s2")]
    assert usage.ignored_events == 2
    s1, b1, s2 = usage.sessions
    assert (s1.initial_tokens, s1.loaded_tokens, s1.discovery_tokens, s1.tokens) == (500, 200, 710, 1410)
    assert s1.tokens_before_first_call == 500 + 200 + 200 + 80
    assert (s1.discovery_steps, s1.trailing_steps) == (5, 1)
    assert s1.first_uses == (
        FirstUse("x/t1", preloaded=False, steps=2, discovery_tokens=280, seconds=4.0),
        FirstUse("x/p1", preloaded=True, steps=0, discovery_tokens=0, seconds=6.0),
        FirstUse("x/p2", preloaded=True, steps=2, discovery_tokens=230, seconds=9.0),
    )
    assert (s1.calls, s1.errors, s1.validation_failures, s1.refusals) == (4, 1, 1, 1)
    assert s1.seconds_to_first_success == 5.0
    assert s1.ended == 1012
    assert (s1.preloaded_used, s1.deferred_used) == (("x/p1", "x/p2"), ("x/t1",))
    assert (s1.loaded_used, s1.loaded_unused) == (("x/t1",), ("x/t2",))
    assert s1.tools == (
        SessionTool("x/p1", calls=1),
        SessionTool("x/p2", calls=1, errors=1),
        SessionTool("x/t1", calls=2, validation_failures=1, loaded_tokens=80),
        SessionTool("x/t2", loaded_tokens=120),
        SessionTool("y/zz", refusals=1),
    )
    assert (s2.tokens, s2.tokens_before_first_call, s2.seconds_to_first_success, s2.ended) == (740, 500, 1.0, None)
    assert s2.first_uses[1] == FirstUse("x/t2", preloaded=False, steps=1, discovery_tokens=120, seconds=4.0)
    assert (b1.tokens, b1.calls, b1.seconds_to_first_success, b1.first_uses) == (50, 0, None, ())


def test_a_hand_built_stream_gives_exact_figures_per_agent() -> None:
    usage = summarize(EVENTS)
    a = usage.agent("a")
    assert a is not None
    assert (a.sessions, a.initial_tokens, a.tokens, a.tokens_before_first_call) == (2, 1000, 2150, 1480)
    assert (a.tokens_per_session, a.discovery_steps, a.discovery_steps_per_session, a.trailing_steps) == (
        1075.0,
        6,
        3.0,
        1,
    )
    assert (a.calls, a.errors, a.validation_failures, a.refusals) == (6, 1, 1, 1)
    assert (a.sessions_with_success, a.mean_seconds_to_first_success) == (2, 3.0)
    assert (a.preloaded_tools, a.preloaded_used, a.preloaded_used_share) == (4, 3, 0.75)
    assert (a.deferred_used, a.loaded_used, a.loaded_unused) == (2, 2, 1)
    b = usage.agent("b")
    assert b is not None
    assert (b.sessions, b.mean_seconds_to_first_success, b.preloaded_used_share) == (1, None, None)


def test_a_hand_built_stream_gives_exact_figures_per_tool() -> None:
    tools = summarize(EVENTS).tools_of("a")
    assert sorted(tools) == ["x/p1", "x/p2", "x/t1", "x/t2", "y/zz"]
    t1, t2, p1, p2, zz = tools["x/t1"], tools["x/t2"], tools["x/p1"], tools["x/p2"], tools["y/zz"]
    assert (t1.sessions, t1.sessions_used, t1.share, t1.calls, t1.validation_failures) == (2, 1, 0.5, 2, 1)
    assert (t1.first_uses_deferred, t1.steps_deferred, t1.discovery_tokens_deferred) == (1, 2, 280)
    assert (t1.sessions_loaded, t1.sessions_loaded_unused, t1.schema_tokens) == (1, 0, 80)
    assert (t2.sessions_used, t2.steps_deferred, t2.sessions_loaded, t2.sessions_loaded_unused) == (1, 1, 2, 1)
    assert (p1.sessions_used, p1.share, p1.first_uses_preloaded, p1.mean_steps_before_first_use) == (2, 1.0, 2, 0.0)
    assert (p2.errors, p2.steps_preloaded, p2.discovery_tokens_preloaded) == (1, 2, 230)
    assert (zz.sessions_used, zz.refusals, zz.mean_steps_before_first_use) == (0, 1, None)


def test_since_keeps_only_sessions_started_at_or_after_it() -> None:
    usage = summarize(EVENTS, since=1500)
    assert [(s.agent, s.session) for s in usage.sessions] == [("b", "s1"), ("a", "s2")]
    assert usage.agent("a") is not None and usage.agent("a").sessions == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", 1_000_000 - 7 * 86400),
        ("12h", 1_000_000 - 12 * 3600),
        ("30m", 1_000_000 - 1800),
        ("90s", 1_000_000 - 90),
        ("2w", 1_000_000 - 2 * 604800),
        ("1970-01-02", 86400),
        ("1970-01-01T01:00:00+01:00", 0),
    ],
)
def test_since_reads_durations_and_iso_dates(text: str, expected: float) -> None:
    assert parse_since(text, now=1_000_000) == expected


def test_since_that_is_neither_a_duration_nor_a_date_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--since `last tuesday`"):
        parse_since("last tuesday", now=0)


# ------------------------------------------------------------------------------------- the workload


def expected_figures(plans: list[SessionPlan], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What the workload must produce, worked out from its plan and the manifest alone."""
    tools = {f"{t['server']}/{t['name']}": t for t in manifest["tools"]}
    out: dict[str, Any] = {"tokens": 0, "steps": 0, "calls": 0, "invalid": 0, "errors": 0, "refused": 0}
    out |= {"used": {}, "unused_loads": {}, "preloaded_used": 0, "deferred_used": 0}
    for plan in plans:
        out["tokens"] += manifest["gateway_budget"]["initial_tokens"]
        loaded: set[str] = set()
        used: set[str] = set()
        for c in plan.calls:
            if c.tool not in tools:
                out["refused"] += 1
                continue
            deferred = tools[c.tool]["gateway"]["load"] == "deferred"
            if deferred and c.tool not in loaded:
                out["steps"] += 2
                out["tokens"] += 200 + tools[c.tool]["tokens"]  # a search answer, then the described schema
                for key in {c.tool, c.extra_load} - loaded:
                    if key in tools and tools[key]["gateway"]["load"] == "deferred":
                        loaded.add(key)
                        out["tokens"] += tools[key]["tokens"]
            out["calls"] += 1
            out["invalid"] += c.outcome == "validation_failed"
            out["errors"] += c.outcome == "error"
            if c.tool not in used:
                used.add(c.tool)
                out["used"][c.tool] = out["used"].get(c.tool, 0) + 1
                out["deferred_used" if deferred else "preloaded_used"] += 1
        for key in loaded - used:
            out["unused_loads"][key] = out["unused_loads"].get(key, 0) + 1
    return out


def test_a_scripted_workload_gives_the_figures_its_plan_implies(tmp_path: Path) -> None:
    manifest = json.loads(ASSISTANT.read_text(encoding="utf-8"))
    plans = plan_workload(200, seed=7)
    with UsageRecorder(usage_path(tmp_path, "assistant"), clock=TickClock()) as rec:
        play(rec, manifest, plans)
    usage = summarize(read_usage(tmp_path / ".quiver" / "usage").events)
    want = expected_figures(plans, manifest)
    a = usage.agent("assistant")
    assert a is not None
    assert (a.sessions, a.tokens, a.discovery_steps, a.trailing_steps) == (200, want["tokens"], want["steps"], 0)
    assert (a.calls, a.validation_failures, a.errors, a.refusals) == (
        want["calls"],
        want["invalid"],
        want["errors"],
        want["refused"],
    )
    assert (a.preloaded_used, a.deferred_used) == (want["preloaded_used"], want["deferred_used"])
    assert a.preloaded_tools == 200 * 3
    tools = usage.tools_of("assistant")
    assert {k: t.sessions_used for k, t in tools.items() if t.sessions_used} == want["used"]
    assert {k: t.sessions_loaded_unused for k, t in tools.items() if t.sessions_loaded_unused} == want["unused_loads"]
    assert tools[REFUSED_TOOL].refusals == want["refused"]
    # every discovery step led to the first use of a deferred tool (two steps each, or none when an earlier
    # search had already loaded it); preloaded tools were called without any
    assert sum(t.steps_deferred for t in tools.values()) == want["steps"]
    assert all(t.steps_deferred in range(0, 2 * t.first_uses_deferred + 1, 2) for t in tools.values())
    assert sum(t.steps_preloaded for t in tools.values()) == 0
    # the seeded plan itself, pinned: a skewed mix, most work on a few tools
    assert (a.calls, a.validation_failures, a.errors, a.refusals, a.tokens) == (894, 23, 10, 12, 268_315)
    assert [k for k, _ in sorted(want["used"].items(), key=lambda kv: -kv[1])][:3] == [
        "notes/search_notes",
        "notes/get_note",
        "notes/create_note",
    ]
    assert set(want["used"]) <= set(MIX)


def test_stats_command_reports_the_figures_as_json_and_text(tmp_path: Path) -> None:
    manifest = json.loads(ASSISTANT.read_text(encoding="utf-8"))
    clock = TickClock(start=1_750_000_000.0, step=60.0)
    with UsageRecorder(usage_path(tmp_path, "assistant"), clock=clock) as rec:
        play(rec, manifest, plan_workload(30, seed=3))
    out = stats_command.run(StatsOptions(tmp_path, None, "json"))
    data = json.loads(out.text)
    assert out.messages == ()
    assert data["sessions"] == 30
    assert [a["agent"] for a in data["agents"]] == ["assistant"]
    assert data["agents"][0]["sessions"] == 30
    assert {t["tool"] for t in data["tools"]} >= {"notes/search_notes", "notes/get_note"}
    text = stats_command.run(StatsOptions(tmp_path, None, "text")).text
    assert text.startswith("30 session(s) of 1 agent\n")
    assert "agent `assistant`: 30 session(s)" in text
    # --since after the last session started: nothing left
    later = stats_command.run(StatsOptions(tmp_path, "2030-01-01", "text"), now=clock.now)
    assert later.text == "no sessions recorded in .quiver/usage/ since 2030-01-01T00:00:00Z\n"
    recent = json.loads(stats_command.run(StatsOptions(tmp_path, "1h", "json"), now=clock.now).text)
    assert 0 < recent["sessions"] < 30
