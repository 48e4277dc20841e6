"""`bench/gateway.py --profile`: `quiver serve` (stdio, SQLite ledger) under cProfile once warm (start-up
and warm-up left out), its top functions, and its time per call by package (waiting in epoll left out)."""

from __future__ import annotations

import collections
import os
import pstats
import signal
import sys
import tempfile
from pathlib import Path

import anyio
from gateway import ROOT, compile_example, descendants, env, latency, name, pct, with_session
from mcp import ClientSession, StdioServerParameters

PROFILED = (  # the profiler starts on SIGUSR1: after start-up and the warm-up calls
    "import cProfile, signal, sys; from pathlib import Path\n"
    "from quiver.commands.serve import ServeOptions, run; profile = cProfile.Profile()\n"
    "signal.signal(signal.SIGUSR1, lambda *_: profile.enable())\n"
    "try:\n    code = run(ServeOptions(Path(sys.argv[1]), log_level='warning', ledger=sys.argv[2])).code\n"
    "finally:\n    profile.disable(); profile.dump_stats(sys.argv[3])\n"
    "sys.exit(code)"
)


async def profile(calls: int, top: int, out: Path | None) -> None:
    """`quiver serve` (stdio, SQLite ledger) under cProfile for `calls` sequential calls after 50 unprofiled
    ones: the top functions, then the shares per package."""
    with tempfile.TemporaryDirectory() as tmp:
        manifest = compile_example(Path(tmp))
        stats_file = out or Path(tmp) / "serve.prof"
        args = ["-c", PROFILED, str(manifest), str(Path(tmp) / "ledger.db"), str(stats_file)]
        params = StdioServerParameters(command=sys.executable, args=args, env=env(), cwd=str(ROOT))

        async def body(session: ClientSession) -> list[float]:
            for _ in range(50):
                await session.call_tool("calc__echo", {"text": "ping"})
            for pid in descendants(os.getpid()):
                if name(pid) == "quiver serve":
                    os.kill(pid, signal.SIGUSR1)
            await anyio.sleep(0.1)
            return await latency("calc__echo", calls, warmup=0)(session)

        samples = await with_session(params, body)
        print(f"{calls} sequential calls through quiver serve (stdio, SQLite ledger) under cProfile:")
        print(f"p50 {pct(samples, 0.5) * 1000:.3f} ms (profiling slows it down)")
        stats = pstats.Stats(str(stats_file))
        for order in ("tottime", "cumulative"):
            stats.sort_stats(order).print_stats(top)
        shares(stats, calls)


def shares(stats: pstats.Stats, calls: int) -> None:
    """The profiled time (waiting in epoll left out) per package, per call."""
    groups: collections.Counter[str] = collections.Counter()
    for (file, _line, function), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "poll" in function:
            continue
        if "site-packages/" in file:
            parts = file.split("site-packages/", 1)[1].split("/")
            key = "/".join(parts[:2]) if parts[0] in ("mcp", "quiver") else parts[0]
        elif "/quiver/" in file:
            key = "quiver/" + file.rsplit("/quiver/", 1)[1]
        else:
            key = "builtins: " + function if file == "~" else "stdlib: " + Path(file).name
        groups[key] += tottime
    total = sum(groups.values())
    print(f"{total / calls * 1e6:.0f} us of profiled wall time per call by package (cProfile inflates small functions;")
    print("a pipe write includes the time the reader it wakes may run first on a busy machine):")
    for key, seconds in groups.most_common(25):
        print(f"  {seconds / total:6.1%}  {seconds / calls * 1e6:7.1f} us  {key}")


if __name__ == "__main__":  # `bench/gateway.py --profile CALLS` runs this: python bench/_gateway_profile.py CALLS TOP
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("calls", type=int)
    parser.add_argument("top", type=int)
    parser.add_argument("--profile-out", type=Path, default=None)
    given = parser.parse_args()
    anyio.run(profile, given.calls, given.top, given.profile_out)
