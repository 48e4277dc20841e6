"""`search_tools` through a real `quiver serve`: a project holding the 673 corpus tools, every one deferred.

The project is written to a temp dir (a lock from the corpus catalogs, an MCP config naming each server,
one agent carrying every server), compiled, served over stdio, and asked the given queries in sequence;
the figures are client round-trips (JSON-RPC over stdio, query encoding, ranking, the tools/list_changed
notice). The upstream servers are never started: search needs only the manifest.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from quiver._search._scope import warm_project
from quiver.commands import compile as cmd
from quiver.sources.lock import ServerCatalog, render_lock

SERVE = (
    "import sys; from pathlib import Path; from quiver.commands.serve import ServeOptions, run; "
    "sys.exit(run(ServeOptions(Path(sys.argv[1]), log_level='warning', no_ledger=True)).code)"
)


def write_project(root: Path, corpus: Path, folders: Sequence[str | Path], warm_from: Path | None = None) -> Path:
    """The project for `folders` (corpus folder names, or directories of catalogs); `warm_from`, a vector cache
    file to start from (what `quiver snapshot` would have encoded)."""
    catalogs, servers = [], {}
    for folder in folders:
        for path in sorted((corpus / folder).glob("*.json")):
            cat = json.loads(path.read_text(encoding="utf-8"))
            name = cat["server"]
            catalogs.append(ServerCatalog(name, {"name": name, "version": "1"}, None, None, tuple(cat["tools"])))
            description = cat.get("description")
            servers[name] = {"command": "npx", "args": ["-y", f"@example/{name}"], "description": description}
    (root / "quiver.lock.json").write_text(render_lock(catalogs), encoding="utf-8")
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    agents = root / ".github" / "agents"
    agents.mkdir(parents=True)
    refs = json.dumps([f"{s}/*" for s in sorted(servers)])
    (agents / "all.agent.md").write_text(
        f"---\ndescription: Every tool of the corpus.\nmodel: claude-sonnet-4.5\ntools: {refs}\n---\nWork.\n"
    )
    (root / "quiver.toml").write_text("threshold = 1\n", encoding="utf-8")
    result = cmd.build(root)
    if result.errors:
        raise SystemExit(f"compile failed: {[e.one_line() for e in result.errors]}")
    cmd.write(root, result, result.project.config.out)
    if warm_from is not None and warm_from.exists():
        (root / ".quiver" / "cache" / "vectors").mkdir(parents=True, exist_ok=True)
        shutil.copy(warm_from, root / ".quiver" / "cache" / "vectors" / warm_from.name)
    warm_project(result.project)  # as `quiver snapshot` does
    return root / result.project.config.out / "all.json"


async def _queries(manifest: Path, root: Path, queries: Sequence[str], rounds: int) -> tuple[list[float], float]:
    env = {k: v for k, v in os.environ.items() if k != "QUIVER_NO_CACHE"}
    params = StdioServerParameters(command=sys.executable, args=["-c", SERVE, str(manifest)], env=env, cwd=str(root))
    started = time.perf_counter()
    async with stdio_client(params, errlog=sys.stderr) as streams, ClientSession(*streams) as session:
        await session.initialize()
        ready = time.perf_counter() - started
        times: list[float] = []
        for q in queries[:5]:
            await session.call_tool("search_tools", {"query": q, "limit": 5})
        for _ in range(rounds):
            for q in queries:
                t = time.perf_counter()
                result: Any = await session.call_tool("search_tools", {"query": q, "limit": 5})
                times.append((time.perf_counter() - t) * 1000)
                assert not result.is_error
    return times, ready


def serve_latency(
    corpus: Path,
    queries: Sequence[str],
    rounds: int = 2,
    extra: Sequence[Path] = (),
    warm_from: Path | None = None,
) -> str:
    """p50/p99 of `search_tools` over the corpus's 673 tools, plus the catalogs in `extra` directories."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        manifest = write_project(root, corpus, ("catalogs", "catalogs-livemcpbench", *extra), warm_from)
        tools = len(json.loads(manifest.read_text(encoding="utf-8"))["tools"])
        times, ready = anyio.run(_queries, manifest, root, queries, rounds)
    times.sort()
    p50, p99 = statistics.median(times), times[int(len(times) * 0.99)]
    return (
        f"search_tools via quiver serve (stdio), {tools} deferred tools, {len(times)} calls: "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (start-up to initialized, warm vector cache: {ready:.2f} s; "
        f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
