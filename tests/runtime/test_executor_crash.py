"""Real processes: a gateway SIGKILLed mid-dispatch is recovered and reconciled; eight client processes
with overlapping keys dispatch once per key."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from quiver.runtime.executor import LedgerExecutor
from quiver.runtime.ledger import Action
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallRequest

HELPER = Path(__file__).with_name("_executor_proc.py")
WAIT_S = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def effects(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wait_until(what: str, check: Any, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if proc.poll() is not None:
            raise AssertionError(f"helper exited ({proc.returncode}) before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def action_state(ledger: Path, key: str) -> str | None:
    if not ledger.exists():
        return None
    store = SqliteLedger(ledger)
    try:
        action = anyio.run(store.find_by_key, key)
        return None if action is None else action.state
    finally:
        store.close()


@pytest.fixture
def helper_procs() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def _kill_if_alive(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def test_a_gateway_killed_during_dispatch_leaves_an_action_that_recovery_reconciles(
    tmp_path: Path, helper_procs: list[subprocess.Popen[str]]
) -> None:
    ledger, log = tmp_path / "ledger.db", tmp_path / "effects.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(HELPER), "hang", str(ledger), str(log), "order-7"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HELPER.parent,
    )  # fmt: skip
    helper_procs.append(proc)
    wait_until("the action to be dispatching", lambda: action_state(ledger, "order-7") == "dispatching", proc)
    wait_until("the effect to happen upstream", lambda: len(effects(log)) == 1, proc)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    calc_pid = effects(log)[0]["pid"]

    try:
        store = SqliteLedger(ledger)
        action = anyio.run(store.find_by_key, "order-7")
        assert action is not None and (action.state, action.attempts) == ("dispatching", 1)
        reconcile_calls: list[CallRequest] = []

        async def reconcile(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
            """Stands in for a calc read tool `effect_applied(key)`: reads the effect log."""
            reconcile_calls.append(request)
            applied = any(entry["key"] == request.arguments["key"] for entry in effects(log))
            return {"content": [], "structuredContent": {"applied": applied}, "isError": False}

        async def recover_then_recall() -> tuple[Any, Action, Any]:
            executor = LedgerExecutor(store)
            report = await executor.recover(reconcile)
            settled = await store.get(action.id)
            never = CallRequest("calc", "counter_increment", {"amount": 1}, "", {}, "s2", idempotency_key="order-7")

            async def must_not_dispatch(request: CallRequest, meta: Mapping[str, Any], t: float) -> Mapping[str, Any]:
                raise AssertionError("a settled action was dispatched again")

            return report, settled, await executor.execute(never, must_not_dispatch)

        report, settled, recall = anyio.run(recover_then_recall)
        assert [(r.from_state, r.action.state) for r in report.recovered] == [("dispatching", "unknown_outcome")]
        assert [a.id for a in report.reconciled] == [action.id]
        assert [(r.tool, dict(r.arguments)) for r in reconcile_calls] == [("effect_applied", {"key": "order-7"})]
        assert settled.state == "succeeded"
        events = [(e.from_state, e.to_state) for e in anyio.run(store.events, action.id)]
        assert events[-2:] == [("dispatching", "unknown_outcome"), ("unknown_outcome", "succeeded")]
        assert (recall.state, recall.action_id) == ("succeeded", action.id)
        assert len(effects(log)) == 1
        store.close()
    finally:
        _kill_if_alive(calc_pid)  # it exits on its own when its stdin closes; make sure


def test_eight_client_processes_with_overlapping_keys_dispatch_once_per_key(
    tmp_path: Path, helper_procs: list[subprocess.Popen[str]]
) -> None:
    ledger, log, go = tmp_path / "ledger.db", tmp_path / "dispatched.log", tmp_path / "go"
    SqliteLedger(ledger).close()
    for n in range(8):
        helper_procs.append(
            subprocess.Popen(
                [sys.executable, str(HELPER), "clients", str(ledger), str(log), str(go), str(n)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=HELPER.parent,
            )
        )
    go.touch()
    results = []
    for proc in helper_procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert Counter(log.read_text().split()) == {f"key-{n}": 1 for n in range(4)}
    assert all(state == "succeeded" and value == key for states in results for key, state, value in states)
    store = SqliteLedger(ledger)
    try:
        assert len(anyio.run(store.list)) == 4
    finally:
        store.close()
