"""Print what `quiver snapshot --import` costs as a project grows: one call per server, and all in one call.

    python bench/snapshot_import.py [--servers 231]

The catalogs are the real public API tool catalogs of `scripts/fetch-bench-data.py` (QUIVER_BENCH_DATA, default
~/.cache/quiver-bench/catalogs-distractors; about 4,400 tools in 231 servers), each written as a tools/list
file. Rows, each a fresh `quiver snapshot` process measured by its own rusage (CPU = user + system, peak RSS):
* every server in one call (`--import A --server a --import B --server b ...`), on an empty project whose vector
  cache already holds every text but the last server's (so what is measured is the import, not the model);
* then, in that project, re-importing one server of 102 tools (nothing new to encode): what a late call of a
  one-server-per-call build costs, which has to stay proportional to the server, not to the lock;
* the same re-import with the vector cache deleted (the server's own texts are encoded again: the model's part).
The load average is printed with each row.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from _child import Usage, run_child

ROOT = Path(__file__).resolve().parents[1]
BENCH_DATA = Path(os.environ.get("QUIVER_BENCH_DATA", Path.home() / ".cache" / "quiver-bench"))
REIMPORTED = "3blades-ai"  # 102 tools


def snapshot(root: Path, pairs: list[tuple[Path, str]]) -> Usage:
    """One `quiver snapshot --import ...` of `pairs` into `root`, measured."""
    args = [arg for path, server in pairs for arg in ("--import", str(path), "--server", server)]
    return run_child([sys.executable, "-m", "quiver", "snapshot", *args, "-C", str(root)])


def row(label: str, usage: Usage) -> None:
    load = os.getloadavg()[0]
    print(f"{label:<58} {usage.cpu:7.2f} {usage.peak_mib:9.0f} {usage.wall:7.2f} {load:8.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--servers", type=int, default=231, help="how many catalogs to import (default: all)")
    args = parser.parse_args(argv)
    source = BENCH_DATA / "catalogs-distractors"
    files = sorted(source.glob("*.json"))[: args.servers]
    if not files:
        raise SystemExit(f"no catalogs in {source}: run `python scripts/fetch-bench-data.py`")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pairs: list[tuple[Path, str]] = []
        tools = 0
        for path in files:
            catalog = json.loads(path.read_text(encoding="utf-8"))
            written = work / "catalogs" / path.name
            written.parent.mkdir(exist_ok=True)
            written.write_text(json.dumps({"tools": catalog["tools"]}), encoding="utf-8")
            pairs.append((written, str(catalog["server"])))
            tools += len(catalog["tools"])
        project = work / "project"
        project.mkdir()
        (project / "quiver.toml").write_text("", encoding="utf-8")
        print(f"{len(pairs)} servers, {tools:,} tools (real public API catalogs from {source})")
        print(f"{'case':<58} {'cpu s':>7} {'peak MiB':>9} {'wall s':>7} {'load 1m':>8}")
        # warm the vector cache with every text but the last server's, so the one-call row measures the import
        warm = work / "warm"
        warm.mkdir()
        (warm / "quiver.toml").write_text("", encoding="utf-8")
        snapshot(warm, pairs[:-1])
        shutil.copytree(warm / ".quiver", project / ".quiver")
        row(f"all {len(pairs)} servers in one call (cache warm but the last)", snapshot(project, pairs))
        again = [p for p in pairs if p[1] == REIMPORTED] or pairs[:1]
        row(f"then re-import `{again[0][1]}` alone ({tools:,}-tool project)", snapshot(project, again))
        shutil.rmtree(project / ".quiver" / "cache")
        row("the same with the vector cache deleted (encodes its texts)", snapshot(project, again))
    return 0


if __name__ == "__main__":
    sys.exit(main())
