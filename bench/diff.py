"""Contract diff over a real history: consecutive github-mcp-server tool-snapshot commits, parent vs commit.

    python bench/diff.py [--repo PATH] [--commits 100] [--path pkg/github/__toolsnaps__]

`--repo` is a clone (bare is fine) of github/github-mcp-server. Prints: reading the snapshots through git;
the in-process engine over every pair (total, per diff, slowest, aborted = pairs that raised); the batch
CLI (`quiver diff --commits`) over the same range; and one `quiver diff OLD NEW` CLI call on the pair of
the range with the most findings (median of 5 after a warm-up, bytecode written as after a wheel install).
Issue 23 goals (quiet machine): one CLI call < 0.15 s; `--commits` over 100 commits < 1.5 s; 0 aborted. The
1-minute load average is printed at the end: figures taken under load are not final.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from quiver.contract.diff import diff_catalogs  # noqa: E402
from quiver.contract.git import SnapshotReader  # noqa: E402
from quiver.contract.history import commits  # noqa: E402

DEFAULT_REPO = "/work/.mirror/github+github-mcp-server/repo"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", default=os.environ.get("QUIVER_BENCH_GITHUB_MCP", DEFAULT_REPO))
    parser.add_argument("--path", default="pkg/github/__toolsnaps__")
    parser.add_argument("--commits", type=int, default=100)
    args = parser.parse_args()
    repo = Path(args.repo)
    steps = commits(repo, "HEAD", args.path)[-args.commits :]
    start = time.perf_counter()
    with SnapshotReader(repo, args.path) as reader:
        pairs = [(s, reader.catalog(s.parent), reader.catalog(s.commit)) for s in steps]
    read = time.perf_counter() - start

    times, aborted, counts = [], [], {"error": 0, "warning": 0, "info": 0}
    most = (0, steps[0])
    start = time.perf_counter()
    for step, old, new in pairs:
        t0 = time.perf_counter()
        try:
            findings = diff_catalogs(old, new, server="github")
        except Exception as error:  # the bench counts aborts instead of stopping
            aborted.append(f"{step.commit[:8]}: {type(error).__name__}: {error}")
            continue
        finally:
            times.append(time.perf_counter() - t0)
        for finding in findings:
            counts[finding.severity] += 1
        serious = sum(f.severity != "info" for f in findings)
        most = max(most, (serious, step), key=lambda item: item[0])
    engine = time.perf_counter() - start
    n = len(pairs)
    print(f"{'case':<60} {'total s':>8} {'per diff ms':>12}")
    print(f"{f'read {n} commits of snapshots through git (parent and commit)':<60} {read:8.2f} {read / n * 1000:12.2f}")
    label = f"engine: {n} consecutive commits, parent vs commit, in process"
    print(f"{label:<60} {engine:8.3f} {engine / n * 1000:12.2f}")
    slowest = max(times) * 1000
    median = statistics.median(times) * 1000
    print(f"  per diff: median {median:.2f} ms, slowest {slowest:.2f} ms; aborted: {len(aborted)}")
    print(f"  findings: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} info")
    for line in aborted:
        print(f"  aborted {line}")

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    first = f"{steps[0].parent or steps[0].commit}"
    batch = [sys.executable, "-m", "quiver", "diff", "--commits", f"{first}..{steps[-1].commit}", args.path]
    batch += ["--project", str(repo), "--format", "json", "--fail-on", "never"]
    start = time.perf_counter()
    subprocess.run(batch, check=True, capture_output=True, env=env)
    cli_batch = time.perf_counter() - start
    label = f"cli: quiver diff --commits over the {n} commits (one process)"
    print(f"{label:<60} {cli_batch:8.2f} {cli_batch / n * 1000:12.2f}")

    step = most[1]
    with tempfile.TemporaryDirectory() as tmp, SnapshotReader(repo, args.path) as reader:
        sides = []
        for label_, commit in (("old", step.parent), ("new", step.commit)):
            folder = Path(tmp) / label_
            folder.mkdir()
            for name, tool in reader.catalog(commit).items():
                (folder / f"{name}.snap").write_text(json.dumps(tool))
            sides.append(str(folder))
        call = [sys.executable, "-m", "quiver", "diff", *sides, "--project", tmp, "--format", "json"]
        call += ["--fail-on", "never"]
        subprocess.run(call, check=True, capture_output=True, env=env)  # warm-up: writes bytecode
        walls = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run(call, check=True, capture_output=True, env=env)
            walls.append(time.perf_counter() - start)
        floor = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
            floor.append(time.perf_counter() - start)
    wall = statistics.median(walls)
    label = f"cli: one quiver diff OLD NEW, {step.commit[:8]} ({most[0]} non-info findings)"
    print(f"{label:<60} {wall:8.3f} {wall * 1000:12.1f}")
    print(f"{'  floor: python -c pass':<60} {statistics.median(floor):8.3f}")
    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(
        json.dumps(
            {"diffs": n, "engine_total_s": round(engine, 3), "aborted": len(aborted), "cli_call_s": round(wall, 3)}
        )
    )


if __name__ == "__main__":
    main()
