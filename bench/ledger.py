"""Print actions per second through the executor with the SQLite and the PostgreSQL ledger, side by side.

    python bench/ledger.py [--calls 5000] [--processes 2] [--postgres URL]

The tool is a trivial read tool answered in-process (no network, no MCP), so what is measured is the
executor: key claim, state transitions, attempt row, span (no SDK: non-recording), JSON encoding.

Rows: DirectExecutor (no ledger) as the baseline, then each scenario on both stores:
* "crash-safe": SQLite WAL synchronous=NORMAL (survives a crash of the process: the default) and
  PostgreSQL with synchronous_commit=off (survives a crash of the gateway; a crash of the database
  server may lose its last few hundred milliseconds of commits);
* "durable": SQLite synchronous=FULL and PostgreSQL synchronous_commit=on (the PostgreSQL default):
  each commit is on disk before the call goes on;
* with and without a caller key; and N processes sharing one ledger (aggregate actions/s);
* "pg inline": the PostgreSQL store with `offload=False` (statements run on the event loop's thread, as
  SQLite's do): the price of the default worker-thread hop, which keeps a gateway's event loop free
  while a statement waits on the network or on another replica's row lock.
"added p50" is the ledger's p50 per-call latency minus DirectExecutor's. The last line counts the PostgreSQL
store's round trips per call on the wire (ReadyForQuery messages in libpq's trace of one connection; the goal
is at most two: one statement records the action up to `dispatching`, one its outcome).

PostgreSQL is a throw-away server this script starts on the same machine (fsync on, unix socket and
127.0.0.1; the binaries from /usr/lib/postgresql/*/bin; as the `postgres` user when run as root), so
the database competes with the executor for the same cores: with 2 cores this is the worst case for
PostgreSQL and the best for SQLite, which does its work inside the calling process. `--postgres URL`
uses an existing database instead (it must be migrated: `quiver ledger migrate`; the bench adds its rows
and leaves them).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import anyio  # noqa: E402
import psycopg  # noqa: E402

from quiver.runtime.direct import DirectExecutor  # noqa: E402
from quiver.runtime.executor import LedgerExecutor  # noqa: E402
from quiver.runtime.ledger import LedgerStore  # noqa: E402
from quiver.runtime.ledger_postgres import PostgresLedger, migrate_schema  # noqa: E402
from quiver.runtime.ledger_sqlite import SqliteLedger  # noqa: E402
from quiver.runtime.protocol import CallRequest, Executor  # noqa: E402

POLICY = {
    "side_effect": "read_only", "idempotent": True, "approval": "never", "timeout_ms": 30_000,
    "retry": {"initial_interval": 1.0, "backoff_coefficient": 2.0, "maximum_interval": 30.0, "maximum_attempts": 3,
              "non_retryable_errors": []},
}  # fmt: skip
RESULT = {"content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3}, "isError": False}
WARMUP = 200

# A store, described so that a worker process can open it again: ("sqlite", path, synchronous) or
# ("postgresql", url, "on"|"off" [",inline": statements on the event loop's thread, no worker threads]).
Spec = tuple[str, str, str]


async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
    return RESULT


def request(n: int, *, keyed: bool, tag: str) -> CallRequest:
    return CallRequest(
        "calc", "add", {"a": n, "b": 2}, "ab" * 32, POLICY, "bench", idempotency_key=f"{tag}-{n}" if keyed else None
    )


async def measure(executor: Executor, calls: int, *, keyed: bool, tag: str) -> tuple[float, list[float]]:
    for n in range(WARMUP):
        await executor.execute(request(n, keyed=keyed, tag=f"warm-{tag}"), dispatch)
    latencies = []
    started = time.perf_counter()
    for n in range(calls):
        t0 = time.perf_counter()
        outcome = await executor.execute(request(n, keyed=keyed, tag=tag), dispatch)
        latencies.append(time.perf_counter() - t0)
        assert outcome.state == "succeeded"
    return time.perf_counter() - started, latencies


def open_store(spec: Spec) -> LedgerStore:
    kind, where, mode = spec
    if kind == "sqlite":
        return SqliteLedger(where, synchronous="FULL" if mode == "FULL" else "NORMAL")
    commit, _, inline = mode.partition(",")
    separator = "&" if "?" in where else "?"
    return PostgresLedger(f"{where}{separator}options=-csynchronous_commit%3D{commit}", offload=not inline)


def run_ledger(spec: Spec, calls: int, *, keyed: bool, tag: str) -> tuple[float, list[float]]:
    store = open_store(spec)
    try:
        return anyio.run(lambda: measure(LedgerExecutor(store), calls, keyed=keyed, tag=tag))
    finally:
        store.close()


def _worker(spec: Spec, calls: int, tag: str, queue: Any) -> None:
    queue.put(run_ledger(spec, calls, keyed=True, tag=tag))


def run_processes(spec: Spec, calls: int, processes: int, tag: str) -> tuple[float, list[float]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_worker, args=(spec, calls, f"{tag}-p{i}", queue)) for i in range(processes)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    wall = max(elapsed for elapsed, _ in results)  # they run side by side; the slowest bounds the wall time
    return wall, [latency for _, latencies in results for latency in latencies]


def cells(calls: int, elapsed: float, latencies: list[float], baseline_p50: float | None) -> str:
    p50, p95 = statistics.median(latencies), statistics.quantiles(latencies, n=100)[94]
    added = "" if baseline_p50 is None else f"{(p50 - baseline_p50) * 1e6:.0f}"
    return f"{calls / elapsed:>9.0f} {p50 * 1e6:>7.0f} {p95 * 1e6:>7.0f} {added:>7}"


def round_trips(url: str, calls: int = 200) -> float:
    """Round trips per keyed call through the executor on one inline connection (libpq's trace)."""
    store = PostgresLedger(url, pool_size=1, offload=False)
    trace = Path(tempfile.mkdtemp()) / "libpq.trace"
    try:
        executor = LedgerExecutor(store)

        async def run(tag: str, n: int) -> None:
            for i in range(n):
                await executor.execute(request(i, keyed=True, tag=tag), dispatch)

        anyio.run(run, f"rt-warm-{time.time()}", 20)  # past psycopg's prepare threshold
        (conn,) = store._pool._idle
        fd = os.open(trace, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        conn.pgconn.trace(fd)
        try:
            anyio.run(run, f"rt-{time.time()}", calls)
        finally:
            conn.pgconn.untrace()
            os.close(fd)
        lines = trace.read_text(encoding="utf-8", errors="replace").splitlines()
        return sum(1 for line in lines if "\tB\t" in line and "ReadyForQuery" in line) / calls
    finally:
        store.close()
        trace.unlink(missing_ok=True)
        trace.parent.rmdir()


def start_postgres() -> tuple[str, Callable[[], None]]:
    """The ledger tests' throw-away server (tests/runtime/_pg_server.py), durable this time."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "quiver_bench_pg_server", ROOT / "tests" / "runtime" / "_pg_server.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.PgServer(durable=True)
    server.start()
    url: str = server.socket_url(server.create_database())
    stop: Callable[[], None] = server.stop
    return url, stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=5000, help="calls per row (per process in the last rows)")
    parser.add_argument("--processes", type=int, default=2, help="processes sharing one ledger in the last rows")
    parser.add_argument("--postgres", metavar="URL", default=None, help="a migrated database (default: start one)")
    options = parser.parse_args()
    calls = options.calls
    if options.postgres:
        url: str = options.postgres
        stop: Callable[[], None] = lambda: None  # noqa: E731
    else:
        url, stop = start_postgres()
    try:
        migrate_schema(url)
        with psycopg.connect(url) as conn:
            version = conn.execute("SHOW server_version").fetchone()
        server_version = version[0] if version else "?"
        print(
            f"cpus: {os.cpu_count()}  python {sys.version.split()[0]}  sqlite {__import__('sqlite3').sqlite_version}  "
            f"postgresql {server_version} (same machine, unix socket)  psycopg {psycopg.__version__}"
        )
        header = f"{'actions/s':>9} {'p50 us':>7} {'p95 us':>7} {'added':>7}"
        print(f"{'':<40} {'calls':>6} | {'sqlite':^33} | {'postgresql':^33}")
        print(f"{'scenario':<40} {'':>6} | {header} | {header}")
        elapsed, latencies = anyio.run(lambda: measure(DirectExecutor(), calls, keyed=False, tag="direct"))
        baseline = statistics.median(latencies)
        print(f"{'DirectExecutor (no ledger)':<40} {calls:>6} | {cells(calls, elapsed, latencies, None)} |")
        with tempfile.TemporaryDirectory() as tmp:
            scenarios: list[tuple[str, bool, str, str]] = [
                ("1 process, crash-safe, no key", False, "NORMAL", "off"),
                ("1 process, crash-safe, caller key", True, "NORMAL", "off"),
                ("1 process, durable, caller key", True, "FULL", "on"),
            ]
            for number, (name, keyed, sqlite_mode, pg_mode) in enumerate(scenarios):
                sqlite: Spec = ("sqlite", str(Path(tmp) / f"{number}.db"), sqlite_mode)
                postgres: Spec = ("postgresql", url, pg_mode)
                row = [
                    run_ledger(spec, calls, keyed=keyed, tag=f"s{number}-{time.time()}") for spec in (sqlite, postgres)
                ]
                print(f"{name:<40} {calls:>6} | " + " | ".join(cells(calls, *r, baseline) for r in row))
            name = "1 process, crash-safe, key, pg inline"
            elapsed, latencies = run_ledger(("postgresql", url, "off,inline"), calls, keyed=True, tag=f"i{time.time()}")
            print(f"{name:<40} {calls:>6} | {'':>33} | {cells(calls, elapsed, latencies, baseline)}")
            if options.processes > 1:
                for pg_mode, sqlite_mode, label in (("off", "NORMAL", "crash-safe"), ("on", "FULL", "durable")):
                    path = Path(tmp) / f"shared-{sqlite_mode}.db"
                    SqliteLedger(path).close()
                    row = [
                        run_processes(spec, calls, options.processes, f"m{pg_mode}-{time.time()}")
                        for spec in (("sqlite", str(path), sqlite_mode), ("postgresql", url, pg_mode))
                    ]
                    name = f"{options.processes} processes, one ledger, {label}, key"
                    total = calls * options.processes
                    print(f"{name:<40} {total:>6} | " + " | ".join(cells(total, *r, baseline) for r in row))
        print(f"postgresql round trips per keyed call: {round_trips(url):.2f} (goal: at most 2)")
        print(f"load average {os.getloadavg()[0]:.2f}")
    finally:
        stop()


if __name__ == "__main__":
    main()
