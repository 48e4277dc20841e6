"""The gateway's cost: `python bench/gateway.py` prints the tables.

Latency: p50/p99 of sequential `echo` calls from the SDK's ClientSession to the calc example server over
stdio, directly and through `quiver serve` (stdio, DirectExecutor); the added latency is the difference.
Throughput: calls per second through the gateway with N calls in flight (client, gateway and calc share
the machine's cores; the goal is stated for 2). Tokens: the initial tools/list a client receives
(preloaded tools + meta-tools) against every tool of the agent preloaded, for the example project and
the demo (115 tools); counted with quiver.tokens as `{"tools": [...]}` payloads (name, description,
inputSchema), the way compile counts them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
CALC = ROOT / "examples" / "servers" / "calc_server.py"
SERVE_PROJECT = ROOT / "examples" / "serve"
DEMO_MANIFEST = ROOT / "examples" / "demo" / "build" / "quiver" / "researcher.json"
# `quiver serve MANIFEST` without going through click (works before cli.py has the command).
SERVE = (
    "import sys; from quiver.commands.serve import run; "
    "sys.exit(run(sys.argv[1], log_level='warning', ledger=sys.argv[2] or None, no_ledger=not sys.argv[2]))"
)


def compile_example(out: Path) -> Path:
    """examples/serve compiled afresh into `out` (so the bench never reads a stale manifest)."""
    import shutil

    from quiver.commands import compile as cmd

    root = out / "project"
    shutil.copytree(SERVE_PROJECT, root, ignore=shutil.ignore_patterns("build", ".quiver"))
    result = cmd.build(root)
    if result.errors:
        raise SystemExit(f"compile failed: {[e.one_line() for e in result.errors]}")
    cmd.write(root, result, result.project.config.out)
    return root / result.project.config.out / "assistant.json"


def env() -> dict[str, str]:
    return {**os.environ, "PYTHON": sys.executable, "CALC_LOG_LEVEL": "WARNING", "NOTES_LOG_LEVEL": "WARNING"}


def direct_params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(CALC)], env=env(), cwd=str(ROOT))


def gateway_params(manifest: Path, ledger: Path | None) -> StdioServerParameters:
    """`quiver serve` with the SQLite ledger at `ledger` (the default mode), or without a ledger when None."""
    args = ["-c", SERVE, str(manifest), str(ledger) if ledger is not None else ""]
    return StdioServerParameters(command=sys.executable, args=args, env=env(), cwd=str(ROOT))


async def with_session(params: StdioServerParameters, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


def latency(tool: str, calls: int, warmup: int) -> Callable[[ClientSession], Awaitable[list[float]]]:
    async def run(session: ClientSession) -> list[float]:
        for _ in range(warmup):
            await session.call_tool(tool, {"text": "ping"})
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            result = await session.call_tool(tool, {"text": "ping"})
            samples.append(time.perf_counter() - start)
            assert not result.is_error
        return samples

    return run


def throughput(tool: str, calls: int, concurrency: int) -> Callable[[ClientSession], Awaitable[Rate]]:
    async def run(session: ClientSession) -> Rate:
        for _ in range(20):
            await session.call_tool(tool, {"text": "ping"})
        remaining = calls

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                result = await session.call_tool(tool, {"text": "ping"})
                assert not result.is_error

        servers = descendants(os.getpid())
        cpu_before = {pid: cpu_seconds(pid) for pid in servers}
        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(worker)
        elapsed = time.perf_counter() - start
        cpu_ms = {name(pid): (cpu_seconds(pid) - cpu_before[pid]) * 1000 / calls for pid in servers}
        return Rate(calls / elapsed, cpu_ms)

    return run


@dataclass(frozen=True)
class Rate:
    calls_per_s: float
    cpu_ms_per_call: dict[str, float]  # per server process (Linux /proc; empty elsewhere)


def descendants(pid: int) -> list[int]:
    """Child processes of `pid` and their children, from /proc (empty where there is no /proc)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    parents: dict[int, int] = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found += children
        frontier += children
    return found


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def name(pid: int) -> str:
    from quiver.runtime._guard import GUARD

    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    if GUARD.encode() in cmdline:
        return "upstream guard"
    return "quiver serve" if b"-c" in cmdline else Path(cmdline[1].decode()).stem if len(cmdline) > 1 else str(pid)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def initial_tools(manifest: Path) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]], dict[str, Any]]:
    """(the client's first tools/list, the initialize instructions, every tool preloaded, compile's budget)."""
    import json

    from mcp import Client

    from quiver.runtime._manifest import load_manifest
    from quiver.runtime.gateway import Gateway

    loaded = load_manifest(manifest)
    async with Gateway(loaded, environ={}) as gateway, Client(gateway.server, mode="legacy") as client:
        listed = (await client.list_tools()).tools
        instructions = client.instructions or ""
    received = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
    everything = [t.exposed_definition() for t in loaded.tools]
    return received, instructions, everything, json.loads(manifest.read_text())["budget"]


