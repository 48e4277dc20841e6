"""A misbehaving payments MCP server (stdio): quiver's upstream for end-to-end fault tests of the gateway.

Every call of a write tool names its fault; every effect is appended, and fsynced, to a ground-truth
file before anything else happens, so a test counts what really happened upstream whatever the gateway
recorded:

    python examples/servers/faulty_server.py        # FAULTY_EFFECTS=/tmp/effects.jsonl

Tools (server `faulty` 1.0.0):
    transfer(to, amount, fault)  a non-idempotent write: appends {"op", "key", "to", "amount", "pid"}
                                 (the key is `_meta["io.quiver/idempotency-key"]`) and answers
                                 {"key", "applied": true} as JSON text (no structuredContent)
    deposit(to, amount, fault)   the same write under another name (a test configures no reconcile for it)
    get_transfer(key)            read-only: {"key", "found", "amount"} as JSON text only, read from the
                                 ground-truth file (what a reconcile tool asks)
    lookup(item, fail_times)     read-only: answers `isError` "503 service unavailable, try again" the
                                 first `fail_times` calls per item (counted per process), then {"item", "calls"}

Faults of a write: "none"; "reject" (isError "insufficient funds", no effect); "error_before"
(isError "503 service unavailable", no effect); "error_after" (the effect, then isError "connection
reset by peer"); "crash_before" / "crash_after" (exit 1 without answering, before / after the effect);
"hang_before" / "hang_after" (never answer: sleep an hour, before / after the effect). Like a server that
finishes its calls in flight before it exits, a process with a hung call keeps running after its stdin
closes (only a signal stops it): the case where an upstream could outlive its gateway.

Environment: FAULTY_EFFECTS (the ground-truth JSON-lines file; required), FAULTY_PIDS (a file each
started process appends its pid to, so a test can check none outlives the gateway),
FAULTY_RECONCILE_FAILS (the first N `get_transfer` calls per process answer isError "internal error"),
FAULTY_LOG_LEVEL (stderr log level, default WARNING). stdout carries only the protocol.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

logger = logging.getLogger("faulty_server")

IDEMPOTENCY_META_KEY = "io.quiver/idempotency-key"
HANG_SECONDS = 3600.0
FAULTS = ["none", "reject", "error_before", "error_after", "crash_before", "crash_after", "hang_before", "hang_after"]
WRITE = types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
READ = types.ToolAnnotations(read_only_hint=True)

_WRITE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "to": {"type": "string", "description": "Account credited."},
        "amount": {"type": "integer", "minimum": 1, "description": "Amount in cents."},
        "fault": {"type": "string", "enum": FAULTS, "description": "How this call misbehaves."},
    },
    "required": ["to", "amount", "fault"],
    "additionalProperties": False,
}
TOOLS = [
    types.Tool(name=name, description=f"{what} (fault injection)", input_schema=_WRITE_INPUT, annotations=WRITE)
    for name, what in (("transfer", "Transfer money to an account"), ("deposit", "Deposit money in an account"))
] + [
    types.Tool(
        name="get_transfer",
        description="Whether the write with this idempotency key happened (JSON text).",
        input_schema={
            "type": "object",
            "properties": {"key": {"type": "string", "description": "Idempotency key of the write."}},
            "required": ["key"],
            "additionalProperties": False,
        },
        annotations=READ,
    ),
    types.Tool(
        name="lookup",
        description="Look an item up; fails with a transient tool error the first `fail_times` calls.",
        input_schema={
            "type": "object",
            "properties": {
                "item": {"type": "string", "description": "Item to look up."},
                "fail_times": {"type": "integer", "minimum": 0, "description": "Transient failures first."},
            },
            "required": ["item", "fail_times"],
            "additionalProperties": False,
        },
        annotations=READ,
    ),
]


def _json_text(value: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(value, sort_keys=True))])


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _append(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, sort_keys=True) + "\n")
        out.flush()
        os.fsync(out.fileno())


def _effects(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _crash(when: str) -> None:
    logger.warning("crash %s the effect: exiting with status 1", when)
    logging.shutdown()
    os._exit(1)


async def _hang() -> None:
    """Never answer; and hold the work, in a non-daemon thread, so this process outlives its stdin."""
    threading.Thread(target=time.sleep, args=(HANG_SECONDS,), name="held call").start()
    await anyio.sleep(HANG_SECONDS)


def build_server(effects: Path, reconcile_fails: int) -> Server[Any]:
    by_name = {tool.name: tool for tool in TOOLS}
    lookups: dict[str, int] = {}
    reconciles = [0]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def write(name: str, args: dict[str, Any], key: str | None) -> types.CallToolResult:
        fault = args["fault"]
        if fault == "reject":
            return _error(f"insufficient funds for {args['amount']}")
        if fault == "error_before":
            return _error("503 service unavailable")
        if fault == "crash_before":
            _crash("before")
        if fault == "hang_before":
            await _hang()
        _append(effects, {"op": name, "key": key, "to": args["to"], "amount": args["amount"], "pid": os.getpid()})
        if fault == "crash_after":
            _crash("after")
        if fault == "hang_after":
            await _hang()
        if fault == "error_after":
            return _error("upstream bank API: connection reset by peer")
        return _json_text({"key": key, "applied": True})

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        args = dict(params.arguments or {})
        problem = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(tool.input_schema).iter_errors(args))
        if problem is not None:
            return _error(f"invalid arguments for {tool.name}: {problem.message}")
        meta_key = (params.meta or {}).get(IDEMPOTENCY_META_KEY)
        if tool.name in ("transfer", "deposit"):
            return await write(tool.name, args, meta_key if isinstance(meta_key, str) else None)
        if tool.name == "get_transfer":
            reconciles[0] += 1
            if reconciles[0] <= reconcile_fails:
                return _error("internal error while reading transfers")
            found = [e for e in _effects(effects) if e["key"] == args["key"]]
            return _json_text({"key": args["key"], "found": bool(found), "amount": sum(e["amount"] for e in found)})
        calls = lookups[args["item"]] = lookups.get(args["item"], 0) + 1
        if calls <= args["fail_times"]:
            return _error("503 service unavailable, try again")
        return _json_text({"item": args["item"], "calls": calls})

    return Server("faulty", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("FAULTY_LOG_LEVEL", "WARNING"))
    effects = os.environ.get("FAULTY_EFFECTS")
    if not effects:
        sys.exit("faulty_server: set FAULTY_EFFECTS to the ground-truth file")
    pids = os.environ.get("FAULTY_PIDS")
    if pids:
        _append(Path(pids), {"pid": os.getpid()})
    anyio.run(serve, build_server(Path(effects), int(os.environ.get("FAULTY_RECONCILE_FAILS", "0"))))


if __name__ == "__main__":
    main()
