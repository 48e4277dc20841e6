"""A calculator MCP server with fault-injection tools: quiver's test upstream for the gateway.

Run over stdio (default), streamable HTTP or legacy SSE:

    python examples/servers/calc_server.py
    python examples/servers/calc_server.py --http 127.0.0.1:8765   # endpoint http://127.0.0.1:8765/mcp
    python examples/servers/calc_server.py --sse 127.0.0.1:8765    # endpoint http://127.0.0.1:8765/sse

In stdio mode stdout carries only the protocol; logs go to stderr.

Environment knobs:
    CALC_FLAKY_FAILS        times `flaky(key)` fails per key before it succeeds (default 2; per process)
    CALC_FLAKY_MODE         "tool" (default): a failure is a tool result with isError true;
                            "rpc": a JSON-RPC error (code -32603) instead
    CALC_EFFECT_LOG         JSON-lines file `counter_increment` appends its effects to (default: in memory)
    CALC_HONOUR_KEYS        "1": `counter_increment` applies each idempotency key at most once
    CALC_DROP_AFTER_EFFECT  "1": `counter_increment` applies its effect, then hangs instead of answering
    CALC_LOG_LEVEL          level of this server's stderr log (default INFO)
    CALC_META_LOG           JSON-lines file each tools/call appends {"tool", "meta"} (its `_meta`) to
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server

logger = logging.getLogger("calc_server")

SERVER_NAME = "calc"
SERVER_VERSION = "1.0.0"
INSTRUCTIONS = "Arithmetic and echo tools, plus fault-injection tools for testing MCP clients."
IDEMPOTENCY_META_KEY = "io.quiver/idempotency-key"
DEFAULT_FLAKY_FAILS = 2
HANG_SECONDS = 3600.0

JSON = dict[str, Any]

_NUMBER_RESULT: JSON = {
    "type": "object",
    "properties": {"result": {"type": "number"}},
    "required": ["result"],
}
_TWO_NUMBERS: JSON = {
    "type": "object",
    "properties": {
        "a": {"type": "number", "description": "First operand."},
        "b": {"type": "number", "description": "Second operand."},
    },
    "required": ["a", "b"],
    "additionalProperties": False,
}
_PURE = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

TOOLS = [
    types.Tool(
        name="add",
        description="Add two numbers and return the sum.",
        input_schema=_TWO_NUMBERS,
        output_schema=_NUMBER_RESULT,
        annotations=_PURE,
    ),
    types.Tool(
        name="multiply",
        description="Multiply two numbers and return the product.",
        input_schema=_TWO_NUMBERS,
        output_schema=_NUMBER_RESULT,
        annotations=_PURE,
    ),
    types.Tool(
        name="echo",
        description="Return the given text unchanged.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to send back."}},
            "required": ["text"],
            "additionalProperties": False,
        },
        annotations=_PURE,
    ),
    types.Tool(
        name="slow_echo",
        description="Wait delay_ms milliseconds, then return the given text unchanged.",
        input_schema={
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "Text to send back."},
                "delay_ms": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 600000,
                    "description": "How long to wait before answering, in milliseconds.",
                },
            },
            "required": ["text", "delay_ms"],
            "additionalProperties": False,
        },
        annotations=_PURE,
    ),
    types.Tool(
        name="flaky",
        description="Fail with a transient error the first CALC_FLAKY_FAILS times per key, then succeed.",
        input_schema={
            "type": "object",
            "properties": {"key": {"type": "string", "description": "Counter key; each key fails on its own."}},
            "required": ["key"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"key": {"type": "string"}, "attempts": {"type": "integer"}},
            "required": ["key", "attempts"],
        },
        annotations=_PURE,
    ),
    types.Tool(
        name="crash",
        description="Terminate the server process at once, without answering.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name="counter_increment",
        description=(
            "Add amount to a shared counter and return the new total. Not idempotent: every call "
            "adds again unless the server honours idempotency keys."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "amount": {"type": "integer", "description": "How much to add to the counter."},
                "idempotency_key": {
                    "type": "string",
                    "minLength": 1,
                    "description": f"Deduplication key; `_meta` `{IDEMPOTENCY_META_KEY}` works too.",
                },
            },
            "required": ["amount"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {
                "total": {"type": "integer"},
                "applied": {"type": "boolean", "description": "False when the key had already been applied."},
                "key": {"type": ["string", "null"]},
            },
            "required": ["total", "applied", "key"],
        },
        annotations=types.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    ),
]


class EffectLog:
    """counter_increment's side effects: JSON lines in a file (shared across processes) or in memory."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._memory: list[JSON] = []
        self._lock = anyio.Lock()

    def _entries(self) -> list[JSON]:
        if self._path is None:
            return list(self._memory)
        if not self._path.exists():
            return []
        lines = self._path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    async def increment(self, amount: int, key: str | None, *, honour_keys: bool) -> tuple[int, bool]:
        """Apply the effect unless `key` was applied before (when honouring keys); return (total, applied)."""
        async with self._lock:
            entries = self._entries()
            if honour_keys and key is not None and any(e.get("key") == key for e in entries):
                return sum(e["amount"] for e in entries), False
            entry: JSON = {"op": "counter_increment", "amount": amount, "key": key, "pid": os.getpid()}
            if self._path is None:
                self._memory.append(entry)
            else:
                with self._path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(entry, sort_keys=True) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
            return sum(e["amount"] for e in entries) + amount, True


