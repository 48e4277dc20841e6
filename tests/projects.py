"""Build small real projects in temp dirs: agent files, MCP configs and a lock file."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quiver.sources.lock import ServerCatalog, render_lock


def tool(name: str, description: str | None = None, **schema: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": description or f"Does {name.replace('_', ' ')} for the caller.",
        "inputSchema": schema or {"type": "object", "properties": {"id": {"type": "string"}}},
    }


def tools(prefix: str, n: int) -> list[dict[str, Any]]:
    return [tool(f"{prefix}_{i:02d}") for i in range(n)]


def agent_text(frontmatter: str, body: str = "Do the work.\n") -> str:
    return f"---\n{frontmatter.strip()}\n---\n{body}"


def make_project(
    root: Path,
    *,
    agents: Mapping[str, str] = {},
    mcp: Mapping[str, Any] | None = None,
    vscode: str | None = None,
    catalogs: Mapping[str, Sequence[Mapping[str, Any]]] = {},
    config: str | None = None,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in agents.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if mcp is not None:
        (root / ".mcp.json").write_text(json.dumps(mcp, indent=2), encoding="utf-8")
    if vscode is not None:
        (root / ".vscode").mkdir(exist_ok=True)
        (root / ".vscode" / "mcp.json").write_text(vscode, encoding="utf-8")
    if catalogs:
        lock = render_lock(ServerCatalog(n, {"name": n}, None, None, tuple(t)) for n, t in catalogs.items())
        (root / "quiver.lock.json").write_text(lock, encoding="utf-8")
    if config is not None:
        (root / "quiver.toml").write_text(config, encoding="utf-8")
    return root


def stdio(**extra: Any) -> dict[str, Any]:
    return {"type": "stdio", "command": "srv", "args": [], "tools": ["*"], **extra}
