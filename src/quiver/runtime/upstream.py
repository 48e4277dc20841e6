"""The upstream MCP servers behind the gateway: one lazily started, self-healing connection per server.

`UpstreamManager` owns a task group; each server's connection is a task in it that enters the
transport (`stdio_client`, `streamable_http_client`, `sse_client`) and a handshake-era `ClientSession`
as `async with` contexts, runs `initialize` and the paginated tools/list (the catalog the pins are
checked against), then waits until it is stopped or its connection ends. A connection starts on the
first call that needs it (a lock per server: concurrent first calls start it once), within the server's
startup timeout, and a lost one is started again by the next call. Leaving the manager stops every
connection: the SDK's stdio shutdown closes the child's stdin, then terminates and kills its process
tree, each step bounded, so no child outlives the gateway.

`UpstreamManager.dispatch` is the `Dispatch` of `quiver.runtime.protocol`. Its error contract:

* The server cannot be started or reached (command missing, exits, no `initialize` answer within the
  startup timeout, connection refused, a variable reference not set): `UpstreamUnavailable`; nothing
  was sent.
* The connection was already known lost (its read side ended) before the request: the server is
  restarted and the request sent on the new connection; it was never written to the old one.
* The connection is lost while the request is in flight (the child exits, the transport fails):
  `UpstreamConnectionLost`, a subclass of `UpstreamTimeout`, because the request was written and the
  server may or may not have acted on it. It is never re-sent here; the next call restarts the server.
  (We cannot tell "written but not read" from "read and acted on", so we take the ambiguous side.)
* A streamable-HTTP server answers 404 "session not found/terminated" (it restarted, or expired our
  session): the server rejected the request without running it, so the gateway reconnects once
  (re-initializes) and re-sends once; a second failure is `UpstreamUnavailable`.
* `REQUEST_TIMEOUT` (-32001), or our backstop deadline a second later: `UpstreamTimeout`.
* Any other JSON-RPC error: `UpstreamProtocolError` with its code (-32603 internal error is transient).
* A result that is not a valid CallToolResult: `UpstreamProtocolError`.
* The tool's current definition no longer matches its pin (checked once per connection, so again after
  every restart): `SchemaMismatch`, a non-transient `UpstreamProtocolError`.

A stdio upstream (on POSIX) answers tools/call without the session's round trip when no tracer
provider is set (`upstream_stdio.DirectCalls`: the same errors, the result checked as the session
checks it); everything else, and every call while tracing, goes through the `ClientSession`.

`meta` (from the executor: idempotency key, trace context) is merged over `CallRequest.meta` into the
request's `_meta`; keys of the 2026-07-28 envelope (`io.modelcontextprotocol/*`) and `progressToken`
are never forwarded.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO, cast

import anyio
import anyio.abc
import mcp.types as types
from mcp import ClientSession
from pydantic import RootModel

from quiver import __version__
from quiver.errors import InputError
from quiver.model import JSON, sha256_json
from quiver.runtime._manifest import ManifestServer
from quiver.runtime.protocol import CallRequest, UpstreamProtocolError, UpstreamUnavailable
from quiver.runtime.telemetry import tracing_configured
from quiver.runtime.upstream_connection import PinCheck, _Connection, _first_line, _leaf, _WatchedReadStream
from quiver.runtime.upstream_errors import (
    SchemaMismatch,
    UpstreamConnectionLost,
    _map_error,
    _mismatch_line,
    _SessionLost,
    _start_failure,
)
from quiver.runtime.upstream_spawn import _http_streams, _sse_streams, _stdio_streams
from quiver.sources.live import _list_all_tools
from quiver.variables import expand

__all__ = [
    "PinCheck",
    "SchemaMismatch",
    "UpstreamConnectionLost",
    "UpstreamManager",
]

logger = logging.getLogger(__name__)

DEFAULT_STARTUP_TIMEOUT_S = 30.0
SHUTDOWN_GRACE_S = 10.0  # the SDK's stdio shutdown takes at most ~6 s (2 s stdin close, 2 s TERM, 2 s KILL)
BACKSTOP_S = 1.0  # our own deadline beyond the SDK's per-request timeout (which starts only after the write)
_ENVELOPE_PREFIX = "io.modelcontextprotocol/"


_CLIENT_INFO = types.Implementation(name="quiver-gateway", version=__version__)


class _RawResult(RootModel[dict[str, Any]]):
    """A result kept as wire JSON: the SDK validates it against the protocol; we pass it on untouched."""


class UpstreamManager:
    """Lazily started connections to the manifest's servers. Use as `async with UpstreamManager(...) as m`."""

    def __init__(
        self,
        servers: Iterable[ManifestServer],
        *,
        environ: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        startup_timeout_s: float | None = None,
        errlog: TextIO | None = None,
    ) -> None:
        self._servers = {s.name: s for s in servers}
        self._environ = dict(os.environ if environ is None else environ)
        self._cwd = Path(cwd) if cwd is not None else None
        self._startup_override = startup_timeout_s
        self._errlog = errlog
        self._connections: dict[str, _Connection] = {}  # the current connection per server
        self._running: set[_Connection] = set()  # every connection whose task has not finished, old ones too
        self._locks = {name: anyio.Lock() for name in self._servers}
        self._generation = 0
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._closing = False
        self.starts: dict[str, int] = {name: 0 for name in self._servers}  # successful starts per server

    async def __aenter__(self) -> UpstreamManager:
        stack = AsyncExitStack()
        self._tg = await stack.enter_async_context(anyio.create_task_group())
        self._stack = stack
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, tb)

    async def aclose(self) -> None:
        """Stop every connection and wait (bounded, shielded) until each has shut its server down."""
        self._closing = True
        connections = list(self._running)
        for conn in connections:
            conn.ended.set()
        with anyio.move_on_after(SHUTDOWN_GRACE_S, shield=True):
            for conn in connections:
                await conn.done.wait()
        # Each connection's own scope, not the task group's: that one encloses the caller too (a gateway
        # still serving, its signal handler), which a cancellation from here must not reach.
        for conn in list(self._running):
            conn.scope.cancel()

    def startup_timeout_s(self, server: str) -> float:
        if self._startup_override is not None:
            return self._startup_override
        timeout_ms = self._servers[server].timeout_ms
        return timeout_ms / 1000 if timeout_ms else DEFAULT_STARTUP_TIMEOUT_S

    def running(self, server: str) -> bool:
        conn = self._connections.get(server)
        return conn is not None and conn.usable

    async def wait_ended(self, server: str) -> None:
        """Wait until the current connection to `server` (if any) has ended: stopped, crashed or lost."""
        conn = self._connections.get(server)
        if conn is not None:
            await conn.ended.wait()

    # ----------------------------------------------------------------- connections

    async def _connected(self, server: str) -> _Connection:
        """The live connection to `server`, started (or restarted) if needed. Raises UpstreamUnavailable."""
        conn = self._connections.get(server)
        if conn is not None and conn.usable:
            return conn
        if server not in self._servers:
            raise UpstreamUnavailable(f"no server named `{server}` in the manifest")
        async with self._locks[server]:
            conn = self._connections.get(server)
            if conn is not None and conn.usable:
                return conn
            if conn is not None and conn.lost:
                logger.warning("upstream `%s` was lost; restarting it", server)
            return await self._start(server)

    async def _start(self, server: str) -> _Connection:
        if self._closing or self._tg is None:
            raise UpstreamUnavailable(f"cannot start `{server}`: the gateway is shutting down")
        old = self._connections.get(server)
        if old is not None:
            old.ended.set()  # its task leaves its contexts: the old process is reaped, never leaked
        self._generation += 1
        conn = _Connection(server, self._generation)
        self._connections[server] = conn
        timeout_s = self.startup_timeout_s(server)
        try:
            connect = self._transport(server, timeout_s)
        except InputError as exc:
            conn.ended.set()
            conn.done.set()
            raise UpstreamUnavailable(f"cannot start `{server}`: {exc.one_line()}") from None
        self._running.add(conn)
        self._tg.start_soon(self._run, conn, connect, timeout_s, name=f"quiver upstream {server}")
        with anyio.move_on_after(timeout_s + SHUTDOWN_GRACE_S):
            await conn.ready.wait()
        if conn.session is None:
            conn.ended.set()
            raise UpstreamUnavailable(_start_failure(server, conn.error, timeout_s))
        self.starts[server] += 1
        logger.info("upstream `%s` started (%d tools)", server, len(conn.catalog))
        return conn

    async def _run(
        self,
        conn: _Connection,
        connect: Callable[[], AbstractAsyncContextManager[tuple[Any, ...]]],
        timeout_s: float,
    ) -> None:
        """The connection's task: enter the transport and session, initialize, then wait for the end."""
        with conn.scope:
            await self._connect(conn, connect, timeout_s)

    async def _connect(
        self,
        conn: _Connection,
        connect: Callable[[], AbstractAsyncContextManager[tuple[Any, ...]]],
        timeout_s: float,
    ) -> None:
        try:
            with anyio.fail_after(timeout_s) as startup:
                async with connect() as streams:
                    read_stream, write_stream = streams[0], streams[1]
                    watched = _WatchedReadStream(read_stream, conn.mark_lost)
                    async with ClientSession(
                        watched, write_stream, message_handler=conn.on_message, client_info=_CLIENT_INFO
                    ) as session:
                        await session.initialize()
                        conn.catalog = await _fetch_catalog(session, conn.server)
                        startup.deadline = math.inf
                        conn.direct = streams[2] if len(streams) > 2 else None
                        conn.session = session
                        conn.ready.set()
                        await conn.ended.wait()
        except Exception as exc:
            if conn.session is None:
                conn.error = exc
            elif not self._closing:
                logger.warning("upstream `%s` connection failed: %s", conn.server, _first_line(_leaf(exc)))
        finally:
            conn.lost = conn.lost or (conn.session is not None and not self._closing)
            conn.ended.set()
            conn.ready.set()
            conn.done.set()
            self._running.discard(conn)

    def _transport(self, server: str, timeout_s: float) -> Callable[[], AbstractAsyncContextManager[tuple[Any, ...]]]:
        """A factory for the server's transport, with variable references expanded. Raises InputError."""
        spec = self._servers[server]
        transport = spec.transport
        where = f"{spec.source}: server `{server}`" if spec.source else f"server `{server}`"
        env = self._environ

        def text(key: str) -> str | None:
            value = transport.get(key)
            return expand(str(value), env, where=where) if value is not None else None

        kind = str(transport.get("type") or ("stdio" if transport.get("command") else "http"))
        headers = {str(k): expand(str(v), env, where=where) for k, v in (transport.get("headers") or {}).items()}
        if kind == "stdio":
            command = text("command")
            if not command:
                raise InputError(f"{where} has no command to run")
            args = [expand(str(a), env, where=where) for a in transport.get("args") or []]
            extra = {str(k): expand(str(v), env, where=where) for k, v in (transport.get("env") or {}).items()}
            cwd = text("cwd")
            if cwd is not None and self._cwd is not None:
                cwd = str(self._cwd / cwd)
            elif cwd is None and self._cwd is not None:
                cwd = str(self._cwd)
            if cwd is not None and not os.path.isdir(cwd):
                raise InputError(f"{where}: working directory `{cwd}` does not exist")
            return lambda: _stdio_streams(command, args, {**env, **extra}, cwd, self._errlog)
        url = text("url")
        if not url:
            raise InputError(f"{where} has no URL")
        if kind == "sse":
            return lambda: _sse_streams(url, headers, timeout_s)
        if kind != "http":
            raise InputError(f"{where} has transport type `{kind}`", hint="use stdio, http or sse")
        return lambda: _http_streams(url, headers, timeout_s)

    # ----------------------------------------------------------------- pins and calls

    async def check_pin(self, server: str, tool: str, sha256: str) -> PinCheck:
        """Compare the live definition of `tool` with its pin, starting the server if needed (cached per connection)."""
        conn = await self._connected(server)
        return await self._check(conn, tool, sha256)

    async def _check(self, conn: _Connection, tool: str, sha256: str) -> PinCheck:
        if conn.catalog_stale and conn.session is not None:
            conn.catalog_stale = False
            try:
                with anyio.fail_after(self.startup_timeout_s(conn.server)):
                    conn.catalog = await _fetch_catalog(conn.session, conn.server)
            except Exception as exc:
                conn.catalog_stale = True
                mapped = _map_error(exc, conn, "tools/list")
                if isinstance(mapped, _SessionLost):
                    conn.mark_lost()
                    raise UpstreamUnavailable(f"upstream `{conn.server}` lost the session") from None
                raise mapped from None
            conn.checked.clear()
        key = (tool, sha256)
        check = conn.checked.get(key)
        if check is None:
            current = conn.catalog.get(tool)
            current_sha = sha256_json(current) if current is not None else None
            check = PinCheck(current_sha == sha256, current, current_sha)
            conn.checked[key] = check
        return check

    async def dispatch(self, request: CallRequest, meta: Mapping[str, JSON], timeout_s: float) -> Mapping[str, JSON]:
        """Send one tools/call attempt upstream (the `Dispatch` of quiver.runtime.protocol)."""
        merged = {k: v for k, v in request.meta.items() if _forwardable(k)}
        merged.update(meta)
        return await self.call(
            request.server, request.tool, request.arguments, meta=merged, timeout_s=timeout_s, pin=request.tool_sha256
        )

    async def call(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, JSON],
        *,
        meta: Mapping[str, JSON] | None = None,
        timeout_s: float = 30.0,
        pin: str | None = None,
    ) -> dict[str, JSON]:
        """tools/call on `server`, as wire JSON (camelCase). See the module docstring for the errors."""
        for attempt in (1, 2):
            if pin is not None and not pin:  # "" is no pin: never a match, never "unchecked"
                raise SchemaMismatch(f"`{server}/{tool}` has no pin (an empty sha256) in the manifest; recompile")
            conn = await self._connected(server)
            if pin is not None:
                check = await self._check(conn, tool, pin)
                if not check.matches:
                    raise SchemaMismatch(_mismatch_line(server, tool, pin, check))
            if not conn.usable:  # lost while we checked the pin: nothing was sent on it
                conn = await self._connected(server)
            session = conn.session
            assert session is not None
            try:
                if conn.direct is not None and not tracing_configured():  # see upstream_stdio
                    # its timeout covers the write too: no backstop needed
                    return await conn.direct.call_tool(tool, arguments, meta, timeout_s, session.protocol_version)
                with anyio.fail_after(timeout_s + BACKSTOP_S):
                    raw = await session.send_request(
                        _call_request(tool, arguments, meta), _RawResult, request_read_timeout_seconds=timeout_s
                    )
                    return raw.root
            except Exception as exc:
                mapped = _map_error(exc, conn, "tools/call")
                if isinstance(mapped, _SessionLost):
                    conn.mark_lost()
                    if attempt == 1:
                        logger.warning("upstream `%s` lost our session; reconnecting and sending again", server)
                        continue
                    raise UpstreamUnavailable(
                        f"upstream `{server}` lost the session again after reconnecting"
                    ) from None
                raise mapped from None
        raise AssertionError("unreachable")  # pragma: no cover


def _call_request(tool: str, arguments: Mapping[str, JSON], meta: Mapping[str, JSON] | None) -> types.CallToolRequest:
    request_meta = cast(types.RequestParamsMeta, dict(meta)) if meta else None
    return types.CallToolRequest(
        params=types.CallToolRequestParams(name=tool, arguments=dict(arguments), _meta=request_meta)
    )


def _forwardable(key: str) -> bool:
    return not key.startswith(_ENVELOPE_PREFIX) and key != "progressToken"


async def _fetch_catalog(session: ClientSession, server: str) -> dict[str, dict[str, Any]]:
    """Every page of tools/list, converted exactly as `quiver snapshot` converts them, so pins compare."""

    try:
        tools = await _list_all_tools(session, f"`{server}`")
    except InputError as exc:
        raise UpstreamProtocolError(exc.one_line()) from None
    return {str(t.get("name")): t for t in tools}
