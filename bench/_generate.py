"""A generated repository for benchmarks: N agents, S servers x T tools, in the shapes real repos use."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from quiver.sources.lock import ServerCatalog, render_lock

WORDS = (
    "issue",
    "pull",
    "request",
    "branch",
    "commit",
    "file",
    "directory",
    "page",
    "database",
    "record",
    "user",
    "team",
    "project",
    "task",
    "ticket",
    "message",
    "channel",
    "calendar",
    "event",
    "invoice",
    "payment",
    "order",
    "customer",
    "product",
    "report",
    "metric",
    "alert",
    "log",
    "trace",
    "deployment",
    "cluster",
    "container",
    "image",
    "secret",
    "key",
    "token",
    "comment",
    "review",
    "label",
    "milestone",
    "release",
    "tag",
)
VERBS = (
    "get",
    "list",
    "search",
    "create",
    "update",
    "delete",
    "archive",
    "restore",
    "move",
    "copy",
    "sync",
    "export",
    "import",
    "run",
    "cancel",
)


def make_tool(rng: random.Random, server: int, i: int) -> dict[str, object]:
    verb, noun, noun2 = rng.choice(VERBS), rng.choice(WORDS), rng.choice(WORDS)
    props = {
        f"{rng.choice(WORDS)}_{k}": {
            "type": rng.choice(["string", "integer", "boolean"]),
            "description": f"The {rng.choice(WORDS)} to {verb}.",
        }
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
            n: {
                "type": "stdio",
                "command": "npx",
                "args": ["-y", f"@example/{n}"],
                "tools": ["*"],
                "description": f"Server {n}: " + " ".join(rng.sample(WORDS, 6)),
            }
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
        text = (
            f"---\nname: agent {a}\ndescription: Agent number {a} that works on {rng.choice(WORDS)}s.\n"
            f"model: {model}\ntools: {json.dumps(refs)}\n---\nDo the work carefully.\n"
        )
        (agents_dir / f"agent-{a:04d}.agent.md").write_text(text, encoding="utf-8")
