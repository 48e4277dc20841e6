"""An MCP server that serves a recorded tool catalog verbatim: quiver's stand-in for a real server.

    python examples/servers/catalog_server.py CATALOG [--server NAME]

CATALOG is a `quiver.lock.json` (then `--server` picks the server; its `serverInfo` and `instructions`
are served too) or a tools/list JSON (`{"tools": [...]}`). tools/list returns every tool object exactly as
recorded (`_meta`, annotations, output schemas and all), so a host in front of it sees the real catalog;
tools/call answers every known tool with a text result naming it. The host benchmarks (`bench/hosts.py`)
run real hosts against it; tests snapshot it. Logs go to stderr; stdout carries only protocol messages.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server


def load_catalog(path: Path, server: str | None) -> tuple[dict[str, Any], str | None, list[dict[str, Any]]]:
    """(serverInfo, instructions, tool objects) from a lock file or a tools/list JSON."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and isinstance(data.get("servers"), dict):
        servers = data["servers"]
        name = server or (next(iter(servers)) if len(servers) == 1 else None)
        if name is None or name not in servers:
            raise SystemExit(f"{path}: name one of the lock's servers with --server: {', '.join(sorted(servers))}")
        entry = servers[name]
        tools = [item["tool"] if "tool" in item else item for item in entry.get("tools", [])]
        info = entry.get("serverInfo") or {"name": name, "version": "0"}
        return dict(info), entry.get("instructions"), tools
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        return {"name": server or path.stem, "version": "0"}, None, list(data["tools"])
    raise SystemExit(f"{path}: expected a quiver.lock.json or a tools/list JSON with a `tools` list")


def build_server(path: Path, server: str | None) -> Server[Any]:
    info, instructions, tools = load_catalog(path, server)
    names = {str(tool.get("name")) for tool in tools}
    listed = [types.Tool.model_validate(tool) for tool in tools]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in names:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        return types.CallToolResult(content=[types.TextContent(text=f"{params.name}: ok")])

    return Server(
        str(info.get("name") or "catalog"),
        version=str(info.get("version") or "0"),
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve(path: Path, server: str | None) -> None:
    app = build_server(path, server)
    async with stdio_server() as (read_stream, write_stream):
        await app.run(read_stream, write_stream, app.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("catalog", type=Path)
    parser.add_argument("--server")
    args = parser.parse_args()
    try:
        anyio.run(serve, args.catalog, args.server)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
