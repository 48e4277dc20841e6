"""Routing distinctness at scale: `python bench/distinct.py` prints how the ROUTE checks grow with the catalog.

Each size is a generated project in a temp dir: tools from `bench/search.py`'s generator (shapes and word
frequencies of the 673 real tools, 5% planted near-duplicates, 40 tools per server), one `.mcp.json` entry
per server with its description, and one agent per 200 tools that sees three servers through wildcards
(so tool search defers their tools). Loading and resolving the project are not timed. Columns:

- near-duplicates: ROUTE001/002/007, the search index over names and descriptions, its blocking
  (`similar()` per tool) and the classification of the candidate pairs: the 3 s budget at 10,000 tools;
- shadowing: ROUTE006, one index per agent that defers tools and per server, one query per tool, capped
  at `lint/route/shadowed_tool.MAX_QUERIES` queries a run (so it stops growing past that many tools);
- whole family: every ROUTE check (uncached), adding agent descriptions (ROUTE003) and server
  descriptions (ROUTE004/005).

Times are the best of `--rounds`, wall clock and process CPU (the CPU figure is the one to compare when other
work shares the machine). QUIVER_CORPUS overrides ../shared/corpus (as for bench/search.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from search import generated_docs, load_docs  # bench/search.py: this script's directory is on sys.path

from quiver.lint.engine import LintContext
from quiver.lint.registry import rules_of
from quiver.lint.route import shadowed_tool, tool_pairs
from quiver.model import Finding
from quiver.project import load_project
from quiver.resolve import resolve_project
from quiver.search import SearchDoc
from quiver.sources.lock import ServerCatalog, render_lock

SIZES = (1_000, 5_000, 10_000)


def _uncached(check: Callable[[LintContext], Iterable[Finding]]) -> Callable[[LintContext], Iterable[Finding]]:
    """The check behind a `cached_check` wrapper: the bench times the work, not the project cache."""
    return getattr(check, "__wrapped__", check)


def _route_family(ctx: LintContext) -> list[Finding]:
    """Every ROUTE check once, uncached."""
    checks = dict.fromkeys(r.check for r in rules_of("ROUTE") if r.check is not None)
    return [f for check in checks for f in _uncached(check)(ctx)]


TOOLS_PER_AGENT = 200
SERVERS_PER_AGENT = 3


def write_project(root: Path, docs: Sequence[SearchDoc]) -> None:
    """A lock with every doc as an MCP tool, a config entry per server, and the agents."""
    servers: dict[str, list[dict[str, object]]] = {}
    described: dict[str, str] = {}
    for doc in docs:
        props = {name: {"type": "string", "description": text} for name, text in doc.params}
        servers.setdefault(doc.server, []).append(
            {
                "name": doc.tool,
                "description": doc.description,
                "inputSchema": {"type": "object", "properties": props},
            }
        )
        described.setdefault(doc.server, doc.server_description)
    catalogs = (ServerCatalog(n, {"name": n, "version": "1.0.0"}, None, None, tuple(t)) for n, t in servers.items())
    (root / "quiver.lock.json").write_text(render_lock(catalogs), encoding="utf-8")
    config = {
        n: {"type": "stdio", "command": n, "tools": ["*"], "description": described[n] or f"Tools of {n}"}
        for n in servers
    }
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": config}, indent=2), encoding="utf-8")
    agents = root / ".github" / "agents"
    agents.mkdir(parents=True)
    names = sorted(servers)
    for a in range(max(1, len(docs) // TOOLS_PER_AGENT)):
        picked = [names[(a * SERVERS_PER_AGENT + k) % len(names)] for k in range(SERVERS_PER_AGENT)]
        refs = json.dumps([f"{s}/*" for s in picked])
        text = (
            f"---\ndescription: Agent {a} works on {' and '.join(picked)} for the team.\n"
            f"model: claude-sonnet-4.5\ntools: {refs}\n---\nDo the work.\n"
        )
        (agents / f"agent-{a:04d}.agent.md").write_text(text, encoding="utf-8")


def best(fn: Callable[[], object], rounds: int) -> tuple[float, float, object]:
    walls, cpus = [], []
    out: object = None
    for _ in range(rounds):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus), out


def measure(root: Path, n: int, rounds: int) -> str:
    """One table row: the near-duplicate pass (best of `rounds`), shadowing and the whole family (one run each)."""
    project = load_project(root)
    ctx = LintContext(project, tuple(resolve_project(project)))
    lock = project.lock
    assert lock is not None
    wall, cpu, found = best(lambda: list(tool_pairs.check_catalog(tool_pairs.Catalog.of(lock, ctx.resolved))), rounds)
    shadow_wall, shadow_cpu, _ = best(lambda: list(_uncached(shadowed_tool.check)(ctx)), 1)
    fam_wall, fam_cpu, everything = best(lambda: _route_family(ctx), 1)
    return (
        f"{n:>7,} | {wall * 1000:>10.0f} ms {cpu * 1000:>4.0f} ms {wall * 1e6 / n:>7.0f} {_count(found):>8} | "
        f"{shadow_wall * 1000:>11.0f} ms {shadow_cpu * 1000:>4.0f} ms | "
        f"{fam_wall * 1000:>8.0f} ms {fam_cpu * 1000:>4.0f} ms {_count(everything):>8}"
    )


def _count(found: object) -> int:
    return len(found) if isinstance(found, list) else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="timed runs per row; the best is shown")
    args = parser.parse_args(argv)
    base = load_docs("catalogs", "catalogs-livemcpbench")
    docs = generated_docs(base, max(SIZES))
    print(f"generated tools: {len(base)} real tools' shapes, 40 tools per server, 1 agent per {TOOLS_PER_AGENT} tools")
    print(
        f"{'tools':>7} | {'near-dup wall':>13} {'cpu':>7} {'us/tool':>7} {'findings':>8} | "
        f"{'shadowing wall':>14} {'cpu':>7} | {'family wall':>11} {'cpu':>7} {'findings':>8}"
    )
    for n in SIZES:
        root = Path(tempfile.mkdtemp(prefix="quiver-distinct-"))
        try:
            write_project(root, docs[:n])
            print(measure(root, n, args.rounds))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
