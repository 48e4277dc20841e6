"""What a call costs the ledger (issue 24). PostgreSQL: at most two round trips to the database, one
statement claiming the key and recording the action up to `dispatching` with its first attempt, one the
outcome; counted on the wire (every round trip ends with the server's ReadyForQuery, which libpq's trace
shows). SQLite: two transactions of ten statements in all, counted by sqlite3's trace callback."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from _pg_server import PgServer, fresh_database, session_server

from quiver.runtime.executor import LedgerExecutor
from quiver.runtime.ledger_postgres import PostgresLedger
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallRequest

READ = {"side_effect": "read_only", "approval": "never", "timeout_ms": 5_000}
WRITE = {"side_effect": "irreversible_write", "approval": "never", "timeout_ms": 5_000}
RESULT = {"content": [{"type": "text", "text": "ok"}], "isError": False}


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    yield from session_server()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    yield from fresh_database(pg_server)


async def _dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
    return RESULT


def _round_trips(url: str, trace: Path, requests: list[CallRequest]) -> int:
    """ReadyForQuery messages the store's one connection received while the executor ran `requests`."""
    store = PostgresLedger(url, migrate=True, pool_size=1, offload=False)
    try:
        executor = LedgerExecutor(store)

        async def run(batch: list[CallRequest]) -> None:
            for request in batch:
                outcome = await executor.execute(request, _dispatch)
                assert outcome.state == "succeeded"

        # psycopg prepares a statement on its 5th execution (one extra round trip, once per connection)
        warm = [CallRequest("calc", "add", {"n": n}, "ab" * 32, READ, "warm") for n in range(8)]
        anyio.run(run, warm)
        (conn,) = store._pool._idle  # the pool's one connection, idle between calls
        fd = os.open(trace, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        conn.pgconn.trace(fd)
        try:
            anyio.run(run, requests)
        finally:
            conn.pgconn.untrace()
            os.close(fd)
    finally:
        store.close()
    lines = trace.read_text(encoding="utf-8", errors="replace").splitlines()
    assert any("\tF\t" in line and "Bind" in line for line in lines)  # the trace saw the calls
    return sum(1 for line in lines if "\tB\t" in line and "ReadyForQuery" in line)


def test_a_read_call_and_a_keyed_write_each_take_two_round_trips(pg_url: str, tmp_path: Path) -> None:
    reads = [CallRequest("calc", "add", {"n": n}, "ab" * 32, READ, "s") for n in range(10)]
    assert _round_trips(pg_url, tmp_path / "reads.trace", reads) == 2 * len(reads)
    writes = [
        CallRequest("notes", "add_note", {"n": n}, "cd" * 32, WRITE, "s", idempotency_key=f"key-{n}") for n in range(10)
    ]
    assert _round_trips(pg_url, tmp_path / "writes.trace", writes) == 2 * len(writes)


def test_a_sqlite_call_is_two_transactions_of_ten_statements(tmp_path: Path) -> None:
    store = SqliteLedger(tmp_path / "ledger.db")
    statements: list[str] = []
    try:
        executor = LedgerExecutor(store)

        async def run(batch: list[CallRequest]) -> None:
            for request in batch:
                assert (await executor.execute(request, _dispatch)).state == "succeeded"

        anyio.run(run, [CallRequest("calc", "add", {"n": n}, "ab" * 32, READ, "warm") for n in range(3)])
        store._conn.set_trace_callback(statements.append)
        calls = [
            CallRequest("notes", "add_note", {"n": n}, "cd" * 32, WRITE, "s", idempotency_key=f"key-{n}")
            for n in range(10)
        ]
        anyio.run(run, calls)
        store._conn.set_trace_callback(None)
    finally:
        store.close()
    assert len(statements) == 10 * len(calls)
    assert sum(s == "BEGIN IMMEDIATE" for s in statements) == 2 * len(calls)
    assert sum(s == "COMMIT" for s in statements) == 2 * len(calls)
