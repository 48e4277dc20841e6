"""Fault injection against the real calc server (a subprocess over stdio): transient errors, hangs,
side effects whose answer is dropped, and a crash. The effect log counts what really happened upstream."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from quiver.runtime.executor import LedgerExecutor
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallRequest

FAST_RETRY = {"initial_interval": 0.01, "backoff_coefficient": 2.0, "maximum_interval": 0.05, "maximum_attempts": 3}
READ = {"side_effect": "read_only", "idempotent": True, "approval": "never", "timeout_ms": 2000, "retry": FAST_RETRY}
WRITE = {"side_effect": "reversible_write", "idempotent": False, "approval": "never", "timeout_ms": 500,
         "retry": FAST_RETRY}  # fmt: skip
KEYED_WRITE = {**WRITE, "idempotency_key_argument": "idempotency_key"}
TEST_TIMEOUT_S = 30


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"quiver_tests_{name}", Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


calc_dispatch = _load("_calc_dispatch").calc_dispatch


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteLedger]:
    """The ledger; afterwards, every action it holds must have ended in a recorded resting state."""
    ledger = SqliteLedger(tmp_path / "ledger.db")
    yield ledger
    actions = anyio.run(ledger.list)
    ledger.close()
    assert actions and {a.state for a in actions} <= {"succeeded", "failed_final", "unknown_outcome"}


def effects(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def increment(policy: dict[str, Any], key: str | None) -> CallRequest:
    return CallRequest("calc", "counter_increment", {"amount": 5}, "", policy, "s1", idempotency_key=key)


@pytest.mark.anyio
async def test_transient_rpc_errors_of_a_read_are_retried_until_it_succeeds(store: SqliteLedger) -> None:
    with anyio.fail_after(TEST_TIMEOUT_S):
        async with calc_dispatch({"CALC_FLAKY_MODE": "rpc", "CALC_FLAKY_FAILS": "2"}) as dispatch:
            outcome = await LedgerExecutor(store).execute(
                CallRequest("calc", "flaky", {"key": "f"}, "", READ, "s1"), dispatch
            )
    assert (outcome.state, outcome.attempts) == ("succeeded", 3)
    assert outcome.result["structuredContent"] == {"key": "f", "attempts": 3}
    attempts = await store.attempts(outcome.action_id or "")
    assert [(a.outcome, a.error_type) for a in attempts] == [
        ("error", "UpstreamProtocolError"), ("error", "UpstreamProtocolError"), ("ok", None),
    ]  # fmt: skip


@pytest.mark.anyio
async def test_a_dropped_answer_with_honoured_keys_is_retried_with_the_key_and_the_effect_happens_once(
    store: SqliteLedger, tmp_path: Path
) -> None:
    log = tmp_path / "effects.jsonl"
    env = {"CALC_DROP_AFTER_EFFECT": "1", "CALC_HONOUR_KEYS": "1", "CALC_EFFECT_LOG": str(log)}
    with anyio.fail_after(TEST_TIMEOUT_S):
        async with calc_dispatch(env) as dispatch:
            executor = LedgerExecutor(store)
            outcome = await executor.execute(increment(KEYED_WRITE, "order-1"), dispatch)
            again = await executor.execute(increment(KEYED_WRITE, "order-1"), dispatch)
    assert (outcome.state, outcome.attempts) == ("succeeded", 2)
    assert outcome.result["structuredContent"] == {"total": 5, "applied": False, "key": "order-1"}
    assert (again.state, again.action_id, again.attempts) == ("succeeded", outcome.action_id, 2)
    assert [(e["amount"], e["key"]) for e in effects(log)] == [(5, "order-1")]
    attempts = await store.attempts(outcome.action_id or "")
    assert [a.error_type for a in attempts] == ["UpstreamTimeout", None]


@pytest.mark.anyio
async def test_an_upstream_that_dedupes_on_the_meta_key_is_retried_and_the_effect_happens_once(
    store: SqliteLedger, tmp_path: Path
) -> None:
    log = tmp_path / "effects.jsonl"
    env = {"CALC_DROP_AFTER_EFFECT": "1", "CALC_HONOUR_KEYS": "1", "CALC_EFFECT_LOG": str(log)}
    policy = {**WRITE, "honours_idempotency_key": True}
    with anyio.fail_after(TEST_TIMEOUT_S):
        async with calc_dispatch(env) as dispatch:
            outcome = await LedgerExecutor(store).execute(increment(policy, None), dispatch)
    assert (outcome.state, outcome.attempts) == ("succeeded", 2)
    assert [(e["amount"], e["key"]) for e in effects(log)] == [(5, outcome.action_id)]  # the generated key


@pytest.mark.anyio
async def test_a_dropped_answer_of_a_non_idempotent_write_is_unknown_outcome_and_never_re_sent(
    store: SqliteLedger, tmp_path: Path
) -> None:
    log = tmp_path / "effects.jsonl"
    with anyio.fail_after(TEST_TIMEOUT_S):
        async with calc_dispatch({"CALC_DROP_AFTER_EFFECT": "1", "CALC_EFFECT_LOG": str(log)}) as dispatch:
            executor = LedgerExecutor(store)
            outcome = await executor.execute(increment(WRITE, "pay-1"), dispatch)
            again = await executor.execute(increment(WRITE, "pay-1"), dispatch)
    assert (outcome.state, outcome.attempts) == ("unknown_outcome", 1)
    assert (again.state, again.action_id) == ("unknown_outcome", outcome.action_id)
    assert [(e["amount"], e["key"]) for e in effects(log)] == [(5, "pay-1")]  # the key still travelled in _meta


@pytest.mark.anyio
async def test_a_hanging_read_times_out_on_every_attempt_and_ends_failed_final(store: SqliteLedger) -> None:
    policy = {**READ, "timeout_ms": 200}
    request = CallRequest("calc", "slow_echo", {"text": "x", "delay_ms": 5000}, "", policy, "s1")
    with anyio.fail_after(TEST_TIMEOUT_S):
        async with calc_dispatch({}) as dispatch:
            outcome = await LedgerExecutor(store).execute(request, dispatch)
    assert (outcome.state, outcome.attempts) == ("failed_final", 3)
    assert {a.error_type for a in await store.attempts(outcome.action_id or "")} == {"UpstreamTimeout"}


@pytest.mark.anyio
async def test_a_crash_mid_call_is_unknown_outcome_and_later_calls_fail_without_being_sent(
    store: SqliteLedger, tmp_path: Path
) -> None:
    crash_policy = {**WRITE, "side_effect": "irreversible_write"}
    with anyio.fail_after(TEST_TIMEOUT_S):
        async with calc_dispatch({}) as dispatch:
            executor = LedgerExecutor(store)
            crashed = await executor.execute(CallRequest("calc", "crash", {}, "", crash_policy, "s1"), dispatch)
            after = await executor.execute(CallRequest("calc", "add", {"a": 1, "b": 2}, "", READ, "s1"), dispatch)
            write = await executor.execute(increment(WRITE, "w-after-crash"), dispatch)
    assert (crashed.state, crashed.attempts) == ("unknown_outcome", 1)
    assert (after.state, after.attempts) == ("failed_final", 3)  # unreached: retried, then given up
    assert {a.error_type for a in await store.attempts(after.action_id or "")} == {"UpstreamUnavailable"}
    assert (write.state, write.attempts) == ("failed_final", 3)  # nothing was ever sent: not unknown
