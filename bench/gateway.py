"""The gateway's cost: `python bench/gateway.py` prints the tables (`--profile`: where the time goes).

Latency: p50/p99 of sequential `echo` calls from the SDK's ClientSession to the calc example server,
directly and through `quiver serve` (SQLite ledger, and --no-ledger), over stdio and streamable HTTP
(calc serving HTTP itself for "direct"); the added latency is the difference with direct on the same
transport. Throughput: calls per second with 1 and 8 calls in flight (client, gateway and calc share the
machine's cores; the goals are stated for 2). Peers in the same run where they run (bench/_gateway_peers.py):
FastMCP's proxy (stdio and HTTP) and mcp-proxy (HTTP). `--baseline-src DIR` adds quiver serve from
another source tree (an exported older commit) to every round: before/after figures from one run.
Every variant runs once per round; the figures are medians over `--rounds`. With the PostgreSQL binaries
installed (/usr/lib/postgresql/*/bin) a throw-away server is started on this machine (tests/runtime/_pg_server.py,
durable: PostgreSQL's defaults) and `quiver serve` with the PostgreSQL ledger is a stdio row too
(`--postgres URL` uses a database of yours, `--postgres none` leaves the row out). A variant that fails or
runs past `--variant-timeout` in a round is reported in its row and the others go on; each transport's
table is printed as soon as its rounds are done, with the load average of that moment. Tokens: the initial
tools/list a client receives (preloaded tools + meta-tools) against every tool of the agent preloaded,
for the example project and the demo (115 tools); counted with quiver.tokens as `{"tools": [...]}`
payloads (name, description, inputSchema), the way compile counts them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
CALC = ROOT / "examples" / "servers" / "calc_server.py"
SERVE_PROJECT = ROOT / "examples" / "serve"
DEMO_MANIFEST = ROOT / "examples" / "demo" / "build" / "quiver" / "researcher.json"
CLIENT_TIMEOUT_S = 60.0  # the HTTP client's timeout per request
VARIANT_TIMEOUT_S = 600.0  # one variant's latency and throughput runs in one round


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
    args = ["-c", serve_command(http=False), str(manifest), str(ledger) if ledger is not None else ""]
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
    if any(b"create_proxy" in part for part in cmdline):
        return "fastmcp proxy"
    return "quiver serve" if b"-c" in cmdline else Path(cmdline[1].decode()).stem if len(cmdline) > 1 else str(pid)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Target:
    label: str
    transport: str  # "stdio" or "http"
    stdio: StdioServerParameters | None = None
    http: list[str] | None = None  # command serving http://127.0.0.1:PORT/mcp, "{port}" filled in
    environ: dict[str, str] | None = None  # the HTTP server's environment (default: env())
    tool: str = "calc__echo"
    problem: str | None = None  # why it is left out here


@dataclass
class Figures:
    latency: list[list[float]]  # per round: the sequential samples
    rates: dict[int, list[Rate]]  # concurrency -> per round


def serve_command(*, http: bool) -> str:
    """`quiver serve MANIFEST [--ledger L | --no-ledger] [--http 127.0.0.1:PORT]` without going through click."""
    address = "http='127.0.0.1:' + sys.argv[3], token='bench', " if http else ""
    return (
        "import sys; from pathlib import Path; from quiver.commands.serve import ServeOptions, run; "
        f"sys.exit(run(ServeOptions(Path(sys.argv[1]), {address}log_level='warning', ledger=sys.argv[2] or None, "
        "no_ledger=not sys.argv[2])).code)"
    )


def targets(
    manifest: Path,
    ledger: Path,
    baseline: Path | None,
    peers_python: str,
    mcp_proxy: str | None = None,
    postgres: tuple[str | None, str | None] = (None, "not asked for"),
) -> list[Target]:
    from _gateway_peers import fastmcp_command, fastmcp_problem, mcp_proxy_command

    def gateway(label: str, led: Path | str | None, *, http: bool, src: Path | None = None) -> Target:
        environ = env() | ({"PYTHONPATH": str(src)} if src else {})
        args = ["-c", serve_command(http=http), str(manifest), str(led) if led else ""]
        if not http:
            return Target(label, "stdio", stdio=StdioServerParameters(command=sys.executable, args=args, env=environ))
        return Target(label, "http", http=[sys.executable, *args, "{port}"], environ=environ)

    fastmcp = fastmcp_problem(peers_python)
    proxy, proxy_problem = mcp_proxy_command(peers_python, mcp_proxy)
    found: list[Target] = [
        Target("direct", "stdio", stdio=direct_params(), tool="echo"),
        gateway("quiver serve (SQLite ledger)", ledger, http=False),
        gateway("quiver serve --no-ledger", None, http=False),
    ]
    pg_url, pg_problem = postgres
    pg = gateway("quiver serve (PostgreSQL ledger)", pg_url or "", http=False)
    found.append(Target(pg.label, pg.transport, stdio=pg.stdio, problem=pg_problem))
    if baseline is not None:
        found.append(
            gateway(f"quiver serve (ledger), {baseline}", ledger.with_suffix(".base.db"), http=False, src=baseline)
        )
    found.append(
        Target(
            "FastMCP proxy", "stdio", tool="echo", problem=fastmcp,
            stdio=StdioServerParameters(command=peers_python, args=fastmcp_command(peers_python, CALC)[1:], env=env()),
        )
    )  # fmt: skip
    found += [
        Target("direct", "http", http=[sys.executable, str(CALC), "--http", "127.0.0.1:{port}"], tool="echo"),
        gateway("quiver serve (SQLite ledger)", ledger.with_suffix(".http.db"), http=True),
    ]
    if baseline is not None:
        found.append(
            gateway(f"quiver serve (ledger), {baseline}", ledger.with_suffix(".bhttp.db"), http=True, src=baseline)
        )
    found += [
        Target(
            "FastMCP proxy", "http", tool="echo", problem=fastmcp,
            http=fastmcp_command(peers_python, CALC, "127.0.0.1:{port}"),
        ),
        Target(
            "mcp-proxy", "http", tool="echo", problem=proxy_problem,
            http=[*(proxy or []), "--host", "127.0.0.1", "--port", "{port}", "--", sys.executable, str(CALC)],
        ),
    ]  # fmt: skip
    return found


async def measure(target: Target, calls: int, levels: list[int]) -> tuple[list[float], dict[int, Rate]]:
    async def body(session: ClientSession) -> tuple[list[float], dict[int, Rate]]:
        samples = await latency(target.tool, calls, warmup=50)(session)
        return samples, {c: await throughput(target.tool, calls * 2, c)(session) for c in levels}

    if target.stdio is not None:
        result: tuple[list[float], dict[int, Rate]] = await with_session(target.stdio, body)
        return result
    import httpx2
    from _gateway_peers import free_port, http_server
    from mcp.client.streamable_http import streamable_http_client

    assert target.http is not None
    port = free_port()
    command = [part.replace("{port}", str(port)) for part in target.http]
    with http_server(command, port, target.environ or env(), ROOT) as url:
        async with (  # a loaded machine can hold one call past httpx's 5 s default: the variant's timeout rules
            httpx2.AsyncClient(headers={"Authorization": "Bearer bench"}, timeout=CLIENT_TIMEOUT_S) as client,
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session)


async def main(
    calls: int,
    levels: list[int],
    rounds: int,
    baseline: Path | None,
    peers_python: str,
    transports: list[str],
    mcp_proxy: str | None = None,
    postgres: str | None = None,
    variant_timeout_s: float = VARIANT_TIMEOUT_S,
) -> None:
    print(f"cores: {os.cpu_count()}, load average {load_average():.2f}, python {sys.version.split()[0]}")
    print(f"{calls} sequential calls per latency run, {calls * 2} per throughput run; medians of {rounds} round(s),")
    print("every variant once per round; added = the variant's p50 minus direct's over the same transport")
    with tempfile.TemporaryDirectory() as tmp, postgres_ledger(postgres) as pg:
        manifest = compile_example(Path(tmp))
        every = targets(manifest, Path(tmp) / "ledger.db", baseline, peers_python, mcp_proxy, pg)
        for transport in transports:  # each table as soon as its rounds are done
            found = [t for t in every if t.transport == transport]
            figures = {id(t): Figures([], {c: [] for c in levels}) for t in found}
            failures: dict[int, list[str]] = {id(t): [] for t in found}
            for number in range(1, rounds + 1):  # every variant once per round: drift hits them alike
                for target in found:
                    if target.problem is not None:
                        continue
                    try:
                        with anyio.fail_after(variant_timeout_s):
                            samples, rates = await measure(target, calls, levels)
                    except Exception as exc:  # a slow or broken variant costs its own row, not the run
                        failures[id(target)].append(f"round {number}: {_reason(exc, variant_timeout_s)}")
                        continue
                    figures[id(target)].latency.append(samples)
                    for c, rate in rates.items():
                        figures[id(target)].rates[c].append(rate)
            print()
            print_table(transport, found, figures, failures, levels)
        goals()
        from _gateway_tokens import initial_tools

        tokens = [
            (label, *await initial_tools(path))
            for label, path in (("examples/serve", manifest), ("demo researcher", DEMO_MANIFEST))
        ]
    print()
    from _gateway_tokens import print_tokens

    print_tokens(tokens, table)


def print_table(
    transport: str, found: list[Target], figures: dict[int, Figures], failures: dict[int, list[str]], levels: list[int]
) -> None:
    rows: list[list[Any]] = []
    direct = next(t for t in found if t.label == "direct")
    base = median_p(figures[id(direct)].latency, 0.5) if figures[id(direct)].latency else None
    for target in found:
        fig, failed = figures[id(target)], failures[id(target)]
        if target.problem is not None or not fig.latency:
            why = f"not run: {target.problem}" if target.problem is not None else f"failed: {'; '.join(failed)}"
            rows.append([target.label, *["-"] * (3 + len(levels)), why])
            continue
        p50, p99 = median_p(fig.latency, 0.5), median_p(fig.latency, 0.99)
        rates = [statistics.median(r.calls_per_s for r in fig.rates[c]) for c in levels]
        cpu = fig.rates[levels[-1]][-1].cpu_ms_per_call if transport == "stdio" else {}
        note = ", ".join(f"{k} {v:.2f}" for k, v in sorted(cpu.items()))
        if failed:
            note = f"{note}; {len(fig.latency)} round(s) counted, failed: {'; '.join(failed)}".lstrip("; ")
        added = "" if target is direct or base is None else f"{(p50 - base) * 1000:+.3f}"
        rows.append([target.label, p50 * 1000, p99 * 1000, added, *rates, note])
    head = [f"calc echo over {transport}", "p50 ms", "p99 ms", "added ms", *(f"c={c} /s" for c in levels)]
    cpu_head = f"CPU ms per call at c={levels[-1]}" if transport == "stdio" else ""
    table([*head, f"{cpu_head} (load {load_average():.2f})".lstrip()], rows)


def _reason(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"over {timeout_s:.0f} s"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:120]}" if text else type(exc).__name__


def load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


@contextlib.contextmanager
def postgres_ledger(given: str | None) -> Iterator[tuple[str | None, str | None]]:
    """(URL of a migrated ledger database, None) for the PostgreSQL row, or (None, why it is left out):
    `given` (a URL or "none"), else a throw-away durable server started here from the PostgreSQL binaries."""
    if given == "none":
        yield None, "--postgres none"
        return
    try:
        from quiver.runtime.ledger_postgres import migrate_schema
    except ImportError as exc:
        yield None, f"the postgres extra is not installed ({exc.name})"
        return
    if given:
        migrate_schema(given)
        yield given, None
        return
    import glob

    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        yield None, "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin; or pass --postgres URL)"
        return
    from ledger import start_postgres  # bench/ledger.py's throw-away server (tests/runtime/_pg_server.py)

    url, stop = start_postgres()
    try:
        migrate_schema(url)
        yield url, None
    finally:
        stop()


def median_p(rounds: list[list[float]], q: float) -> float:
    return statistics.median(pct(samples, q) for samples in rounds)


def goals() -> None:
    print()
    print("goals (issue 24): stdio with the SQLite ledger: added p50 < 0.8 ms, >= 600 calls/s at c=1 and >= 1,000")
    print("at c=8; HTTP with the ledger: added p50 < 1.0 ms; the PostgreSQL ledger >= 700 calls/s at c=8")


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
    parser.add_argument("--concurrency", default="1,8", help="calls in flight per throughput run (default 1,8)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the figures are medians (default 3)")
    parser.add_argument("--baseline-src", type=Path, help="also run quiver serve from this src dir (before/after)")
    parser.add_argument("--peers-python", help="a Python with fastmcp / mcp-proxy (else QUIVER_BENCH_PEERS_PYTHON)")
    parser.add_argument("--mcp-proxy", help="the mcp-proxy command (else QUIVER_BENCH_MCP_PROXY, else found)")
    parser.add_argument("--transports", default="stdio,http", help="which to measure (default stdio,http)")
    parser.add_argument("--postgres", help="ledger database URL for the PostgreSQL row, or `none` (default: start one)")
    parser.add_argument("--variant-timeout", type=float, default=VARIANT_TIMEOUT_S, help="seconds per variant a round")
    parser.add_argument("--profile", action="store_true", help="print the gateway's top functions (cProfile)")
    parser.add_argument("--top", type=int, default=30, help="functions per --profile table (default 30)")
    parser.add_argument("--profile-out", type=Path, help="keep --profile's cProfile stats in this file")
    options = parser.parse_args()
    if options.baseline_src is not None:  # a tree's root (`git archive | tar -x`) means its src/
        if (options.baseline_src / "src" / "quiver").is_dir():
            options.baseline_src = options.baseline_src / "src"
        elif not (options.baseline_src / "quiver").is_dir():  # else PYTHONPATH finds none: the installed one runs
            parser.error(f"--baseline-src {options.baseline_src}: no quiver package there or in its src/")
    sys.path.insert(0, str(Path(__file__).parent))
    if options.profile:  # its own script (it uses this one's helpers): run as a process, so no import circle
        keep = ["--profile-out", str(options.profile_out)] if options.profile_out else []
        profiler = [sys.executable, str(Path(__file__).parent / "_gateway_profile.py"), str(options.calls)]
        sys.exit(subprocess.call([*profiler, str(options.top), *keep]))
    else:
        from _gateway_peers import peer_python

        levels = [int(c) for c in options.concurrency.split(",")]
        peers = peer_python(options.peers_python)
        transports = options.transports.split(",")
        args = (options.calls, levels, options.rounds, options.baseline_src, peers, transports, options.mcp_proxy)
        anyio.run(main, *args, options.postgres, options.variant_timeout)
