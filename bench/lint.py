"""Print cold wall time of `quiver lint` (a fresh process each run, interpreter start-up included).

    python bench/lint.py [--repeat 5] [--profile]

Cases: the demo; generated repositories of 1,000 agents with 1,000 and with 10,000 tools (the growth
factor between them is printed); 1,000 copies of the real awesome-copilot agents when the corpus is
found (QUIVER_CORPUS, default ../shared/corpus); and `python -c pass` for the interpreter's own start-up.
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT / "bench"))

from _generate import generate  # noqa: E402
from _profile import print_profile  # noqa: E402

CORPUS = Path(os.environ.get("QUIVER_CORPUS", ROOT.parent / "shared" / "corpus"))


def corpus_copies(target: Path, count: int) -> bool:
    """`count` awesome-copilot agents (the 112 repeated) in `target/.github/agents`; False without the corpus."""
    sources = sorted((CORPUS / "awesome-copilot" / "agents").glob("*.agent.md"))
    if not sources:
        return False
    agents = target / ".github" / "agents"
    agents.mkdir(parents=True)
    for i in range(count):
        shutil.copyfile(sources[i % len(sources)], agents / f"{i:04d}-{sources[i % len(sources)].name}")
    return True


def cold(args: list[str], repeat: int, *, fresh: Path | None = None) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system: what a shared machine disturbs least) of a fresh
    process; with `fresh`, its `.quiver/cache` is removed before each run."""
    times, cpus = [], []
    for _ in range(repeat):
        if fresh is not None:
            shutil.rmtree(fresh / ".quiver" / "cache", ignore_errors=True)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], capture_output=True, check=False, env=ENV)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime)
    return statistics.median(times), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="also profile one cold lint of 10,000 tools")
    args = parser.parse_args()
    lint = ["-m", "quiver", "lint", "--fail-on", "never", "--format", "json", "--project"]
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        shutil.copytree(ROOT / "examples" / "demo", demo, ignore=shutil.ignore_patterns("build"))
        subprocess.run(
            [sys.executable, "-m", "quiver", "compile", "-q", "--project", str(demo)], check=True, capture_output=True
        )
        small, large = Path(tmp) / "small", Path(tmp) / "large"
        small.mkdir()
        large.mkdir()
        generate(small, 1000, 10, 100)
        generate(large, 1000, 50, 200)
        real = Path(tmp) / "real"
        cases = [("demo (4 agents, 207 tools)", demo), ("1,000 agents, 1,000 tools", small)]
        cases.append(("1,000 agents, 10,000 tools", large))
        if corpus_copies(real, 1000):
            cases.append(("1,000 awesome-copilot agents (corpus)", real))
        print(f"load average (1 min) before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"{'case':<56} {'median wall s':>14} {'cpu s':>7} {'load':>6}")
        floors = {
            "python -c pass (interpreter start-up)": ["-c", "pass"],
            "quiver --version": ["-m", "quiver", "--version"],
        }
        for label, argv in floors.items():
            wall, cpu = cold(argv, args.repeat)
            print(f"{label:<56} {wall:14.3f} {cpu:7.3f} {os.getloadavg()[0]:6.2f}")
        for label, root in cases:
            repeat = args.repeat if root is demo else max(1, args.repeat // 2)
            first, first_cpu = cold([*lint, str(root)], repeat, fresh=root)
            warm, warm_cpu = cold([*lint, str(root)], repeat)
            load = os.getloadavg()[0]  # the 1-minute load average as the case ends: how far to trust its wall time
            print(f"{'quiver lint: ' + label + ', no cache':<56} {first:14.3f} {first_cpu:7.3f} {load:6.2f}")
            print(f"{'quiver lint: ' + label + ', warm cache':<56} {warm:14.3f} {warm_cpu:7.3f} {load:6.2f}")
            if root is small:
                t_small = first
            if root is large:
                print(f"growth factor 1,000 -> 10,000 tools (no cache): {first / t_small:.2f}x")
        if args.profile:
            shutil.rmtree(large / ".quiver" / "cache", ignore_errors=True)
            print_profile([*lint[2:], str(large)])


if __name__ == "__main__":
    main()
