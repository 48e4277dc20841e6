"""Print wall time and peak memory of `quiver compile` on the demo and on a generated large repository.

    python bench/compile.py [--agents 1000] [--servers 50] [--tools 200] [--profile]

The large repository: N agents, S servers x T tools each. Agents mix the shapes seen in real repos:
most name a handful of tools explicitly, some take one to three whole servers with `server/*`.
Each run is a fresh `quiver compile` process (cold start, token cache warm as in a developer's
second run, then cold with the cache removed).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
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


def timed_compile(project: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB of the child, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "--project", str(project)],
        capture_output=True,
        text=True,
        env=ENV,
    )
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0,):
        print(proc.stderr[-2000:], file=sys.stderr)
    return wall, max(peak, before) / 1024, proc.returncode


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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        shutil.copytree(ROOT / "examples" / "demo", demo, ignore=shutil.ignore_patterns("build", ".quiver"))
        print(f"{'case':<44} {'wall s':>8} {'peak MiB':>9}")
        wall, peak, _ = timed_compile(demo)
        print(f"{'demo (4 agents), cold token cache':<44} {wall:8.2f} {peak:9.0f}")
        wall, peak, _ = timed_compile(demo)
        print(f"{'demo (4 agents), warm token cache':<44} {wall:8.2f} {peak:9.0f}")
        big = Path(tmp) / "big"
        big.mkdir()
        start = time.perf_counter()
        generate(big, args.agents, args.servers, args.tools)
        gen = time.perf_counter() - start
        n_tools = args.servers * args.tools
        label = f"{args.agents} agents, {args.servers}x{args.tools} tools"
        wall, peak, code = timed_compile(big)
        print(f"{label + ', cold':<44} {wall:8.2f} {peak:9.0f}")
        wall, peak, code = timed_compile(big)
        print(f"{label + ', warm':<44} {wall:8.2f} {peak:9.0f}")
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
