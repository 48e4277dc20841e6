"""tools/call over the stdio transport, answered beside the SDK's dispatcher.

The SDK's server path from a request line to our handler (its receive loop, dispatcher, a task per
request, request validation, context and middleware) and back to the write cost about 0.15 ms a call
(timed by hand on bench/gateway.py's machines); without it, bench/gateway.py's stdio added p50 with the
ledger went from +0.75 to +0.54 ms. For the calls that
need none of it this module takes the line as it is read (`_stdio._Lines`), runs the gateway's own call
path (`Gateway.direct_call`: allow-list, argument validation, pin check, executor) in a task, and writes
the JSON-RPC response itself, shaped by the same per-version sieve the SDK applies to a handler's result
(`serialize_server_result`).

A line is taken only when all of this holds, else it goes to the SDK exactly as before:
- the SDK answered `initialize` with a handshake-era protocol version (seen in the response it wrote:
  `version`); a 2026-07-28 connection stays with the SDK;
- the line is a JSON-RPC 2.0 request for `tools/call` with an integer or string id not in flight here,
  and params of `name`, `arguments` (an object) and `_meta` (an object without `traceparent`) only;
- `Gateway.direct_call_ok(name)`: a tool of the manifest, not a meta-tool, no tracer provider, and a
  policy that never asks for approval.
A `notifications/cancelled` for a request taken here cancels its task (the executor records where the
call was left) and no response is written, as the SDK does; the notification still reaches the SDK,
which finds no request of its own to cancel. `QUIVER_STDIO_DIRECT_CALLS=0` turns the whole path off.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import mcp.types as types
import orjson
from mcp import MCPError
from mcp_types.methods import serialize_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from quiver.jsonout import compact_line

__all__ = ["DirectCalls", "DirectGateway", "enabled"]

logger = logging.getLogger(__name__)

ENV = "QUIVER_STDIO_DIRECT_CALLS"
_PARAMS = frozenset(("name", "arguments", "_meta"))


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip() != "0"


class DirectGateway(Protocol):
    """What `DirectCalls` needs of the gateway (`quiver.runtime.gateway.Gateway`)."""

    def direct_call_ok(self, name: str) -> bool: ...

    async def direct_call(
        self, scope: Any, name: str, args: dict[str, Any], request_id: str | int, meta: dict[str, Any] | None
    ) -> dict[str, Any]: ...


class DirectCalls:
    """The calls this transport answers itself; `take` is called with every complete line read."""

    def __init__(self, gateway: DirectGateway, scope: Any, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._gateway, self._scope, self._write = gateway, scope, write
        self.version: str | None = None  # the handshake-era version the SDK negotiated, once it answered
        self._tasks: dict[str | int, asyncio.Task[None]] = {}

    def answered(self, message: types.JSONRPCMessage) -> None:
        """Told of every message the SDK writes: its `initialize` result gives the connection's version."""
        if isinstance(message, types.JSONRPCResponse) and isinstance(message.result, dict):
            version = message.result.get("protocolVersion")
            if isinstance(version, str) and "serverInfo" in message.result:
                self.version = None if version in MODERN_PROTOCOL_VERSIONS else version

    def take(self, line: bytes) -> bool:
        """Start answering `line` here; False leaves it to the SDK (see the module docstring)."""
        try:
            return self._take(line)
        except Exception:  # in the pipe's read callback: never let a surprise stop the transport
            logger.exception("could not take a line beside the SDK; the SDK answers it")
            return False

    def _take(self, line: bytes) -> bool:
        if self.version is None or (b'"tools/call"' not in line and b'"notifications/cancelled"' not in line):
            return False
        try:
            message = orjson.loads(line)  # stricter than the SDK's parser where they differ: those go to the SDK
        except orjson.JSONDecodeError:
            return False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        method, params = message.get("method"), message.get("params")
        if method == "notifications/cancelled":
            self._cancel(params)
            return False
        ident = message.get("id")
        if method != "tools/call" or not isinstance(params, dict) or not isinstance(ident, str | int):
            return False
        if isinstance(ident, bool) or ident in self._tasks:
            return False
        name, arguments, meta = params.get("name"), params.get("arguments", {}), params.get("_meta")
        if (
            not _PARAMS.issuperset(params)
            or not isinstance(name, str)
            or not isinstance(arguments, dict)
            or (meta is not None and (not isinstance(meta, dict) or "traceparent" in meta))
            or not self._gateway.direct_call_ok(name)
        ):
            return False
        logger.debug("tools/call `%s` (id %r) answered beside the SDK", name, ident)
        answer = self._answer(ident, name, arguments, meta, self.version)
        self._tasks[ident] = asyncio.get_running_loop().create_task(answer)
        return True

    async def aclose(self) -> None:
        """Cancel the calls still in flight and wait until each has recorded where it was left."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(*tasks, return_exceptions=True)

    def _cancel(self, params: object) -> None:
        task = self._tasks.get(params.get("requestId")) if isinstance(params, dict) else None  # type: ignore[arg-type]
        if task is not None:
            task.cancel()

    async def _answer(
        self, ident: str | int, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None, version: str
    ) -> None:
        try:
            result = await self._gateway.direct_call(self._scope, name, arguments, ident, meta)
            try:
                response: dict[str, Any] = {"result": serialize_server_result("tools/call", version, result)}
            except ValidationError:  # as the SDK answers a handler's invalid result
                logger.exception("handler for 'tools/call' returned an invalid result")
                response = {"error": {"code": types.INTERNAL_ERROR, "message": "Handler returned an invalid result"}}
        except MCPError as exc:  # a JSON-RPC error answer (the ledger is unavailable), as the SDK writes one
            response = {"error": exc.error.model_dump(mode="json", exclude_none=True)}
        except asyncio.CancelledError:
            return  # cancelled by the client (no response is due) or by the end of the connection
        finally:
            self._tasks.pop(ident, None)
        await self._write(compact_line({"jsonrpc": "2.0", "id": ident, **response}))
