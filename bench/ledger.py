"""Print actions per second through the executor with the SQLite ledger, and the time the ledger adds.

    python bench/ledger.py [--calls 5000] [--processes 2]

The tool is a trivial read tool answered in-process (no network, no MCP), so what is measured is the
executor: key claim, state transitions, attempt row, span (no SDK: non-recording), JSON encoding.
Rows: DirectExecutor (no ledger) as the baseline; LedgerExecutor on a fresh SQLite file in WAL mode
with synchronous=NORMAL (the default: survives a process crash) and FULL (survives power loss), with
and without a caller key; and N processes sharing one ledger file (aggregate actions/s). "added p50"
is the ledger's p50 per-call latency minus DirectExecutor's.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import anyio  # noqa: E402

from quiver.runtime.executor import LedgerExecutor  # noqa: E402
from quiver.runtime.ledger_sqlite import SqliteLedger  # noqa: E402
from quiver.runtime.protocol import CallRequest, DirectExecutor, Executor  # noqa: E402

POLICY = {
    "side_effect": "read_only", "idempotent": True, "approval": "never", "timeout_ms": 30_000,
    "retry": {"initial_interval": 1.0, "backoff_coefficient": 2.0, "maximum_interval": 30.0, "maximum_attempts": 3,
              "non_retryable_errors": []},
}  # fmt: skip
RESULT = {"content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3}, "isError": False}
WARMUP = 200


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


def run_ledger(
    path: Path, calls: int, *, keyed: bool, synchronous: Literal["NORMAL", "FULL"], tag: str
) -> tuple[float, list[float]]:
    store = SqliteLedger(path, synchronous=synchronous)
    try:
        return anyio.run(lambda: measure(LedgerExecutor(store), calls, keyed=keyed, tag=tag))
    finally:
        store.close()


def _worker(path: str, calls: int, index: int, queue: Any) -> None:
    queue.put(run_ledger(Path(path), calls, keyed=True, synchronous="NORMAL", tag=f"p{index}"))


def run_processes(path: Path, calls: int, processes: int) -> tuple[float, list[float]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_worker, args=(str(path), calls, i, queue)) for i in range(processes)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    wall = max(elapsed for elapsed, _ in results)  # they run side by side; the slowest bounds the wall time
    return wall, [latency for _, latencies in results for latency in latencies]


def row(name: str, calls: int, elapsed: float, latencies: list[float], baseline_p50: float | None) -> str:
    cuts = statistics.quantiles(latencies, n=100)
    p50, p95 = statistics.median(latencies), cuts[94]
    added = "" if baseline_p50 is None else f"{(p50 - baseline_p50) * 1e6:10.1f}"
    return f"{name:<44} {calls:>7} {calls / elapsed:>11.0f} {p50 * 1e6:>9.1f} {p95 * 1e6:>9.1f} {added:>10}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=5000, help="calls per row (per process in the last row)")
    parser.add_argument("--processes", type=int, default=2, help="processes sharing one ledger in the last row")
    options = parser.parse_args()
    calls = options.calls
    print(f"cpus: {os.cpu_count()}  python {sys.version.split()[0]}  sqlite {__import__('sqlite3').sqlite_version}")
    print(f"{'executor':<44} {'calls':>7} {'actions/s':>11} {'p50 us':>9} {'p95 us':>9} {'added p50':>10}")
    elapsed, latencies = anyio.run(lambda: measure(DirectExecutor(), calls, keyed=False, tag="direct"))
    baseline = statistics.median(latencies)
    print(row("DirectExecutor (no ledger)", calls, elapsed, latencies, None))
    with tempfile.TemporaryDirectory() as tmp:
        for name, keyed, synchronous in (
            ("LedgerExecutor sqlite WAL NORMAL, no key", False, "NORMAL"),
            ("LedgerExecutor sqlite WAL NORMAL, caller key", True, "NORMAL"),
            ("LedgerExecutor sqlite WAL FULL, caller key", True, "FULL"),
        ):
            path = Path(tmp) / f"{synchronous}-{keyed}.db"
            elapsed, latencies = run_ledger(path, calls, keyed=keyed, synchronous=synchronous, tag=name)  # type: ignore[arg-type]
            print(row(name, calls, elapsed, latencies, baseline))
        if options.processes > 1:
            path = Path(tmp) / "shared.db"
            SqliteLedger(path).close()
            elapsed, latencies = run_processes(path, calls, options.processes)
            name = f"{options.processes} processes, one ledger, NORMAL, key"
            print(row(name, calls * options.processes, elapsed, latencies, baseline))


if __name__ == "__main__":
    main()
