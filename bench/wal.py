"""The SQLite ledger's WAL under steady calls: `python bench/wal.py [--calls 20000] [--baseline-src DIR]`.

Sequential `calc__echo` calls through `quiver serve` (stdio, SQLite ledger) on examples/serve; prints the
WAL file's size every `--every` calls and the p50 of each quarter. A WAL that never restarts grows by
every frame written (about 22 KB a call before the fix in docs/decisions.md, "SQLite WAL: checkpoints,
restarts, pages"); one that restarts stays near its size at a restart. `--baseline-src` runs an older
source tree (an exported commit) as well.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from gateway import compile_example, gateway_params, with_session
from mcp import ClientSession


async def run(manifest: Path, ledger: Path, calls: int, every: int) -> tuple[list[float], list[int]]:
    wal = Path(f"{ledger}-wal")
    sizes: list[int] = []

    async def body(session: ClientSession) -> list[float]:
        samples = []
        for n in range(1, calls + 1):
            start = time.perf_counter()
            await session.call_tool("calc__echo", {"text": "ping"})
            samples.append(time.perf_counter() - start)
            if n % every == 0:
                sizes.append(wal.stat().st_size if wal.exists() else 0)
        return samples

    samples: list[float] = await with_session(gateway_params(manifest, ledger), body)
    return samples, sizes


def report(label: str, samples: list[float], sizes: list[int], every: int) -> None:
    print(f"{label}")
    print(f"  WAL KiB every {every:,} calls: {', '.join(str(size // 1024) for size in sizes)}")
    quarter = max(1, len(samples) // 4)
    p50s = [statistics.median(samples[i : i + quarter]) * 1e3 for i in range(0, len(samples), quarter)]
    print(f"  p50 ms per quarter: {', '.join(f'{p:.3f}' for p in p50s)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=2_000)
    parser.add_argument("--baseline-src", type=Path, help="also run quiver serve from this src dir")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        manifest = compile_example(Path(tmp))
        runs = [("quiver serve (this tree)", None)]
        if options.baseline_src is not None:
            runs.append((f"quiver serve ({options.baseline_src})", options.baseline_src))
        for n, (label, src) in enumerate(runs):
            environ = dict(os.environ)
            if src is not None:
                os.environ["PYTHONPATH"] = str(src)  # the gateway's environment is built from ours
            try:
                samples, sizes = anyio.run(run, manifest, Path(tmp) / f"ledger{n}.db", options.calls, options.every)
            finally:
                os.environ.clear()
                os.environ.update(environ)
            report(label, samples, sizes, options.every)


if __name__ == "__main__":
    main()
