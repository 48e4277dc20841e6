"""Print start-up figures side by side: the interpreter floors, `quiver --help`, `quiver rule`, and `quiver lint`
on the demo and on the 112 real awesome-copilot agents, each cold (no `.quiver/cache`) and warm.

    python bench/startup.py [--repeat 5]

Each lint is also timed with `QUIVER_JOBS=1` (one process, no forked workers), and the peak RSS of a cold
lint is printed (the largest of the process and its workers).

Every figure is the median wall time of fresh processes, with bytecode written (`PYTHONDONTWRITEBYTECODE` is
removed from the children's environment: an editable install would otherwise recompile quiver on every start),
after two unmeasured runs. `agnix` (a Rust linter of agent files) is timed on the same agents when it is on PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("QUIVER_CORPUS", ROOT.parent / "shared" / "corpus"))
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_wall(argv: list[str], repeat: int, *, fresh: Path | None = None, env: dict[str, str] | None = None) -> float:
    """Median wall seconds of `argv` in a fresh process; with `fresh`, its `.quiver/cache` removed before each."""
    return measure(argv, repeat, fresh=fresh, env=env)[0]


def measure(
    argv: list[str], repeat: int, *, fresh: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """(median wall seconds, largest peak RSS in MB of the process and its workers) over `repeat` runs."""
    times, peaks = [], []
    for i in range(repeat + 2):
        if fresh is not None:
            shutil.rmtree(fresh / ".quiver" / "cache", ignore_errors=True)
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or ENV)
        _, _, usage = os.wait4(child.pid, 0)
        if i >= 2:
            times.append(time.perf_counter() - start)
            peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(times), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    py, n = sys.executable, args.repeat
    lint = [py, "-m", "quiver", "lint", "--fail-on", "never", "--format", "json", "--project"]
    rows: list[tuple[str, float | None, float | None]] = [
        ("python -c pass", median_wall([py, "-c", "pass"], n), None),
        ("python -c 'import click, yaml'", median_wall([py, "-c", "import click, yaml"], n), None),
        ("quiver --help", median_wall([py, "-m", "quiver", "--help"], n), None),
        ("quiver rule AGT015", median_wall([py, "-m", "quiver", "rule", "AGT015"], n), None),
    ]
    peaks: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        shutil.copytree(ROOT / "examples" / "demo", demo, ignore=shutil.ignore_patterns("build", "cache"))
        cases = [("quiver lint: demo (4 agents, 207 tools)", demo)]
        agents = sorted((CORPUS / "awesome-copilot" / "agents").glob("*.agent.md"))
        real = Path(tmp) / "real"
        if agents:
            (real / ".github" / "agents").mkdir(parents=True)
            for path in agents:
                shutil.copyfile(path, real / ".github" / "agents" / path.name)
            cases.append((f"quiver lint: {len(agents)} awesome-copilot agents", real))
        one = {**ENV, "QUIVER_JOBS": "1"}
        for label, root in cases:
            cold, peak = measure([*lint, str(root)], n, fresh=root)
            peaks[label] = peak
            rows.append((label, cold, median_wall([*lint, str(root)], n)))
            rows.append(
                (
                    "  the same, one process (QUIVER_JOBS=1)",
                    median_wall([*lint, str(root)], n, fresh=root, env=one),
                    None,
                )
            )
        agnix = shutil.which("agnix")
        if agnix and agents:
            rows.append((f"agnix: {len(agents)} awesome-copilot agents", median_wall([agnix, str(real)], n), None))
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'median wall s (' + str(n) + ' runs)':<48} {'cold':>8} {'warm':>8}")
    for label, cold, warm in rows:
        print(f"{label:<48} {cold:8.3f} {'' if warm is None else f'{warm:8.3f}':>8}")
    for label, peak in peaks.items():
        print(f"peak RSS, cold {label.removeprefix('quiver lint: ')}: {peak:.0f} MB")
    if not shutil.which("agnix"):
        print("(agnix not on PATH: not timed)")


if __name__ == "__main__":
    main()
