"""Tool-error classification (`transient_errors`), the attempt on record before the send, and reconcile's pin
and JSON-text reading: the pure parts, the executor with a scripted upstream, and `quiver compile`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_executor import READ, RECONCILE, WRITE, FakeClock, Upstream, call, clock, executor, ok, store

from quiver.errors import ConfigError
from quiver.policy import execution_policy
from quiver.policy_values import ReconcileSpec, check_patterns
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallRequest, UpstreamTimeout
from quiver.runtime.reconcile import reconcile_verdict
from quiver.runtime.transient import DEFAULT_TRANSIENT_ERRORS, transient_match

ROOT = Path(__file__).resolve().parents[2]
__all__ = ["clock", "store"]  # fixtures shared with test_executor


def tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


@pytest.mark.parametrize(
    "text",
    ["Request timed out", "upstream timeout after 30s", "connection reset by peer", "ECONNREFUSED 10.0.0.1:443",
     "HTTP 429", "Too Many Requests", "502 Bad Gateway", "503 service unavailable", "status 504",
     "Service temporarily unavailable", "please try again later"],
)  # fmt: skip
def test_the_default_patterns_make_these_tool_errors_transient(text: str) -> None:
    assert transient_match(tool_error(text), None) in DEFAULT_TRANSIENT_ERRORS


@pytest.mark.parametrize("text", ["insufficient funds", "no such account: 7", "order 1503 not found", "invalid id"])
def test_other_tool_errors_stay_final(text: str) -> None:
    assert transient_match(tool_error(text), None) is None


def test_only_error_results_are_classified_and_configured_patterns_replace_the_defaults() -> None:
    assert transient_match({"content": [{"type": "text", "text": "503"}], "isError": False}, None) is None
    assert transient_match(tool_error("rate limit hit"), ["(?i)rate limit"]) == "(?i)rate limit"
    assert transient_match(tool_error("503 service unavailable"), ["(?i)rate limit"]) is None
    assert transient_match(tool_error("503 service unavailable"), []) is None


def test_patterns_are_checked_as_regular_expressions() -> None:
    assert check_patterns(["a+", "(?i)b"]) == ("a+", "(?i)b")
    with pytest.raises(ValueError, match="not a regular expression"):
        check_patterns(["(unclosed"])
    with pytest.raises(ValueError, match="list of regular expressions"):
        check_patterns("503")


def test_the_config_refuses_a_bad_pattern_and_keeps_a_good_list() -> None:
    def policy(value: Any) -> dict[str, Any]:
        return execution_policy(server="s", tool="t", annotations={}, server_timeout_ms=None,
                                server_policy={"transient_errors": value}, tool_policy={})  # fmt: skip

    assert policy(["(?i)rate limit"])["transient_errors"] == ["(?i)rate limit"]
    with pytest.raises(ConfigError, match="`transient_errors` for `s/t`"):
        policy(["(bad"])


def test_reconcile_reads_json_text_when_there_is_no_structured_content() -> None:
    spec = ReconcileSpec.from_mapping({"tool": "get", "succeeded_when": "$.structuredContent.found", "equals": True})
    as_text = {"content": [{"type": "text", "text": json.dumps({"found": True})}], "isError": False}
    assert reconcile_verdict(spec, as_text) == "succeeded"
    no = {"content": [{"type": "text", "text": '{"found": false}'}], "isError": False}
    assert reconcile_verdict(spec, no) == "failed_final"
    assert reconcile_verdict(spec, {"content": [{"type": "text", "text": "found it"}], "isError": False}) is None
    structured = {**as_text, "structuredContent": {"found": False}}  # structuredContent wins
    assert reconcile_verdict(spec, structured) == "failed_final"


def test_an_empty_reconcile_pin_is_refused() -> None:
    with pytest.raises(ValueError, match="tool_sha256"):
        ReconcileSpec.from_mapping({**RECONCILE, "tool_sha256": ""})


# ---------------------------------------------------------------- the executor


@pytest.mark.anyio
async def test_a_transient_tool_error_on_a_read_is_retried_and_the_pattern_recorded(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(tool_error("503 service unavailable"))
    outcome = await executor(store, clock).execute(call("lookup", READ, item="a"), upstream)
    assert (outcome.state, outcome.attempts, len(upstream.calls)) == ("succeeded", 2, 2)
    events = await store.events(outcome.action_id or "")
    assert [e.to_state for e in events].count("failed_retryable") == 1
    assert any("`\\b(429|502|503|504)\\b` matched" in (e.detail or "") for e in events)
    first = (await store.attempts(outcome.action_id or ""))[0]
    assert (first.outcome, first.error_type) == ("tool_error", "TransientToolError")
    assert "503 service unavailable" in (first.error or "")


@pytest.mark.anyio
async def test_a_transient_tool_error_on_a_write_is_unknown_and_never_resent(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(tool_error("connection reset by peer"))
    outcome = await executor(store, clock).execute(call(policy=WRITE, amount=1), upstream)
    assert (outcome.state, len(upstream.calls)) == ("unknown_outcome", 1)
    action = await store.get(outcome.action_id or "")
    assert action.error_type == "TransientToolError" and "connection reset" in (action.error or "")


@pytest.mark.anyio
async def test_a_policy_pattern_list_decides_instead_of_the_defaults(store: SqliteLedger, clock: FakeClock) -> None:
    policy = {**READ, "transient_errors": ["(?i)quota"]}
    final = await executor(store, clock).execute(call("a", policy, x=1), Upstream(tool_error("503")))
    assert (final.state, final.attempts) == ("failed_final", 1)
    retried = await executor(store, clock).execute(call("b", policy, x=1), Upstream(tool_error("Quota exceeded")))
    assert (retried.state, retried.attempts) == ("succeeded", 2)


@pytest.mark.anyio
async def test_the_attempt_is_on_record_while_the_request_is_in_flight(store: SqliteLedger, clock: FakeClock) -> None:
    hold = anyio.Event()
    upstream = Upstream(hold=hold)
    async with anyio.create_task_group() as tg:
        tg.start_soon(executor(store, clock).execute, call(policy=WRITE, key="held", amount=1), upstream)
        with anyio.fail_after(5):
            while not upstream.calls:
                await anyio.sleep(0.001)
        action = await store.find_by_key("held")
        assert action is not None and (action.state, action.attempts) == ("dispatching", 1)
        assert [(a.number, a.outcome) for a in await store.attempts(action.id)] == [(1, "in_flight")]
        hold.set()
    assert [(a.number, a.outcome) for a in await store.attempts(action.id)] == [(1, "ok")]


@pytest.mark.anyio
async def test_a_reconcile_tool_without_a_pin_is_never_asked(store: SqliteLedger, clock: FakeClock) -> None:
    unpinned = {key: value for key, value in RECONCILE.items() if key != "tool_sha256"}
    probes: list[CallRequest] = []

    async def upstream(request: CallRequest, meta: Any, timeout_s: float) -> Any:
        probes.append(request)
        raise UpstreamTimeout("lost") if request.tool != RECONCILE["tool"] else AssertionError("asked without a pin")

    outcome = await executor(store, clock).execute(call(policy={**WRITE, "reconcile": unpinned}, amount=1), upstream)
    assert outcome.state == "unknown_outcome" and [p.tool for p in probes] == ["counter_increment"]


@pytest.mark.anyio
async def test_the_reconcile_probe_carries_the_pin(store: SqliteLedger, clock: FakeClock) -> None:
    seen: list[CallRequest] = []

    async def upstream(request: CallRequest, meta: Any, timeout_s: float) -> Any:
        seen.append(request)
        if request.tool == RECONCILE["tool"]:
            return ok() | {"structuredContent": {"applied": True}}
        raise UpstreamTimeout("lost")

    outcome = await executor(store, clock).execute(call(policy={**WRITE, "reconcile": RECONCILE}, amount=1), upstream)
    assert outcome.state == "succeeded"
    assert [(r.tool, r.tool_sha256) for r in seen][-1] == (RECONCILE["tool"], RECONCILE["tool_sha256"])


# ---------------------------------------------------------------- quiver compile


def _compile_serve_example(tmp_path: Path, reconcile_tool: str) -> subprocess.CompletedProcess[str]:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "serve", root, ignore=shutil.ignore_patterns("build", ".quiver"))
    with (root / "quiver.toml").open("a") as config:
        config.write(
            f'\n[tools."notes/create_note"]\nreconcile = {{tool = "{reconcile_tool}", arguments = {{query = '
            '"$.arguments.title"}, succeeded_when = "$.structuredContent.notes.0"}\n'
        )
    return subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-C", str(root), "--quiet"], capture_output=True, text=True
    )


def test_compile_pins_the_reconcile_tool_from_the_lock(tmp_path: Path) -> None:
    done = _compile_serve_example(tmp_path, "search_notes")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "project" / "build" / "quiver" / "assistant.json").read_text())
    pins = {t["name"]: t["sha256"] for t in manifest["tools"]}
    create = next(t for t in manifest["tools"] if t["name"] == "create_note")
    assert create["policy"]["reconcile"]["tool_sha256"] == pins["search_notes"]


def test_compile_refuses_a_reconcile_tool_the_locked_catalog_does_not_have(tmp_path: Path) -> None:
    done = _compile_serve_example(tmp_path, "find_note")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "reconcile tool `find_note`" in lines[0] and "locked catalog of `notes`" in lines[0]
    assert "quiver.toml" in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "project" / "build").exists()  # nothing half-written


@pytest.mark.anyio
async def test_sweeps_ask_an_unsettled_action_again_only_after_a_growing_wait(
    store: SqliteLedger, clock: FakeClock
) -> None:
    gateway = executor(store, clock)
    lost = Upstream(UpstreamTimeout("lost"))
    outcome = await gateway.execute(call(policy={**WRITE, "reconcile": RECONCILE}, amount=1), lost)
    assert outcome.state == "unknown_outcome"
    probes: list[float] = []

    async def unsure(request: CallRequest, meta: Any, timeout_s: float) -> Any:
        probes.append(clock.now)
        return tool_error("not sure yet")

    start = clock.now
    for _ in range(8):  # a sweep every 0.5 s for 4 s
        report = await gateway.recover(unsure, settle_negative=False)
        assert report.reconciled == ()
        clock.now += 0.5
    assert [round(at - start, 1) for at in probes] == [0.0, 1.0, 3.0]  # waits of 1 s, then 2 s (then 4 s)

    async def yes(request: CallRequest, meta: Any, timeout_s: float) -> Any:
        return ok() | {"structuredContent": {"applied": True}}

    clock.now += 10
    report = await gateway.recover(yes, settle_negative=False)
    assert [a.state for a in report.reconciled] == ["succeeded"]
