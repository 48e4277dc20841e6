"""LedgerExecutor in memory: idempotency, retries, unknown outcomes, approvals, reconcile, recovery.

The upstream is a scripted fake `Dispatch`; the clock and sleep are fake (a sleep advances the clock),
so backoff and waits take no real time.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from quiver.runtime.approval import Decision
from quiver.runtime.executor import IDEMPOTENCY_META_KEY, LedgerExecutor, owner_is_gone
from quiver.runtime.ledger import Action
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import (
    CallRequest,
    UpstreamProtocolError,
    UpstreamTimeout,
    UpstreamUnavailable,
)

READ = {"side_effect": "read_only", "idempotent": True, "approval": "never", "timeout_ms": 1000,
        "retry": {"initial_interval": 1.0, "backoff_coefficient": 2.0, "maximum_interval": 30.0,
                  "maximum_attempts": 3, "non_retryable_errors": []}}  # fmt: skip
WRITE = {**READ, "side_effect": "reversible_write", "idempotent": False}
IRREVERSIBLE = {**WRITE, "side_effect": "irreversible_write"}
KEYED_WRITE = {**WRITE, "idempotency_key_argument": "idempotency_key"}
RECONCILE = {"tool": "effect_of", "arguments": {"key": "$.idempotency_key", "amount": "$.arguments.amount"},
             "succeeded_when": "$.structuredContent.applied", "tool_sha256": "cd" * 32}  # fmt: skip


def ok(value: object = 1) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(value)}], "structuredContent": {"value": value}, "isError": False}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_767_225_600.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await anyio.lowlevel.checkpoint()


class Upstream:
    """A scripted upstream: each call takes the next scripted answer (an exception is raised); then `ok()`."""

    def __init__(self, *script: object, clock: FakeClock | None = None, hold: anyio.Event | None = None) -> None:
        self.script = list(script)
        self.calls: list[tuple[CallRequest, dict[str, Any], float]] = []
        self.hold = hold

    async def __call__(self, request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        self.calls.append((request, dict(meta), timeout_s))
        if self.hold is not None:
            await self.hold.wait()
        answer = self.script.pop(0) if self.script else ok(len(self.calls))
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, Mapping)
        return answer


@dataclass
class Approver:
    decision: Decision
    asked: int = 0

    async def request(self, action: Action) -> Decision:
        self.asked += 1
        return self.decision


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteLedger]:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    yield ledger
    ledger.close()


def executor(store: SqliteLedger, clock: FakeClock, **kwargs: Any) -> LedgerExecutor:
    kwargs.setdefault("owner", "test/0/a")
    return LedgerExecutor(store, clock=clock, sleep=clock.sleep, rng=random.Random(7), **kwargs)


def call(
    tool: str = "counter_increment", policy: Mapping[str, Any] = WRITE, key: str | None = None, **arguments: Any
) -> CallRequest:
    return CallRequest(
        server="calc", tool=tool, arguments=arguments or {"amount": 1}, tool_sha256="ab" * 32, policy=policy,
        session_id="s1", idempotency_key=key, call_id="42",
    )  # fmt: skip


async def states_of(store: SqliteLedger, action_id: str | None) -> list[str]:
    assert action_id is not None
    return [event.to_state for event in await store.events(action_id)]


# --- success, records, idempotency ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_call_is_recorded_before_dispatch_and_settles_succeeded(store: SqliteLedger, clock: FakeClock) -> None:
    seen: list[str] = []

    async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        [action] = await store.list()
        seen.append(action.state)
        return ok("done")

    outcome = await executor(store, clock).execute(call(key="k1"), dispatch)
    assert seen == ["dispatching"]
    assert (outcome.state, outcome.attempts, outcome.result) == ("succeeded", 1, ok("done"))
    assert await states_of(store, outcome.action_id) == ["proposed", "validated", "dispatching", "succeeded"]
    action = await store.get(outcome.action_id or "")
    assert (action.idempotency_key, action.server, action.tool, action.arguments) == (
        "k1", "calc", "counter_increment", '{"amount":1}',
    )  # fmt: skip
    [attempt] = await store.attempts(action.id)
    assert (attempt.number, attempt.outcome) == (1, "ok")


@pytest.mark.anyio
async def test_the_key_goes_upstream_in_meta_and_in_the_configured_argument(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream()
    await executor(store, clock).execute(call(policy=KEYED_WRITE, key="k1"), upstream)
    [(request, meta, timeout_s)] = upstream.calls
    assert meta == {IDEMPOTENCY_META_KEY: "k1"}
    assert request.arguments == {"amount": 1, "idempotency_key": "k1"}
    assert timeout_s == 1.0


@pytest.mark.anyio
async def test_a_key_in_meta_counts_as_the_callers_key(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream()
    request = CallRequest(
        "calc", "counter_increment", {"amount": 1}, "", WRITE, "s1", meta={IDEMPOTENCY_META_KEY: "m1"}
    )
    first = await executor(store, clock).execute(request, upstream)
    again = await executor(store, clock).execute(call(key="m1"), upstream)
    assert len(upstream.calls) == 1
    assert again.action_id == first.action_id


@pytest.mark.anyio
async def test_same_key_and_arguments_return_the_stored_outcome_without_dispatch(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(ok("first"))
    first = await executor(store, clock).execute(call(key="k1", amount=5), upstream)
    again = await executor(store, clock).execute(call(key="k1", amount=5), upstream)
    assert len(upstream.calls) == 1
    assert (again.result, again.state, again.action_id) == (ok("first"), "succeeded", first.action_id)


@pytest.mark.anyio
async def test_a_stored_failure_is_replayed_too(store: SqliteLedger, clock: FakeClock) -> None:
    failure = {"content": [{"type": "text", "text": "no such account"}], "isError": True}
    upstream = Upstream(failure)
    first = await executor(store, clock).execute(call(key="k1"), upstream)
    again = await executor(store, clock).execute(call(key="k1"), upstream)
    assert len(upstream.calls) == 1
    assert first.state == again.state == "failed_final"
    assert again.result == failure


@pytest.mark.anyio
async def test_same_key_with_other_arguments_or_tool_is_an_error_and_nothing_is_dispatched(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream()
    first = await executor(store, clock).execute(call(key="k1", amount=1), upstream)
    other_args = await executor(store, clock).execute(call(key="k1", amount=2), upstream)
    other_tool = await executor(store, clock).execute(call("add", READ, key="k1", a=1, b=2), upstream)
    assert len(upstream.calls) == 1
    for outcome in (other_args, other_tool):
        assert outcome.result["isError"] is True
        assert "already used for a different call" in outcome.result["content"][0]["text"]
        assert (outcome.state, outcome.action_id) == ("failed_final", None)
    assert [a.id for a in await store.list()] == [first.action_id]


@pytest.mark.anyio
async def test_calls_without_a_key_are_separate_actions_even_with_equal_arguments(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream()
    first = await executor(store, clock).execute(call(amount=1), upstream)
    second = await executor(store, clock).execute(call(amount=1), upstream)
    assert len(upstream.calls) == 2
    assert first.action_id != second.action_id
    assert (await store.get(first.action_id or "")).idempotency_key == first.action_id


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["", "x" * 256])
async def test_an_invalid_key_is_refused_before_anything_is_recorded(
    store: SqliteLedger, clock: FakeClock, key: str
) -> None:
    upstream = Upstream()
    outcome = await executor(store, clock).execute(call(key=key), upstream)
    assert outcome.result["isError"] and not upstream.calls
    assert await store.list() == []


@pytest.mark.anyio
async def test_a_malformed_policy_ends_failed_final_without_dispatch(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream()
    outcome = await executor(store, clock).execute(call(policy={**WRITE, "approval": "sometimes"}), upstream)
    assert not upstream.calls
    assert outcome.state == "failed_final"
    assert await states_of(store, outcome.action_id) == ["proposed", "failed_final"]
    assert (await store.get(outcome.action_id or "")).error_type == "invalid_policy"


# --- retries ------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_transient_errors_of_a_read_are_retried_with_full_jitter_waits(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(UpstreamTimeout("slow"), UpstreamProtocolError("busy", -32603, transient=True), ok("third"))
    outcome = await executor(store, clock).execute(call("add", READ, key="r1", a=1, b=2), upstream)
    assert (outcome.state, outcome.attempts, outcome.result) == ("succeeded", 3, ok("third"))
    assert len(clock.sleeps) == 2
    assert 0 <= clock.sleeps[0] <= 1.0 and 0 <= clock.sleeps[1] <= 2.0
    assert {meta[IDEMPOTENCY_META_KEY] for _, meta, _ in upstream.calls} == {"r1"}
    assert await states_of(store, outcome.action_id) == [
        "proposed", "validated", "dispatching", "failed_retryable", "dispatching", "failed_retryable", "dispatching",
        "succeeded",
    ]  # fmt: skip
    attempts = await store.attempts(outcome.action_id or "")
    assert [(a.number, a.outcome, a.error_type) for a in attempts] == [
        (1, "error", "UpstreamTimeout"), (2, "error", "UpstreamProtocolError"), (3, "ok", None),
    ]  # fmt: skip


@pytest.mark.anyio
async def test_a_read_that_keeps_failing_ends_failed_final_after_maximum_attempts(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(*[UpstreamTimeout("slow")] * 5)
    outcome = await executor(store, clock).execute(call("add", READ, a=1, b=2), upstream)
    assert (outcome.state, outcome.attempts, len(upstream.calls)) == ("failed_final", 3, 3)
    assert "UpstreamTimeout" in outcome.result["content"][0]["text"]


@pytest.mark.anyio
async def test_a_transient_error_of_a_non_idempotent_write_is_not_retried(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(UpstreamProtocolError("busy", -32603, transient=True))
    outcome = await executor(store, clock).execute(call(), upstream)
    assert (outcome.state, len(upstream.calls)) == ("failed_final", 1)


@pytest.mark.anyio
async def test_a_write_is_retried_when_the_server_was_not_reached(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream(UpstreamUnavailable("not started"))
    outcome = await executor(store, clock).execute(call(), upstream)
    assert (outcome.state, len(upstream.calls)) == ("succeeded", 2)


@pytest.mark.anyio
async def test_a_write_whose_upstream_honours_the_key_is_retried_with_the_same_key(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(UpstreamTimeout("dropped"))
    outcome = await executor(store, clock).execute(call(policy=KEYED_WRITE, key="w1"), upstream)
    assert (outcome.state, outcome.attempts) == ("succeeded", 2)
    assert [request.arguments["idempotency_key"] for request, _, _ in upstream.calls] == ["w1", "w1"]
    assert [meta[IDEMPOTENCY_META_KEY] for _, meta, _ in upstream.calls] == ["w1", "w1"]


@pytest.mark.anyio
async def test_non_retryable_errors_from_the_policy_are_not_retried(store: SqliteLedger, clock: FakeClock) -> None:
    policy = {**READ, "retry": {**READ["retry"], "non_retryable_errors": ["UpstreamTimeout"]}}
    upstream = Upstream(UpstreamTimeout("slow"))
    outcome = await executor(store, clock).execute(call("add", policy, a=1, b=2), upstream)
    assert (outcome.state, len(upstream.calls)) == ("failed_final", 1)


@pytest.mark.anyio
async def test_a_tool_error_result_is_final_and_never_retried(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream({"content": [{"type": "text", "text": "no such account: 7"}], "isError": True})
    outcome = await executor(store, clock).execute(call("add", READ, a=1, b=2), upstream)
    assert (outcome.state, len(upstream.calls)) == ("failed_final", 1)
    assert (await store.get(outcome.action_id or "")).error_type == "tool_error"


@pytest.mark.anyio
async def test_an_exception_that_is_not_an_upstream_error_is_recorded_not_raised(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(RuntimeError("bug in a transport"))
    outcome = await executor(store, clock).execute(call("add", READ, a=1, b=2), upstream)
    assert (outcome.state, len(upstream.calls)) == ("failed_final", 1)
    assert (await store.get(outcome.action_id or "")).error_type == "RuntimeError"


# --- unknown outcome ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_timeout_of_a_non_idempotent_write_is_unknown_outcome_and_never_re_sent(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(UpstreamTimeout("no answer"))
    outcome = await executor(store, clock).execute(call(key="w1"), upstream)
    assert (outcome.state, len(upstream.calls)) == ("unknown_outcome", 1)
    text = outcome.result["content"][0]["text"]
    assert outcome.action_id in text and "will not be re-sent" in text
    again = await executor(store, clock).execute(call(key="w1"), upstream)
    assert (again.state, again.action_id, len(upstream.calls)) == ("unknown_outcome", outcome.action_id, 1)


@pytest.mark.anyio
async def test_a_keyed_write_that_times_out_on_every_attempt_is_unknown_outcome(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(UpstreamTimeout("1"), UpstreamUnavailable("2"), UpstreamUnavailable("3"))
    outcome = await executor(store, clock).execute(call(policy=KEYED_WRITE, key="w1"), upstream)
    assert (outcome.state, len(upstream.calls)) == ("unknown_outcome", 3)


@pytest.mark.anyio
async def test_a_reconcile_confirmation_settles_an_unknown_outcome_as_succeeded(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(UpstreamTimeout("no answer"), {"structuredContent": {"applied": True}, "isError": False})
    outcome = await executor(store, clock).execute(call(policy={**WRITE, "reconcile": RECONCILE}, key="w1"), upstream)
    assert outcome.state == "succeeded" and outcome.result["isError"] is False
    probe, _, _ = upstream.calls[1]
    assert (probe.tool, dict(probe.arguments), probe.policy["side_effect"]) == (
        "effect_of", {"key": "w1", "amount": 1}, "read_only",
    )  # fmt: skip
    assert await states_of(store, outcome.action_id) == [
        "proposed", "validated", "dispatching", "unknown_outcome", "succeeded",
    ]  # fmt: skip


@pytest.mark.anyio
async def test_right_after_a_timeout_a_reconcile_no_leaves_the_outcome_unknown(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(UpstreamTimeout("no answer"), {"structuredContent": {"applied": False}, "isError": False})
    outcome = await executor(store, clock).execute(call(policy={**WRITE, "reconcile": RECONCILE}), upstream)
    assert (outcome.state, len(upstream.calls)) == ("unknown_outcome", 2)


@pytest.mark.anyio
async def test_recovery_moves_a_dead_executors_write_to_unknown_and_reconciles_it(
    store: SqliteLedger, clock: FakeClock
) -> None:
    policy = {**WRITE, "reconcile": {**RECONCILE, "equals": True}}
    dead = executor(store, clock, owner="dead/1/x")

    async def crash(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        raise KeyboardInterrupt  # stands in for the process dying mid-dispatch: nothing after this runs

    with pytest.raises(KeyboardInterrupt):
        await dead.execute(call(policy=policy, key="w1"), crash)
    action = await store.find_by_key("w1")
    assert action is not None
    store._conn.execute("UPDATE actions SET state = 'dispatching' WHERE id = ?", (action.id,))  # as SIGKILL leaves it

    probe = Upstream({"structuredContent": {"applied": True}, "isError": False})
    report = await executor(store, clock).recover(probe, is_orphan=lambda a: a.owner == "dead/1/x")
    assert [(r.from_state, r.action.state) for r in report.recovered] == [("dispatching", "unknown_outcome")]
    assert [a.state for a in report.reconciled] == ["succeeded"]
    assert (await store.get(action.id)).state == "succeeded"
    upstream = Upstream()
    replay = await executor(store, clock).execute(call(policy=policy, key="w1"), upstream)
    assert replay.state == "succeeded" and not upstream.calls


@pytest.mark.anyio
async def test_recovery_settles_a_reported_no_as_failed_final(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream(UpstreamTimeout("no answer"), {"structuredContent": {"applied": False}, "isError": False})
    outcome = await executor(store, clock).execute(call(policy={**WRITE, "reconcile": RECONCILE}), upstream)
    assert outcome.state == "unknown_outcome"
    probe = Upstream({"structuredContent": {"applied": False}, "isError": False})
    report = await executor(store, clock).recover(probe)
    assert [a.state for a in report.reconciled] == ["failed_final"]
    assert (await store.get(outcome.action_id or "")).error_type == "not_applied"


@pytest.mark.anyio
async def test_a_reconcile_that_cannot_tell_leaves_the_action_unknown(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream(UpstreamTimeout("no answer"))
    outcome = await executor(store, clock).execute(call(policy={**WRITE, "reconcile": RECONCILE}), upstream)
    for answer in ({"isError": True, "content": []}, {"structuredContent": {}, "isError": False}, UpstreamTimeout("x")):
        report = await executor(store, clock).recover(Upstream(answer))
        assert report.reconciled == ()
    assert (await store.get(outcome.action_id or "")).state == "unknown_outcome"


@pytest.mark.anyio
async def test_a_cancelled_write_in_flight_is_recorded_unknown_outcome(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream(hold=anyio.Event())
    with anyio.move_on_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(executor(store, clock).execute, call(key="c1"), upstream)
            while not upstream.calls:
                await anyio.sleep(0.001)
            group.cancel_scope.cancel()
    action = await store.find_by_key("c1")
    assert action is not None
    assert (action.state, action.error_type) == ("unknown_outcome", "cancelled")
    assert [(a.number, a.error_type) for a in await store.attempts(action.id)] == [(1, "cancelled")]


@pytest.mark.anyio
async def test_a_read_cancelled_while_waiting_to_retry_is_failed_final(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream(UpstreamTimeout("slow"))
    waiting = anyio.Event()

    async def sleep(seconds: float) -> None:
        waiting.set()
        await anyio.Event().wait()

    ledger_executor = LedgerExecutor(store, clock=clock, sleep=sleep, rng=random.Random(1))
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(ledger_executor.execute, call("add", READ, key="r1", a=1, b=2), upstream)
            await waiting.wait()
            group.cancel_scope.cancel()
    action = await store.find_by_key("r1")
    assert action is not None and (action.state, action.error_type) == ("failed_final", "cancelled")


def test_the_owner_of_a_live_process_is_alive_and_a_dead_pid_is_gone() -> None:
    import os
    import socket

    assert not owner_is_gone(f"{socket.gethostname()}/{os.getpid()}/x")
    assert owner_is_gone(f"{socket.gethostname()}/999999999/x")
    assert not owner_is_gone("another-host/1/x")
    assert owner_is_gone(None)


# --- approvals ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_approved_action_is_dispatched(store: SqliteLedger, clock: FakeClock) -> None:
    approver, upstream = Approver("approved"), Upstream()
    outcome = await executor(store, clock, approver=approver).execute(
        call(policy={**WRITE, "approval": "always"}), upstream
    )
    assert (outcome.state, approver.asked, len(upstream.calls)) == ("succeeded", 1, 1)
    assert await states_of(store, outcome.action_id) == [
        "proposed", "validated", "awaiting_approval", "validated", "dispatching", "succeeded",
    ]  # fmt: skip
    action = await store.get(outcome.action_id or "")
    assert (action.approval, action.approval_ref) == ("approved", "elicitation")


@pytest.mark.anyio
async def test_a_declined_action_is_failed_final_and_never_dispatched(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream()
    outcome = await executor(store, clock, approver=Approver("declined")).execute(
        call(policy={**IRREVERSIBLE, "approval": "irreversible"}, key="d1"), upstream
    )
    assert (outcome.state, len(upstream.calls)) == ("failed_final", 0)
    assert "declined" in outcome.result["content"][0]["text"]
    again = await executor(store, clock, approver=Approver("approved")).execute(
        call(policy={**IRREVERSIBLE, "approval": "irreversible"}, key="d1"), upstream
    )
    assert (again.state, len(upstream.calls)) == ("failed_final", 0)


@pytest.mark.anyio
async def test_approval_irreversible_asks_only_for_irreversible_writes(store: SqliteLedger, clock: FakeClock) -> None:
    approver = Approver("declined")
    outcome = await executor(store, clock, approver=approver).execute(
        call(policy={**WRITE, "approval": "irreversible"}), Upstream()
    )
    assert (outcome.state, approver.asked) == ("succeeded", 0)


@pytest.mark.anyio
async def test_without_an_approver_the_action_waits_and_an_operator_approval_releases_it_once(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream()
    policy = {**WRITE, "approval": "always"}
    waiting = await executor(store, clock, approver=Approver("unavailable")).execute(
        call(policy=policy, key="a1"), upstream
    )
    assert (waiting.state, len(upstream.calls)) == ("awaiting_approval", 0)
    assert waiting.action_id and waiting.action_id in waiting.result["content"][0]["text"]
    assert waiting.result["_meta"]["io.quiver/action"]["state"] == "awaiting_approval"

    still = await executor(store, clock).execute(call(policy=policy, key="a1"), upstream)
    assert (still.state, len(upstream.calls)) == ("awaiting_approval", 0)

    await store.transition(
        waiting.action_id, ("awaiting_approval",), "validated", at=clock(), approval="approved", approval_ref="cli:ops"
    )
    ran = await executor(store, clock).execute(call(policy=policy, key="a1"), upstream)
    replay = await executor(store, clock).execute(call(policy=policy, key="a1"), upstream)
    assert (ran.state, replay.state, len(upstream.calls)) == ("succeeded", "succeeded", 1)
    assert ran.action_id == replay.action_id == waiting.action_id


@pytest.mark.anyio
async def test_an_operator_denial_is_returned_to_the_re_call(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream()
    policy = {**WRITE, "approval": "always"}
    waiting = await executor(store, clock).execute(call(policy=policy, key="a1"), upstream)
    await store.transition(
        waiting.action_id or "", ("awaiting_approval",), "failed_final", at=clock(), approval="declined",
        error_type="approval_declined", error="denied by cli:ops",
    )  # fmt: skip
    again = await executor(store, clock).execute(call(policy=policy, key="a1"), upstream)
    assert (again.state, len(upstream.calls)) == ("failed_final", 0)


# --- concurrency --------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_concurrent_calls_with_one_key_dispatch_once_and_all_get_the_outcome(
    store: SqliteLedger, clock: FakeClock
) -> None:
    hold = anyio.Event()
    upstream = Upstream(ok("only"), hold=hold)
    outcomes = []

    async def one() -> None:
        outcomes.append(await executor(store, clock).execute(call(key="same"), upstream))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(one)
            while not upstream.calls:
                await anyio.sleep(0.001)
            hold.set()
    assert len(upstream.calls) == 1
    assert {(o.state, o.action_id) for o in outcomes} == {("succeeded", outcomes[0].action_id)}
    assert all(o.result == ok("only") for o in outcomes)


@pytest.mark.anyio
async def test_a_waiting_caller_gets_the_action_id_when_the_owner_takes_too_long(
    store: SqliteLedger, clock: FakeClock
) -> None:
    upstream = Upstream(hold=anyio.Event())
    outcomes = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(executor(store, clock).execute, call(key="slow"), upstream)
            while not upstream.calls:
                await anyio.sleep(0.001)
            outcomes.append(await executor(store, clock, wait_s=1.0).execute(call(key="slow"), upstream))
            group.cancel_scope.cancel()
    [outcome] = outcomes
    assert outcome.state == "dispatching" and outcome.result["isError"]
    assert "still dispatching" in outcome.result["content"][0]["text"]


def test_eight_threads_with_their_own_connections_and_overlapping_keys_dispatch_once_per_key(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    SqliteLedger(path).close()
    dispatched: dict[str, int] = {}
    lock = threading.Lock()
    barrier = threading.Barrier(8)
    failures: list[BaseException] = []
    keys = [f"key-{n}" for n in range(4)]

    async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        with lock:
            key = meta[IDEMPOTENCY_META_KEY]
            dispatched[key] = dispatched.get(key, 0) + 1
        await anyio.sleep(0.02)  # stay in flight while the other clients arrive
        return ok(meta[IDEMPOTENCY_META_KEY])

    def client(n: int) -> None:
        store = SqliteLedger(path)
        try:
            ledger_executor = LedgerExecutor(store, owner=f"test/0/{n}")

            async def calls() -> list[tuple[str, str]]:
                barrier.wait(timeout=10)
                results = []
                for key in keys[n % 2 :] + keys[: n % 2]:
                    outcome = await ledger_executor.execute(call(key=key, amount=1), dispatch)
                    results.append((outcome.state, outcome.result["structuredContent"]["value"]))
                return results

            results = anyio.run(calls)
            assert results and all(state == "succeeded" for state, _ in results)
        except BaseException as exc:  # reported below, from the test thread
            failures.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures, failures
    assert dispatched == dict.fromkeys(keys, 1)


@pytest.mark.anyio
async def test_a_key_given_as_the_configured_argument_is_the_callers_key(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream()
    first = await executor(store, clock).execute(call(policy=KEYED_WRITE, amount=1, idempotency_key="arg-1"), upstream)
    again = await executor(store, clock).execute(call(policy=KEYED_WRITE, key="arg-1", amount=1), upstream)
    assert (await store.get(first.action_id or "")).idempotency_key == "arg-1"
    assert len(upstream.calls) == 1 and upstream.calls[0][1][IDEMPOTENCY_META_KEY] == "arg-1"
    assert (again.state, again.action_id) == ("succeeded", first.action_id)  # the key argument is not an argument


@pytest.mark.anyio
async def test_two_different_keys_on_one_call_are_refused(store: SqliteLedger, clock: FakeClock) -> None:
    upstream = Upstream()
    request = CallRequest(
        "calc",
        "counter_increment",
        {"amount": 1},
        "",
        WRITE,
        "s1",
        idempotency_key="a",
        meta={IDEMPOTENCY_META_KEY: "b"},
    )
    outcome = await executor(store, clock).execute(request, upstream)
    clash = await executor(store, clock).execute(call(policy=KEYED_WRITE, key="a", idempotency_key="c"), upstream)
    assert outcome.result["isError"] and clash.result["isError"] and not upstream.calls
    assert await store.list() == []


@pytest.mark.anyio
async def test_an_answer_that_arrives_after_a_sweep_judged_the_executor_dead_still_settles_the_action(
    store: SqliteLedger, clock: FakeClock
) -> None:
    async def slow_upstream(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        (action,) = await store.list()
        # another replica's sweep: this executor's lease ran out while the call was in flight
        await store.transition(action.id, ("dispatching",), "unknown_outcome", at=clock.now, detail="lease expired")
        return ok("late")

    outcome = await executor(store, clock).execute(call(key="k-late"), slow_upstream)
    assert outcome.state == "succeeded" and not outcome.result["isError"]
    assert await states_of(store, outcome.action_id) == [
        "proposed",
        "validated",
        "dispatching",
        "unknown_outcome",
        "succeeded",
    ]