def _ok(structured: JSON) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(structured, sort_keys=True))],
        structured_content=structured,
    )


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


def build_server(env: Mapping[str, str]) -> Server[Any]:
    """The calc server, configured from `env` (see the module docstring)."""
    by_name = {tool.name: tool for tool in TOOLS}
    flaky_fails = int(env.get("CALC_FLAKY_FAILS", str(DEFAULT_FLAKY_FAILS)))
    flaky_rpc = env.get("CALC_FLAKY_MODE", "tool") == "rpc"
    honour_keys = env.get("CALC_HONOUR_KEYS") == "1"
    drop_after_effect = env.get("CALC_DROP_AFTER_EFFECT") == "1"
    meta_log = env.get("CALC_META_LOG")
    log_path = env.get("CALC_EFFECT_LOG")
    effects = EffectLog(Path(log_path) if log_path else None)
    flaky_attempts: dict[str, int] = {}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if meta_log:
            with open(meta_log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"tool": params.name, "meta": params.meta or {}}) + "\n")
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        args = dict(params.arguments or {})
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(tool.input_schema).iter_errors(args))
        if error is not None:
            return types.CallToolResult(
                content=[types.TextContent(text=f"invalid arguments for {tool.name}: {error.message}")],
                is_error=True,
            )
        logger.info("tools/call %s", tool.name)
        name = tool.name
        if name == "add":
            return _ok({"result": args["a"] + args["b"]})
        if name == "multiply":
            return _ok({"result": args["a"] * args["b"]})
        if name == "echo":
            return _text(args["text"])
        if name == "slow_echo":
            await anyio.sleep(args["delay_ms"] / 1000)
            return _text(args["text"])
        if name == "flaky":
            key = args["key"]
            attempt = flaky_attempts[key] = flaky_attempts.get(key, 0) + 1
            if attempt <= flaky_fails:
                message = f"transient failure {attempt} of {flaky_fails} for key {key!r}; try again"
                if flaky_rpc:
                    raise MCPError(types.INTERNAL_ERROR, message)
                return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
            return _ok({"key": key, "attempts": attempt})
        if name == "crash":
            logger.warning("crash requested: exiting with status 1")
            logging.shutdown()
            os._exit(1)
        # counter_increment
        meta_key = (params.meta or {}).get(IDEMPOTENCY_META_KEY)
        key = args.get("idempotency_key") or (meta_key if isinstance(meta_key, str) else None)
        total, applied = await effects.increment(args["amount"], key, honour_keys=honour_keys)
        if applied and drop_after_effect:
            logger.warning("effect applied (key %r); dropping the answer", key)
            await anyio.sleep(HANG_SECONDS)
        return _ok({"total": total, "applied": applied, "key": key})

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        logger.info("calc server ready on stdio")
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _sse_app(server: Server[Any]) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    sse = SseServerTransport("/messages/")

    async def handle_sse(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (
            read_stream,
            write_stream,
        ):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return Response()

    return Starlette(
        routes=[
            Route("/sse", endpoint=handle_sse, methods=["GET"]),
            Mount("/messages/", app=sse.handle_post_message),
        ]
    )


async def serve_http(server: Server[Any], address: str, *, sse: bool) -> None:
    import uvicorn

    host, _, port = address.rpartition(":")
    app = _sse_app(server) if sse else server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=int(port), log_level="warning", lifespan="on")
    logger.info("calc server listening on http://%s/%s", address, "sse" if sse else "mcp")
    await uvicorn.Server(config).serve()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp")
    group.add_argument("--sse", metavar="HOST:PORT", help="serve legacy SSE at http://HOST:PORT/sse")
    options = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    logger.setLevel(os.environ.get("CALC_LOG_LEVEL", "INFO").upper())
    server = build_server(dict(os.environ))
    if options.http or options.sse:
        anyio.run(lambda: serve_http(server, options.http or options.sse, sse=bool(options.sse)))
    else:
        anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
