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

`meta` (from the executor: idempotency key, trace context) is merged over `CallRequest.meta` into the
request's `_meta`; keys of the 2026-07-28 envelope (`io.modelcontextprotocol/*`) and `progressToken`
are never forwarded.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO, cast

import anyio
import anyio.abc
import mcp.types as types
from mcp import ClientSession, MCPError
from mcp.client._transport import TransportStreams
from mcp.client.session import IncomingMessage
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage
from pydantic import RootModel, ValidationError

from quiver import __version__
from quiver.errors import InputError
from quiver.model import JSON, sha256_json
from quiver.runtime._guard import guarded
from quiver.runtime._manifest import ManifestServer
from quiver.runtime.protocol import (
    CallRequest,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
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
_SESSION_LOST_MESSAGES = ("session not found", "session terminated")
_CLIENT_INFO = types.Implementation(name="quiver-gateway", version=__version__)


class _RawResult(RootModel[dict[str, Any]]):
    """A result kept as wire JSON: the SDK validates it against the protocol; we pass it on untouched."""


class UpstreamConnectionLost(UpstreamTimeout):
    """The connection ended while the request was in flight: it may or may not have run."""


class SchemaMismatch(UpstreamProtocolError):
    """The upstream's definition of the tool no longer matches the manifest pin."""

    def __init__(self, message: str) -> None:
        super().__init__(message, None, transient=False)


class _SessionLost(Exception):
    """An HTTP server no longer knows our session: the request was rejected, not run."""


@dataclass(frozen=True, slots=True)
class PinCheck:
    """The upstream's current definition of one tool against its pin."""

    matches: bool
    current: Mapping[str, JSON] | None  # None: the server no longer serves the tool
    current_sha256: str | None


@dataclass(eq=False)
class _Connection:
    """One session with one server; its contexts live in `UpstreamManager._run`."""

    server: str
    generation: int
    session: ClientSession | None = None
    error: BaseException | None = None
    catalog: dict[str, dict[str, Any]] = field(default_factory=dict)
    catalog_stale: bool = False
    checked: dict[tuple[str, str], PinCheck] = field(default_factory=dict)
    ready: anyio.Event = field(default_factory=anyio.Event)
    ended: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)  # its task's, for `aclose`
    lost: bool = False

    @property
    def usable(self) -> bool:
        return self.session is not None and not self.ended.is_set()

    def mark_lost(self) -> None:
        if not self.ended.is_set():
            self.lost = True
            self.ended.set()

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            logger.info("upstream `%s` changed its tool list; its pins will be checked again", self.server)
            self.catalog_stale = True
        elif isinstance(message, Exception):
            logger.warning("upstream `%s` sent something that is not MCP: %s", self.server, _first_line(message))


class _WatchedReadStream:
    """A transport's read stream that reports its end: how a crashed server is noticed between calls."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


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
        connect: Callable[[], AbstractAsyncContextManager[TransportStreams]],
        timeout_s: float,
    ) -> None:
        """The connection's task: enter the transport and session, initialize, then wait for the end."""
        with conn.scope:
            await self._connect(conn, connect, timeout_s)

    async def _connect(
        self,
        conn: _Connection,
        connect: Callable[[], AbstractAsyncContextManager[TransportStreams]],
        timeout_s: float,
    ) -> None:
        try:
            with anyio.fail_after(timeout_s) as startup:
                async with connect() as (read_stream, write_stream):
                    watched = _WatchedReadStream(read_stream, conn.mark_lost)
                    async with ClientSession(
                        watched, write_stream, message_handler=conn.on_message, client_info=_CLIENT_INFO
                    ) as session:
                        await session.initialize()
                        conn.catalog = await _fetch_catalog(session, conn.server)
                        startup.deadline = math.inf
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

    def _transport(self, server: str, timeout_s: float) -> Callable[[], AbstractAsyncContextManager[TransportStreams]]:
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
        request_meta = cast(types.RequestParamsMeta, dict(meta)) if meta else None
        params = types.CallToolRequestParams(name=tool, arguments=dict(arguments), _meta=request_meta)
        request = types.CallToolRequest(params=params)
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
                with anyio.fail_after(timeout_s + BACKSTOP_S):
                    raw = await session.send_request(request, _RawResult, request_read_timeout_seconds=timeout_s)
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


