"""Print how many of N mutated inputs make a quiver reader fail with anything but a one-line input error.

    python bench/fuzz.py [--cases 10000] [--cli 200] [--seed 0]

The long run of tests/test_fuzz_readers.py (same mutations, tests/fuzz_inputs.py): `--cases` seeds spread
over every reader (agent files, MCP configs, quiver.toml, the lock, routes, tools lists, manifests, the
shadow log, contract ignores, baselines), then `--cli` mutated projects through `quiver lint` and
`quiver compile` (in-process, the real CLI). A failure is an exception that is not a QuiverError (the CLI's
exit 3); each distinct one is printed with its seed, so `read_case` reproduces it. Exit 1 when any.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_inputs import READERS, mutate, read_case, seed_project  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--cli", type=int, default=200, help="mutated projects through lint and compile")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from click.testing import CliRunner

    from quiver.cli import cli

    with tempfile.TemporaryDirectory() as tmp:
        root = seed_project(Path(tmp) / "project")
        subprocess.run([sys.executable, "-m", "quiver", "compile", "-q", "-C", str(root)], capture_output=True)
        kinds = sorted(READERS)
        failures: collections.Counter[tuple[str, str]] = collections.Counter()
        first: dict[tuple[str, str], int] = {}
        originals: dict[str, bytes] = {}
        started = time.perf_counter()
        for i in range(args.cases):
            kind, seed = kinds[i % len(kinds)], args.seed * 1_000_003 + i
            failure = read_case(root, kind, seed, originals)
            if failure is not None:
                key = (kind, f"{type(failure).__name__}: {str(failure)[:100]}")
                failures[key] += 1
                first.setdefault(key, seed)
        readers_s = time.perf_counter() - started
        exit3 = 0
        started = time.perf_counter()
        rng = random.Random(args.seed)
        for _ in range(args.cli):
            kind = rng.choice(kinds)
            path = root / READERS[kind][0]
            original, seed = path.read_bytes(), rng.randrange(2**32)
            path.write_bytes(mutate(original, random.Random(seed)))
            try:
                for command in ("lint", "compile"):
                    result = CliRunner().invoke(cli, [command, "--project", str(root), "--out", str(root / "out")])
                    if result.exit_code not in (0, 1, 2) or "internal error" in result.output:
                        exit3 += 1
                        print(f"exit {result.exit_code}: {command} with {kind} mutated by seed {seed}")
            finally:
                path.write_bytes(original)
        cli_s = time.perf_counter() - started
    load = os.getloadavg()[0]
    print(f"readers: {args.cases:,} mutated inputs over {len(kinds)} readers, {sum(failures.values())} failed "
          f"other than with an input error ({readers_s:.1f} s)")  # fmt: skip
    for (kind, what), count in failures.most_common():
        print(f"  {count:5}  {kind}: {what} (first seed {first[(kind, what)]})")
    print(f"cli: {args.cli} mutated projects through lint and compile, {exit3} exit 3 ({cli_s:.1f} s)")
    print(f"load average {load:.2f} (uptime)")
    return 1 if failures or exit3 else 0


if __name__ == "__main__":
    sys.exit(main())
