"""Runs a LedgerExecutor in its own process, for the crash and multi-process tests.

python _executor_proc.py hang LEDGER EFFECT_LOG KEY
    one counter_increment through calc with CALC_DROP_AFTER_EFFECT=1: the effect happens, the
    answer never comes, and the action stays `dispatching` until the process is killed.
python _executor_proc.py clients LEDGER DISPATCH_LOG GO_FILE N
    client N: waits for GO_FILE, then calls keys key-0..key-3 (rotated by N) through an
    in-process dispatch that appends each key it receives to DISPATCH_LOG; prints the states.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from quiver.runtime.executor import IDEMPOTENCY_META_KEY, LedgerExecutor
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallRequest

WRITE = {
    "side_effect": "reversible_write", "idempotent": False, "approval": "never", "timeout_ms": 600_000,
    "retry": {"maximum_attempts": 3, "initial_interval": 0.01},
    "reconcile": {"tool": "effect_applied", "arguments": {"key": "$.idempotency_key"},
                  "succeeded_when": "$.structuredContent.applied", "tool_sha256": "cd" * 32},
}  # fmt: skip
KEYS = [f"key-{n}" for n in range(4)]


async def hang(ledger: str, effect_log: str, key: str) -> None:
    from _calc_dispatch import calc_dispatch

    store = SqliteLedger(ledger)
    env = {"CALC_DROP_AFTER_EFFECT": "1", "CALC_EFFECT_LOG": effect_log}
    async with calc_dispatch(env) as dispatch:
        request = CallRequest("calc", "counter_increment", {"amount": 1}, "", WRITE, "proc", idempotency_key=key)
        await LedgerExecutor(store).execute(request, dispatch)
    raise SystemExit("the call returned; it should have hung until killed")


async def clients(ledger: str, dispatch_log: str, go_file: str, n: int) -> None:
    store = SqliteLedger(ledger)
    executor = LedgerExecutor(store)

    async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        key = meta[IDEMPOTENCY_META_KEY]
        fd = os.open(dispatch_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{key}\n".encode())
        finally:
            os.close(fd)
        await anyio.sleep(0.05)  # stay in flight while the other clients arrive
        return {"content": [{"type": "text", "text": key}], "structuredContent": {"key": key}, "isError": False}

    deadline = time.monotonic() + 30
    while not Path(go_file).exists():
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        await anyio.sleep(0.005)
    states = []
    for key in KEYS[n % 4 :] + KEYS[: n % 4]:
        request = CallRequest("app", "put", {"k": key}, "", WRITE, f"client-{n}", idempotency_key=key)
        outcome = await executor.execute(request, dispatch)
        states.append([key, outcome.state, outcome.result.get("structuredContent", {}).get("key")])
    print(json.dumps(states))


def main(argv: list[str]) -> None:
    mode, *args = argv
    if mode == "hang":
        anyio.run(hang, *args)
    elif mode == "clients":
        anyio.run(clients, args[0], args[1], args[2], int(args[3]))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
