"""Print wall time and peak memory of `quiver compile` on the demo and on a generated large repository.

    python bench/compile.py [--agents 1000] [--servers 50] [--tools 200]

The large repository: N agents, S servers x T tools each. Agents mix the shapes seen in real repos:
most name a handful of tools explicitly, some take one to three whole servers with `server/*`.
Each run is a fresh `quiver compile` process (cold start, token cache warm as in a developer's
second run, then cold with the cache removed).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from quiver.sources.lock import ServerCatalog, render_lock  # noqa: E402

WORDS = (
    "issue pull request branch commit file directory page database record user team project task ticket "
    "message channel calendar event invoice payment order customer product report metric alert log trace "
    "deployment cluster container image secret key token comment review label milestone release tag"
).split()
VERBS = "get list search create update delete archive restore move copy sync export import run cancel".split()


def make_tool(rng: random.Random, server: int, i: int) -> dict[str, object]:
    verb, noun, noun2 = rng.choice(VERBS), rng.choice(WORDS), rng.choice(WORDS)
    props = {
        f"{rng.choice(WORDS)}_{k}": {"type": rng.choice(["string", "integer", "boolean"]),
                                     "description": f"The {rng.choice(WORDS)} to {verb}."}
        for k in range(rng.randint(1, 6))
    }
    return {
        "name": f"{verb}_{noun}_{i:03d}",
        "description": f"{verb.capitalize()} a {noun} of the {noun2} in server {server}. "
        f"Use it when the user asks to {verb} {noun}s; returns the {noun} as JSON.",
        "inputSchema": {"type": "object", "properties": props, "required": sorted(props)[:1]},
        "annotations": {"readOnlyHint": verb in ("get", "list", "search")},
    }


def generate(root: Path, agents: int, servers: int, tools: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    catalogs = []
    names: dict[str, list[str]] = {}
    for s in range(servers):
        server = f"srv{s:02d}"
        cat = [make_tool(rng, s, i) for i in range(tools)]
        catalogs.append(ServerCatalog(server, {"name": server, "version": "1.0.0"}, None, None, tuple(cat)))
        names[server] = [str(t["name"]) for t in cat]
    (root / "quiver.lock.json").write_text(render_lock(catalogs), encoding="utf-8")
    config = {
        "mcpServers": {
            n: {"type": "stdio", "command": "npx", "args": ["-y", f"@example/{n}"], "tools": ["*"],
                "description": f"Server {n}: " + " ".join(rng.sample(WORDS, 6))}
            for n in names
        }
    }
    (root / ".mcp.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    agents_dir = root / ".github" / "agents"
    agents_dir.mkdir(parents=True)
    for a in range(agents):
        if rng.random() < 0.7:
            picked = [f"{s}/{rng.choice(names[s])}" for s in rng.sample(sorted(names), 2) for _ in range(4)]
            refs = ["read", "edit", *sorted(set(picked))]
        else:
            refs = ["read", *[f"{s}/*" for s in rng.sample(sorted(names), rng.randint(1, 3))]]
        model = rng.choice(["claude-sonnet-4.5", "gpt-5.4", "gpt-4.1"])
        text = (f"---\nname: agent {a}\ndescription: Agent number {a} that works on {rng.choice(WORDS)}s.\n"
                f"model: {model}\ntools: {json.dumps(refs)}\n---\nDo the work carefully.\n")
        (agents_dir / f"agent-{a:04d}.agent.md").write_text(text, encoding="utf-8")


def timed_compile(project: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB of the child, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "quiver", "compile", "-q", "--project", str(project)],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0,):
        print(proc.stderr[-2000:], file=sys.stderr)
    return wall, max(peak, before) / 1024, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--tools", type=int, default=200)
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


if __name__ == "__main__":
    main()
