"""A small MCP server (stdio) whose tools carry hostile `pattern`s, for tests/runtime/test_hostile_patterns.py.

`lookup`: `^(a+)+$`, catastrophic for a backtracking engine, linear for RE2. `probe`: the same with a
lookahead RE2 cannot take, so only `re` can match it (under the gateway's time budget). `ping`: no
arguments. The server does not validate arguments itself; it answers with what it was sent.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name=name,
        description=f"Looks a name up ({name}); the name must match the pattern.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "pattern": pattern}},
            "required": ["name"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
    for name, pattern in (("lookup", "^(a+)+$"), ("probe", "^(?=a)(a+)+$"))
] + [
    types.Tool(
        name="ping",
        description="Answers pong.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
]


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    text = "pong" if params.name == "ping" else json.dumps({"tool": params.name, "arguments": params.arguments})
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    server = Server("patterns", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
