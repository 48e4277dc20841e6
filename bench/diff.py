"""Print the time to diff every consecutive pair of a synthetic 100-commit history of a 120-tool server.

    python bench/diff.py [--commits 100] [--tools 120]

Each commit applies a few random mutations (safe and breaking: new optional or required properties,
enum values added or removed, bounds tightened, descriptions reworded, tools added or removed) to the
previous catalog. The engine figure diffs the catalogs in process; the git figure runs
`quiver diff REF~1 REF` on a real repository for a sample of commits (interpreter start included).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from quiver.contract.diff import diff_catalogs  # noqa: E402
from quiver.sources.lock import ServerCatalog, render_lock  # noqa: E402

Catalog = dict[str, dict]


def base_tool(rng: random.Random, i: int) -> dict:
    props = {
        f"p{k}": {"type": rng.choice(["string", "integer"]), "description": f"parameter {k}"}
        for k in range(rng.randint(2, 6))
    }
    props["mode"] = {"type": "string", "enum": ["fast", "safe", "full"], "description": "how to run"}
    props["limit"] = {"type": "integer", "minimum": 1, "maximum": 100}
    return {
        "name": f"tool_{i:03d}",
        "description": f"Tool number {i}: does one thing well.",
        "inputSchema": {"type": "object", "properties": props, "required": ["p0"], "additionalProperties": False},
        "annotations": {"readOnlyHint": i % 3 == 0},
    }


def mutate(rng: random.Random, catalog: Catalog, step: int) -> Catalog:
    new = copy.deepcopy(catalog)
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(sorted(new))
        schema = new[name]["inputSchema"]
        kind = rng.randrange(7)
        if kind == 0:
            schema["properties"][f"opt{step}"] = {"type": "string", "description": "new optional"}
        elif kind == 1:
            schema["properties"][f"req{step}"] = {"type": "string"}
            schema["required"].append(f"req{step}")
        elif kind == 2 and len(schema["properties"]["mode"]["enum"]) > 1:
            schema["properties"]["mode"]["enum"].pop()
        elif kind == 3:
            schema["properties"]["mode"]["enum"].append(f"m{step}")
        elif kind == 4:
            schema["properties"]["limit"]["maximum"] = max(2, schema["properties"]["limit"]["maximum"] - 10)
        elif kind == 5:
            new[name]["description"] += f" Revised in step {step}."
        else:
            new.pop(name)
            new[f"tool_new_{step:03d}"] = base_tool(rng, 500 + step)
    return new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--tools", type=int, default=120)
    parser.add_argument("--git-sample", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(11)
    history = [{t["name"]: t for t in (base_tool(rng, i) for i in range(args.tools))}]
    for step in range(1, args.commits):
        history.append(mutate(rng, history[-1], step))

    start = time.perf_counter()
    counts = {"error": 0, "warning": 0, "info": 0}
    for old, new in itertools.pairwise(history):
        for finding in diff_catalogs(old, new, server="srv"):
            counts[finding.severity] += 1
    engine = time.perf_counter() - start
    pairs = len(history) - 1
    print(f"{'case':<52} {'total s':>8} {'per pair ms':>12}")
    print(f"{f'engine: {pairs} consecutive pairs, {args.tools} tools':<52} {engine:8.2f} {engine / pairs * 1000:12.1f}")
    print(f"  findings: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} info")

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)

        def git(*a: str) -> None:
            subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)

        git("init", "-q", "-b", "main")
        git("config", "user.email", "bench@example.com")
        git("config", "user.name", "bench")
        for i, catalog in enumerate(history):
            text = render_lock(
                [ServerCatalog("srv", {"name": "srv"}, None, None, tuple(catalog.values()))], known_tokens={}
            )
            (repo / "quiver.lock.json").write_text(text)
            git("add", "-A")
            git("commit", "-q", "-m", f"step {i}")
        sample = min(args.git_sample, pairs)
        start = time.perf_counter()
        for k in range(sample):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "quiver",
                    "diff",
                    f"HEAD~{k + 1}",
                    f"HEAD~{k}",
                    "--project",
                    str(repo),
                    "--format",
                    "json",
                    "--fail-on",
                    "never",
                ],
                check=True,
                capture_output=True,
            )
        cli = time.perf_counter() - start
        label = f"cli: quiver diff REF~1 REF on git, {sample} sample pairs"
        print(f"{label:<52} {cli:8.2f} {cli / sample * 1000:12.1f}")
        print(f"  (extrapolated to all {pairs} pairs through the CLI: {cli / sample * pairs:.1f} s)")
    print(json.dumps({"engine_total_s": round(engine, 3), "pairs": pairs}))


if __name__ == "__main__":
    main()