def _map_error(exc: BaseException, conn: _Connection, what: str) -> Exception:
    """The protocol's UpstreamError (or _SessionLost) for an exception raised by the SDK."""
    leaf = _leaf(exc)
    if isinstance(leaf, UpstreamError):
        return leaf
    if isinstance(leaf, MCPError):
        if leaf.code == types.REQUEST_TIMEOUT:
            return UpstreamTimeout(f"upstream `{conn.server}` did not answer {what}: {leaf.message}")
        if leaf.code == types.CONNECTION_CLOSED:
            conn.mark_lost()
            return UpstreamConnectionLost(
                f"upstream `{conn.server}` closed the connection during {what}; the call may or may not have run"
            )
        if leaf.code == types.INVALID_REQUEST and leaf.message.strip().lower() in _SESSION_LOST_MESSAGES:
            return _SessionLost(leaf.message)
        return UpstreamProtocolError(
            f"upstream `{conn.server}` answered {what} with error {leaf.code}: {leaf.message}",
            leaf.code,
            transient=leaf.code == types.INTERNAL_ERROR,
        )
    if isinstance(leaf, TimeoutError):
        return UpstreamTimeout(f"upstream `{conn.server}` did not answer {what} in time")
    if isinstance(leaf, anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream | OSError):
        conn.mark_lost()
        return UpstreamConnectionLost(
            f"upstream `{conn.server}` connection failed during {what} ({_first_line(leaf)}); "
            "the call may or may not have run"
        )
    if isinstance(leaf, ValidationError):
        return UpstreamProtocolError(f"upstream `{conn.server}` sent an invalid {what} result", None)
    return UpstreamProtocolError(f"upstream `{conn.server}` failed during {what}: {_first_line(leaf)}", None)


def _mismatch_line(server: str, tool: str, pin: str, check: PinCheck) -> str:
    if check.current is None:
        return f"upstream `{server}` no longer serves tool `{tool}` (pinned sha256 {pin[:12]})"
    return f"upstream `{server}` serves `{tool}` with sha256 {str(check.current_sha256)[:12]}, pinned {pin[:12]}"


def _forwardable(key: str) -> bool:
    return not key.startswith(_ENVELOPE_PREFIX) and key != "progressToken"


async def _fetch_catalog(session: ClientSession, server: str) -> dict[str, dict[str, Any]]:
    """Every page of tools/list, converted exactly as `quiver snapshot` converts them, so pins compare."""
    from quiver.sources.live import _list_all_tools

    try:
        tools = await _list_all_tools(session, f"`{server}`")
    except InputError as exc:
        raise UpstreamProtocolError(exc.one_line()) from None
    return {str(t.get("name")): t for t in tools}


def _start_failure(server: str, error: BaseException | None, timeout_s: float) -> str:
    leaf = _leaf(error) if error is not None else None
    if leaf is None or isinstance(leaf, TimeoutError):
        return f"upstream `{server}` did not start within {timeout_s:g} s (no initialize answer and tool list)"
    if isinstance(leaf, FileNotFoundError | PermissionError):
        return f"cannot start upstream `{server}`: {leaf.strerror or leaf} ({leaf.filename})"
    if isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED:
        return f"upstream `{server}` exited or closed the connection during start-up"
    return f"cannot start upstream `{server}`: {_first_line(leaf)}"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


@asynccontextmanager
async def _stdio_streams(
    command: str, args: list[str], env: Mapping[str, str], cwd: str | None, errlog: TextIO | None
) -> AsyncIterator[TransportStreams]:
    from mcp import StdioServerParameters, stdio_client

    # The whole environment, as a shell would pass it (stdio_client alone passes a safe subset); on Linux
    # under the guard that kills the server when the gateway dies (`quiver.runtime._guard`).
    command, args = guarded(command, args, env, cwd)
    params = StdioServerParameters(command=command, args=args, env=dict(env), cwd=cwd)
    async with stdio_client(params, errlog=errlog or sys.stderr) as streams:
        yield streams


@asynccontextmanager
async def _http_streams(url: str, headers: Mapping[str, str], timeout_s: float) -> AsyncIterator[TransportStreams]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # Reads are unbounded at this level (the standalone GET stream idles); each request has its own timeout.
    client = httpx2.AsyncClient(headers=dict(headers), timeout=httpx2.Timeout(timeout_s, read=None))
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


@asynccontextmanager
async def _sse_streams(url: str, headers: Mapping[str, str], timeout_s: float) -> AsyncIterator[TransportStreams]:
    from mcp.client.sse import sse_client

    async with sse_client(url, headers=dict(headers), timeout=timeout_s, sse_read_timeout=3600.0) as streams:
        yield streams
