"""Print wall time and peak memory of `quiver compile` on the demo and on a generated large repository.

    python bench/compile.py [--agents 1000] [--servers 50] [--tools 200] [--repeat 3] [--profile]

The large repository: N agents, S servers x T tools each. Agents mix the shapes seen in real repos:
most name a handful of tools explicitly, some take one to three whole servers with `server/*`.
Each run is a fresh `quiver compile` process: cold (no `.quiver/cache`, no build output), then warm (as a
developer's second run); the large case's medians over `--repeat` pairs, in wall and in CPU seconds (user +
system of the child: what a shared machine disturbs least). Peak MiB is the largest child so far; `load 1m`
is the 1-minute load average (`os.getloadavg()`) after the run (the large case: the highest of its runs).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Bytecode written, as after a wheel install (an editable install would otherwise recompile quiver per start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _generate import generate  # noqa: E402
from _profile import print_profile  # noqa: E402


def timed_compile(project: Path) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MiB of the child, exit code, CPU seconds of the child: user + system, which a
    shared machine disturbs less than the wall time)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "--project", str(project)],
        capture_output=True,
        text=True,
        env=ENV,
    )
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0,):
        print(proc.stderr[-2000:], file=sys.stderr)
    return wall, max(usage.ru_maxrss, before) / 1024, proc.returncode, usage.ru_utime + usage.ru_stime - cpu


def load() -> float:
    """The machine's 1-minute load average after a run (on 2 cores, above ~1 the wall times are disturbed;
    the large case prints the highest of its runs)."""
    return os.getloadavg()[0]


def tree_sha(out: Path) -> str:
    """sha256 over the sorted (name, sha256) of every file compile wrote."""
    digest = hashlib.sha256()
    for path in sorted(out.rglob("*")):
        if path.is_file():
            digest.update(f"{path.relative_to(out)}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--tools", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="also profile one cold and one warm compile")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the large case (medians are printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        shutil.copytree(ROOT / "examples" / "demo", demo, ignore=shutil.ignore_patterns("build", ".quiver"))
        print(f"{'case':<44} {'wall s':>8} {'cpu s':>7} {'peak MiB':>9} {'load 1m':>8}")
        wall, peak, _, cpu = timed_compile(demo)
        print(f"{'demo (4 agents), cold token cache':<44} {wall:8.2f} {cpu:7.2f} {peak:9.0f} {load():8.2f}")
        wall, peak, _, cpu = timed_compile(demo)
        print(f"{'demo (4 agents), warm token cache':<44} {wall:8.2f} {cpu:7.2f} {peak:9.0f} {load():8.2f}")
        big = Path(tmp) / "big"
        big.mkdir()
        start = time.perf_counter()
        generate(big, args.agents, args.servers, args.tools)
        gen = time.perf_counter() - start
        n_tools = args.servers * args.tools
        label = f"{args.agents} agents, {args.servers}x{args.tools} tools"
        runs: dict[str, list[tuple[float, float, int, float]]] = {"cold": [], "warm": []}
        loads: dict[str, list[float]] = {"cold": [], "warm": []}
        for _ in range(args.repeat):
            shutil.rmtree(big / ".quiver", ignore_errors=True)
            shutil.rmtree(big / "build", ignore_errors=True)
            for case in ("cold", "warm"):
                runs[case].append(timed_compile(big))
                loads[case].append(load())
        for case, found in runs.items():
            wall = statistics.median(r[0] for r in found)
            cpu = statistics.median(r[3] for r in found)
            peak, code = max(r[1] for r in found), max(r[2] for r in found)
            print(f"{label + ', ' + case:<44} {wall:8.2f} {cpu:7.2f} {peak:9.0f} {max(loads[case]):8.2f}")
        out = big / "build" / "quiver"
        size = sum(p.stat().st_size for p in out.glob("*.json")) / 1048576
        print(f"(generated in {gen:.1f} s; {n_tools:,} tools in the lock; {size:.0f} MiB of manifests; exit {code})")
        print(f"manifests sha256 (byte-identity across changes): {tree_sha(out)}")
        if args.profile:
            shutil.rmtree(big / ".quiver", ignore_errors=True)
            print_profile(["compile", "-q", "--project", str(big)])  # cold
            print_profile(["compile", "-q", "--project", str(big)])  # warm


if __name__ == "__main__":
    main()