async def main(calls: int, concurrency: int) -> None:
    from quiver.tokens import count_tools_payload, counter, encoder_name

    with tempfile.TemporaryDirectory() as tmp:
        manifest = compile_example(Path(tmp))
        direct = await with_session(direct_params(), latency("echo", calls, warmup=50))
        ledger = Path(tmp) / "ledger.db"
        proxied = await with_session(gateway_params(manifest, ledger), latency("calc__echo", calls, warmup=50))
        bare = await with_session(gateway_params(manifest, None), latency("calc__echo", calls, warmup=50))
        direct_rate = await with_session(direct_params(), throughput("echo", calls * 2, concurrency))
        proxied_rate = await with_session(
            gateway_params(manifest, ledger), throughput("calc__echo", calls * 2, concurrency)
        )
        bare_rate = await with_session(gateway_params(manifest, None), throughput("calc__echo", calls * 2, concurrency))
        tokens = []
        for label, path in (("examples/serve", manifest), ("demo researcher", DEMO_MANIFEST)):
            tokens.append((label, *await initial_tools(path)))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cores: {os.cpu_count()}, load average {load:.2f}, python {sys.version.split()[0]}")
    print(f"{calls} sequential calls per latency run; {calls * 2} calls at {concurrency} in flight per throughput run")
    print()
    table(
        ["calc echo over stdio", "p50 ms", "p99 ms", "mean ms"],
        [
            ["direct", *stats(direct)],
            ["quiver serve (SQLite ledger)", *stats(proxied)],
            ["quiver serve --no-ledger", *stats(bare)],
            ["added, with the ledger", *(p - d for p, d in zip(stats(proxied), stats(direct), strict=True))],
            ["added, --no-ledger", *(p - d for p, d in zip(stats(bare), stats(direct), strict=True))],
        ],
    )
    added = pct(proxied, 0.5) - pct(direct, 0.5)
    print(f"goal: p50 added < 2 ms: {'met' if added < 0.002 else 'NOT met'}")
    print()
    rows: list[list[Any]] = []
    for label, rate in (
        ("direct", direct_rate),
        ("quiver serve (SQLite ledger)", proxied_rate),
        ("quiver serve --no-ledger", bare_rate),
    ):
        cpu = ", ".join(f"{k} {v:.2f}" for k, v in sorted(rate.cpu_ms_per_call.items()))
        rows.append([label, rate.calls_per_s, cpu or "n/a"])
    table(["calc echo over stdio", "calls/s", "server CPU ms per call"], rows)
    goal = "met" if proxied_rate.calls_per_s >= 500 else "NOT met"
    print(f"goal: >= 500 calls/s through the gateway on 2 cores: {goal}")
    print()
    print(f"tokens ({encoder_name()}): the client's first tools/list (+ the server index in its instructions)")
    print("against every tool of the agent preloaded; compile's budget of the same manifest for comparison")
    rows = []
    for label, received, instructions, everything, budget in tokens:
        first, full = count_tools_payload(received), count_tools_payload(everything)
        index = counter().count(instructions) if instructions else 0
        rows.append(
            [
                label,
                f"{len(received)} tools",
                first,
                index,
                f"{len(everything)} tools",
                full,
                f"{1 - (first + index) / full:.1%}",
                f"{budget['initial_tokens']} / {budget['baseline_tokens']}",
            ]
        )
    table(["manifest", "initial", "tokens", "+ index", "all preloaded", "tokens", "saving", "budget"], rows)


def stats(samples: list[float]) -> list[float]:
    return [pct(samples, 0.5) * 1000, pct(samples, 0.99) * 1000, statistics.fmean(samples) * 1000]


def table(header: list[str], rows: list[list[Any]]) -> None:
    cells = [
        header,
        *[
            [
                f"{c:.3f}" if isinstance(c, float) and c < 100 else f"{c:.0f}" if isinstance(c, float) else str(c)
                for c in row
            ]
            for row in rows
        ],
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000, help="sequential calls per latency run (default 1000)")
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight for throughput (default 16)")
    options = parser.parse_args()
    anyio.run(main, options.calls, options.concurrency)
