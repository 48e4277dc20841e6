"""An upstream's stdio transport without per-message tasks, with a direct path for tools/call.

The SDK's `stdio_client` moves every message through two memory streams and three tasks (its pipe
reader and writer, the session's receive loop) before the waiting call resumes: about ten event-loop
turns per proxied call. `stdio_pipes` starts the server the way `stdio_client` does (its own process
group, stdin/stdout pipes, stderr to `errlog`, the SDK's default environment under ours) and reads its
stdout in asyncio's pipe callback. `DirectCalls.call_tool` writes a tools/call line itself and is
resumed straight from that callback when the answer's id comes back; every other message (initialize,
tools/list, notifications, the server's own requests, the session's answers) goes to and from the
SDK's `ClientSession` through the usual pair of streams, parsed and serialised as the SDK does. The
direct calls use ids from `DIRECT_IDS_FROM` up, apart from the session's, which counts from 0.

Shutdown is the SDK's: close stdin, give the server PROCESS_TERMINATION_TIMEOUT to exit, then SIGTERM
the group and SIGKILL it FORCE_KILL_TIMEOUT later. POSIX only (`usable()`); elsewhere the caller uses
`stdio_client`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TextIO, cast

import anyio
import mcp.client.session
import mcp.types as types
import orjson
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectSendStream
from mcp import MCPError
from mcp.client.stdio import FORCE_KILL_TIMEOUT, PROCESS_TERMINATION_TIMEOUT, get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from mcp_types.methods import validate_server_result
from opentelemetry.propagate import inject

from quiver.model import JSON
from quiver.runtime.protocol import UpstreamProtocolError

__all__ = ["DIRECT_IDS_FROM", "DirectCalls", "stdio_pipes", "usable"]

logger = logging.getLogger("quiver.runtime.upstream")

DIRECT_IDS_FROM = 1_000_000_000  # below 2**31: servers that read ids as 32-bit integers still echo them
_POLL_S = 0.01  # how often a stopping server's exit is checked (as the SDK does)
KILL_REAP_S = 2.0  # the SDK's wait for the death after SIGKILL


def usable() -> bool:
    return sys.platform != "win32"


class _Pipes(asyncio.SubprocessProtocol):
    """The child's pipes: stdout lines to their waiting direct call, or to the session's read stream."""

    def __init__(self, to_session: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        self.to_session = to_session
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: asyncio.WriteTransport | None = None
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.closed = False  # stdout ended (EOF or an error): nothing more will be answered
        self._chunks: list[bytes] = []  # the line being received
        self._can_write: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.SubprocessTransport, transport)  # uvloop's are not asyncio's subclasses
        self.stdin = cast(asyncio.WriteTransport, self.transport.get_pipe_transport(0))

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return
        if b"\n" not in data:  # a part of a long line: joined once its end arrives
            self._chunks.append(data)
            return
        lines = b"".join([*self._chunks, data]).split(b"\n")
        self._chunks = [lines.pop()]
        for line in lines:
            if line.strip():
                self._line(line)

    def _line(self, line: bytes) -> None:
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:  # stricter than json (NaN, huge numbers, UTF-16): json decides those
            try:
                message = json.loads(line)
            except ValueError:
                message = None
        if isinstance(message, dict) and ("result" in message or "error" in message):
            ident = message.get("id")
            if type(ident) is str and ident.isdigit():  # an echo as a string still correlates, as in the SDK
                ident = int(ident)
            future = self.pending.pop(ident, None) if type(ident) is int else None
            if future is not None:
                if not future.done():
                    future.set_result(message)
                return
        try:  # as the SDK's stdio_client parses it
            item: SessionMessage | Exception = SessionMessage(
                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            )
        except ValueError as exc:
            logger.warning("upstream sent a line that is not JSON-RPC: %s", str(exc).splitlines()[0][:200])
            item = exc
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.to_session.send_nowait(item)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._end()
        elif fd == 0:
            self.resume_writing()

    def process_exited(self) -> None:
        self.resume_writing()

    def _end(self) -> None:
        if self.closed:
            return
        self.closed = True
        rest = b"".join(self._chunks)
        if rest.strip():
            self._line(rest)
        self._chunks = []
        for future in self.pending.values():
            if not future.done():
                future.set_exception(MCPError(code=types.CONNECTION_CLOSED, message="Connection closed"))
        self.pending.clear()
        self.to_session.close()

    def pause_writing(self) -> None:
        if self._can_write is None:
            self._can_write = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        waiter, self._can_write = self._can_write, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def cancel(self, ident: int, reason: str) -> None:
        """The courtesy notifications/cancelled for an abandoned request (as the SDK sends one), queued
        without waiting: never blocks, dropped when stdin is closed."""
        if self.stdin is not None and not self.stdin.is_closing():
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": ident, "reason": reason},
            }
            self.stdin.write(json.dumps(note).encode("utf-8") + b"\n")

    async def write(self, data: bytes, answer: asyncio.Future[Any] | None = None) -> None:
        """Write `data`; while the pipe is full, wait until it drains (or `answer` settles: its timeout)."""
        if self.stdin is None or self.stdin.is_closing():
            raise anyio.BrokenResourceError("the server's stdin is closed")
        self.stdin.write(data)
        if self._can_write is not None:
            if answer is None:
                await self._can_write
            else:
                await asyncio.wait((self._can_write, answer), return_when=asyncio.FIRST_COMPLETED)
                if answer.done() and answer.exception() is not None:
                    answer.result()  # its TimeoutError


class DirectCalls:
    """tools/call over the pipes, answered from the read callback (see the module docstring)."""

    def __init__(self, pipes: _Pipes) -> None:
        self._pipes = pipes
        self._next_id = DIRECT_IDS_FROM

    async def call_tool(
        self,
        tool: str,
        arguments: Mapping[str, JSON],
        meta: Mapping[str, JSON] | None,
        timeout_s: float,
        version: str | None,
    ) -> dict[str, JSON]:
        """The result object of one tools/call, as wire JSON, checked as the SDK's session checks one
        (against protocol revision `version`'s CallToolResult: a ValidationError otherwise, minus later
        revisions' fields). Raises MCPError (an error answer, the connection closed, REQUEST_TIMEOUT after
        `timeout_s`, then a courtesy notifications/cancelled), or UpstreamProtocolError for an answer that
        is not a JSON-RPC response."""
        pipes = self._pipes
        if pipes.closed:
            raise MCPError(code=types.CONNECTION_CLOSED, message="Connection closed")
        ident = self._next_id
        self._next_id += 1
        out_meta = dict(meta) if meta else {}
        inject(out_meta)  # the current trace context, as the SDK's session injects it
        params: dict[str, Any] = {"name": tool, "arguments": dict(arguments)}
        if out_meta:
            params["_meta"] = out_meta
        line = json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        pipes.pending[ident] = future
        # the deadline counts from the write on; a timer on the answer's future, not a cancel scope
        timer = loop.call_later(timeout_s, _expire, future)
        try:
            try:
                await pipes.write(line.encode("utf-8") + b"\n", future)
                message = await future
            except TimeoutError:  # before OSError, its base class
                pipes.cancel(ident, f"timed out after {timeout_s}s")
                raise MCPError(code=types.REQUEST_TIMEOUT, message="Request 'tools/call' timed out") from None
            except (anyio.BrokenResourceError, OSError):
                raise MCPError(code=types.CONNECTION_CLOSED, message="Connection closed") from None
            except anyio.get_cancelled_exc_class():
                pipes.cancel(ident, "caller cancelled")
                raise
        finally:
            timer.cancel()
            pipes.pending.pop(ident, None)
        error = message.get("error")
        if error is not None:
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                raise UpstreamProtocolError("upstream sent a malformed error answer to tools/call", None)
            raise MCPError(code=error["code"], message=str(error.get("message", "")), data=error.get("data"))
        result = message.get("result")
        if not isinstance(result, dict):
            raise UpstreamProtocolError("upstream answered tools/call without a result object", None)
        return _checked(result, version or "2025-11-25")


def _checked(result: dict[str, JSON], version: str) -> dict[str, JSON]:
    validate_server_result("tools/call", version, result)
    foreign = _later_revision_fields("tools/call", version)
    if foreign and not foreign.isdisjoint(result):
        return {key: value for key, value in result.items() if key not in foreign}
    return result


def _no_fields(method: str, version: str) -> frozenset[str]:
    return frozenset()


# the session's own sieve of later-revision fields (private in the SDK: none if it moves)
_later_revision_fields: Callable[[str, str], frozenset[str]] = getattr(
    mcp.client.session, "_later_revision_fields", _no_fields
)


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


@asynccontextmanager
async def stdio_pipes(
    command: str, args: list[str], env: Mapping[str, str], cwd: str | None, errlog: TextIO
) -> AsyncIterator[tuple[Any, Any, DirectCalls]]:
    """Start the server; yields (read stream, write stream) for a `ClientSession`, and its `DirectCalls`."""
    to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
    session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    loop = asyncio.get_running_loop()
    try:
        transport, pipes = await loop.subprocess_exec(
            lambda: _Pipes(to_session),
            command,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errlog,
            env=get_default_environment() | dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    except BaseException:  # not started (a missing command, a bad cwd): nothing to stop, the streams closed
        for stream in (to_session, session_reads, session_writes, from_session):
            stream.close()
        raise

    async def forward_session_writes() -> None:
        async with from_session:
            async for session_message in from_session:
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await pipes.write(data.encode("utf-8") + b"\n")
                except (anyio.BrokenResourceError, OSError):
                    pipes._end()  # the server is gone: the session sees its read stream end
                    return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(forward_session_writes)
            try:
                yield session_reads, session_writes, DirectCalls(pipes)
            finally:
                with anyio.CancelScope(shield=True):
                    session_writes.close()
                    await _stop(transport)
                tg.cancel_scope.cancel()
    finally:
        pipes._end()
        transport.close()
        session_reads.close()


async def _stop(transport: asyncio.SubprocessTransport) -> None:
    """Close stdin, wait for the exit, then SIGTERM and SIGKILL the process group (the SDK's sequence)."""
    stdin = transport.get_pipe_transport(0)
    if stdin is not None:
        stdin.close()
    if await _exited(transport, PROCESS_TERMINATION_TIMEOUT):
        return
    await terminate_posix_process_tree(cast(Process, _Child(transport)), FORCE_KILL_TIMEOUT)
    if not await _exited(transport, KILL_REAP_S):
        pid = transport.get_pid()
        logger.warning("MCP server process %d is still alive after the kill escalation; abandoning it", pid)


class _Child:
    """What the SDK's process-tree termination reads of a process: its pid (the group's id) and returncode."""

    def __init__(self, transport: asyncio.SubprocessTransport) -> None:
        self._transport = transport
        self.pid = transport.get_pid()

    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode()


async def _exited(transport: asyncio.SubprocessTransport, timeout_s: float) -> bool:
    with anyio.move_on_after(timeout_s):
        while transport.get_returncode() is None:
            await anyio.sleep(_POLL_S)
        return True
    return False
