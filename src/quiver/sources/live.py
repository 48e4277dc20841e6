"""Capture what a live MCP server serves: initialize, then every page of tools/list.

The server is started as a subprocess (stdio) or reached at a URL (streamable HTTP, legacy SSE), over a
handshake-era `ClientSession` so `initialize` reports serverInfo, instructions and the protocol version.
Every failure the user can fix (no such command, a server that exits, a timeout, a refused connection)
becomes one `InputError` naming the server; the child's stderr is kept out of the terminal and its last
lines go into that message. `mcp` is imported inside the functions: it costs about a second.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TextIO

from quiver.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from contextlib import AbstractAsyncContextManager

    from mcp import ClientSession
    from mcp.client.session import IncomingMessage
    from pydantic import ValidationError

    from quiver.mcp_sdk import TransportStreams

    _Connect = Callable[[], AbstractAsyncContextManager[TransportStreams]]

__all__ = ["TRANSPORTS", "CapturedCatalog", "Transport", "fetch_catalog", "fetch_catalog_sync"]

Transport = Literal["stdio", "http", "sse"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse")
MAX_PAGES = 1000
STDERR_TAIL_LINES = 5
_STDERR_TAIL_BYTES = 8192
_STDERR_LINE_CHARS = 200


@dataclass(frozen=True, slots=True)
class CapturedCatalog:
    """One server's answer to initialize and tools/list, as wire JSON (camelCase keys, no nulls)."""

    server_info: dict[str, Any]
    instructions: str | None
    protocol_version: str | None
    tools: list[dict[str, Any]]


async def fetch_catalog(
    *,
    transport: str,
    command: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    name: str | None = None,
) -> CapturedCatalog:
    """Connect to one MCP server, run initialize and the paginated tools/list, and disconnect.

    `transport` "stdio" runs `command` with `args` in `cwd`, its environment being ours plus `env`;
    "http" (streamable HTTP) and "sse" connect to `url`, sending `headers`. Start-up, initialize and
    every page of tools/list together are bounded by `timeout_s`; stopping a subprocess afterwards takes
    at most the SDK's shutdown grace (close stdin, 2 s, SIGTERM, 2 s, SIGKILL). Errors name the server
    by its configured `name` (with its command or URL) when given, else by its command or URL.

    Raises:
        InputError: the arguments do not name a server, or the server cannot be started or reached,
            exits, answers with something that is not MCP, loops its cursors, or exceeds `timeout_s`.
    """
    if transport not in TRANSPORTS:
        raise InputError(f"unknown MCP transport `{transport}`", hint="use one of: stdio, http, sse")
    if transport == "stdio":
        if not command:
            raise InputError("a stdio MCP server needs a command to run")
        target = shlex.join([command, *args])
        if cwd is not None and not os.path.isdir(cwd):
            shown = _label(target, name)
            raise InputError(f"working directory `{cwd}` of {shown} does not exist", hint="fix its `cwd`")
        # The child's stderr goes to a file, not the terminal; its tail explains a failure.
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
            attempt = _Attempt(target=target, transport=transport, errlog=errlog, name=name)
            return await _capture(partial(_stdio_streams, command, args, env, cwd, errlog), attempt, timeout_s)
    if not url:
        raise InputError(f"an MCP server over {transport} needs a URL")
    connect: _Connect = partial(_http_streams if transport == "http" else _sse_streams, url, headers, timeout_s)
    return await _capture(connect, _Attempt(target=url, transport=transport, name=name), timeout_s)


def fetch_catalog_sync(
    *,
    transport: str,
    command: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    name: str | None = None,
) -> CapturedCatalog:
    """`fetch_catalog` for synchronous callers: runs it in a fresh event loop; Ctrl-C raises KeyboardInterrupt
    once the capture has stopped its server (`_interruptible`)."""
    import anyio

    return anyio.run(
        _interruptible,
        partial(
            fetch_catalog,
            transport=transport,
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            url=url,
            headers=headers,
            timeout_s=timeout_s,
            name=name,
        ),
    )


async def _interruptible(capture: Callable[[], Awaitable[CapturedCatalog]]) -> CapturedCatalog:
    """Run `capture`; SIGINT cancels it through an anyio cancel scope, then raises KeyboardInterrupt.

    asyncio's Runner handles Ctrl-C with a plain `signal.signal` handler and no wakeup fd: when the kernel
    delivers the SIGINT to another thread (asyncio's child watcher waits in `waitpid` in one), the main
    thread, asleep in epoll, runs the handler only when epoll next returns, at the capture's timeout.
    `loop.add_signal_handler` sets the wakeup fd, so the loop wakes whichever thread took the signal. A
    cancelled scope is cancelled again at every checkpoint until it exits (one native `task.cancel()` can be
    absorbed by the SDK's shielded shutdown). Whatever the capture raises once interrupted (a transport closed
    under it, say) is the interrupt. Off the main thread, where no handler can be installed, the capture runs
    as it is.
    """
    import asyncio
    import signal

    import anyio

    interrupted = False
    loop = asyncio.get_running_loop()
    with anyio.CancelScope() as scope:

        def on_sigint() -> None:
            nonlocal interrupted
            interrupted = True
            scope.cancel()

        try:
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
            return await capture()
        try:
            result = await capture()
        except Exception:
            if interrupted:
                raise KeyboardInterrupt from None
            raise
        finally:
            loop.remove_signal_handler(signal.SIGINT)
    if interrupted:  # the scope caught its cancellation, or the capture ended just as Ctrl-C came
        raise KeyboardInterrupt
    return result


@dataclass(slots=True)
class _Attempt:
    """One capture: what it talks to, how far it got, and what the server said besides MCP."""

    target: str
    transport: str
    errlog: TextIO | None = None
    step: str = "start-up"
    stray_lines: list[str] = field(default_factory=list)
    name: str | None = None  # the server's configured name, for messages

    @property
    def label(self) -> str:
        return _label(self.target, self.name)

    async def on_message(self, message: IncomingMessage) -> None:
        """ClientSession's message handler: remember output that is not JSON-RPC, ignore notifications."""
        if isinstance(message, Exception):
            self.stray_lines.append(_stray_line(message))

    def failure(self, what: str, *, timed_out: bool = False) -> InputError:
        """An InputError saying `what` went wrong, with the evidence the server left."""
        message = f"{self.label} {what}"
        if self.stray_lines:
            message += (
                f"; it wrote {len(self.stray_lines)} line(s) that are not JSON-RPC, the first: `{self.stray_lines[0]}`"
            )
        tail = _stderr_tail(self.errlog) if self.errlog is not None else ""
        if tail:
            message += f"; server stderr: {tail}"
        if self.transport == "stdio":
            hint = "check that the command runs on its own and writes only MCP messages to stdout"
        else:
            hint = f"check that an MCP server answers {self.transport} requests at that URL"
        return InputError(message, hint=f"{hint}, or raise the timeout" if timed_out else hint)


async def _capture(connect: _Connect, attempt: _Attempt, timeout_s: float) -> CapturedCatalog:
    import anyio
    from mcp import ClientSession

    try:
        with anyio.fail_after(timeout_s):
            async with (
                connect() as (read_stream, write_stream),
                ClientSession(read_stream, write_stream, message_handler=attempt.on_message) as session,
            ):
                attempt.step = "initialize"
                init = await session.initialize()
                attempt.step = "tools/list"
                tools = await _list_all_tools(session, attempt.label)
                attempt.step = "shutdown"
    except TimeoutError as exc:
        raise attempt.failure(
            f"gave no complete answer within {timeout_s:g} s (during {attempt.step})", timed_out=True
        ) from exc
    except Exception as exc:
        leaf = _leaf(exc)
        if isinstance(leaf, InputError):  # our own verdict, such as a looping cursor
            raise leaf from None
        if not _is_connection_failure(exc):
            raise
        if isinstance(leaf, OSError) and attempt.step == "start-up" and attempt.transport == "stdio":
            executable = shlex.split(attempt.target)[0]
            raise InputError(
                f"cannot start {attempt.label}: {leaf.strerror or leaf}",
                hint=f"check that `{executable}` is installed, executable and on PATH",
            ) from exc
        if isinstance(leaf, TimeoutError):
            raise attempt.failure(f"timed out during {attempt.step}", timed_out=True) from exc
        if _is_connection_closed(leaf):
            raise attempt.failure(f"closed the connection during {attempt.step}") from exc
        raise attempt.failure(f"failed during {attempt.step}: {_detail(leaf)}") from exc
    return CapturedCatalog(
        server_info=init.server_info.model_dump(mode="json", by_alias=True, exclude_none=True),
        instructions=init.instructions,
        protocol_version=init.protocol_version,
        tools=tools,
    )


async def _list_all_tools(session: ClientSession, label: str) -> list[dict[str, Any]]:
    """Follow `nextCursor` to the end; a repeated cursor or more than MAX_PAGES pages is an error."""
    import mcp.types as types
    from mcp import MCPError
    from pydantic import ValidationError

    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        try:
            page = await session.list_tools(params=params)
        except MCPError as exc:
            if cursor is None and exc.code == types.METHOD_NOT_FOUND:
                return tools  # a server without the tools capability serves no tools
            raise
        except ValidationError as exc:  # not MCP's Tool shape: name the tools and what is wrong with each
            raise _invalid_listing(label, exc) from None
        tools.extend(tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:  # absent, null or "" all end the listing
            return tools
        if cursor in seen:
            raise InputError(
                f"{label} repeated tools/list cursor `{cursor}` after {len(seen) + 1} pages",
                hint="the server's pagination loops; report it to the server's authors",
            )
        seen.add(cursor)
    raise InputError(
        f"{label} returned more than {MAX_PAGES} pages of tools/list",
        hint="the server's pagination does not end; report it to the server's authors",
    )


def _label(target: str, name: str | None) -> str:
    """How messages name a server: `server `NAME` (`COMMAND`)`, or `MCP server `COMMAND`` without a name."""
    return f"server `{name}` (`{target}`)" if name else f"MCP server `{target}`"


@asynccontextmanager
async def _stdio_streams(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | None,
    errlog: TextIO,
) -> AsyncIterator[TransportStreams]:
    from mcp import StdioServerParameters, stdio_client

    # stdio_client passes only a safe subset of our environment (HOME, PATH, ...) plus `env`;
    # a server launched from a project config expects to inherit the whole of it, as a shell would.
    params = StdioServerParameters(command=command, args=list(args), env={**os.environ, **(env or {})}, cwd=cwd)
    async with stdio_client(params, errlog=errlog) as streams:
        yield streams


@asynccontextmanager
async def _http_streams(
    url: str, headers: Mapping[str, str] | None, timeout_s: float
) -> AsyncIterator[TransportStreams]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(headers=dict(headers or {}), timeout=httpx2.Timeout(timeout_s))
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


@asynccontextmanager
async def _sse_streams(
    url: str, headers: Mapping[str, str] | None, timeout_s: float
) -> AsyncIterator[TransportStreams]:
    from mcp.client.sse import sse_client

    async with sse_client(url, headers=dict(headers or {}), timeout=timeout_s, sse_read_timeout=timeout_s) as streams:
        yield streams


def _is_connection_failure(exc: BaseException) -> bool:
    """Whether `exc` (or every leaf of an exception group) is the server's fault, not quiver's."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_connection_failure(inner) for inner in exc.exceptions)
    import anyio
    import httpx2
    import pydantic
    from mcp import MCPError

    expected: tuple[type[BaseException], ...] = (
        MCPError,  # a JSON-RPC error, or the SDK's "connection closed"
        OSError,
        TimeoutError,
        httpx2.HTTPError,
        httpx2.InvalidURL,
        httpx2.StreamError,
        anyio.BrokenResourceError,
        anyio.ClosedResourceError,
        anyio.EndOfStream,
        pydantic.ValidationError,  # a malformed initialize or tools/list result
        InputError,
    )
    if isinstance(exc, expected):
        return True
    # ClientSession.initialize rejects a protocol version it does not speak with a bare RuntimeError.
    return type(exc) is RuntimeError and "protocol version" in str(exc)


INVALID_SHOWN = 3  # tools named per problem in the message about an invalid tools/list answer


def _invalid_listing(label: str, exc: ValidationError) -> InputError:
    """The error for a tools/list page the SDK refused to read (it checks every answer against MCP's schema,
    raw requests included): which tools, by position, and the first problem of each. A snapshot never locks
    part of a server: the lock keeps what it held for it."""
    errors = exc.errors()
    first: dict[int, str] = {}
    for error in errors:
        loc = tuple(error["loc"])
        if len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int) and loc[1] not in first:
            first[loc[1]] = _problem(loc[2:], error["msg"])
    if not first:  # the tools are not what is wrong: the page itself (its cursor, its shape) is
        shown = _problem(tuple(errors[0]["loc"]), errors[0]["msg"]) if errors else _detail(exc)
        return InputError(
            f"{label} answered tools/list with something that is not MCP: {shown}",
            hint="report it to the server's authors",
        )
    by_problem: dict[str, list[int]] = {}
    for n, what in sorted(first.items()):
        by_problem.setdefault(what, []).append(n)
    listed = []
    for what, where in by_problem.items():
        places = ", ".join(f"tools[{n}]" for n in where[:INVALID_SHOWN])
        more = f" and {len(where) - INVALID_SHOWN} more" if len(where) > INVALID_SHOWN else ""
        listed.append(f"{what}: {places}{more}")
    return InputError(
        f"{label} serves {len(first)} tool(s) that are not valid MCP: {'; '.join(listed)}",
        hint="a newer release of the server may fix it (report it to its authors); or fix its tools/list JSON by "
        "hand and lock that: `quiver snapshot --import FILE --server NAME`",
    )


def _problem(path: tuple[object, ...], message: str) -> str:
    """`inputSchema.type is missing (MCP requires "object")`, from a pydantic error's path and message."""
    where = ".".join(str(part) for part in path) or "the tool"
    message = message.rstrip(".")
    if message == "Field required":
        required = ' (MCP requires "object")' if path == ("inputSchema", "type") else ""
        return f"{where} is missing{required}"
    return f"{where}: {message}"


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _is_connection_closed(exc: BaseException) -> bool:
    import mcp.types as types
    from mcp import MCPError

    return isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED


def _detail(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _stray_line(exc: Exception) -> str:
    """The offending line of a transport parse error, shortened; else the error's first line."""
    import pydantic

    if isinstance(exc, pydantic.ValidationError):
        for error in exc.errors():
            if isinstance(error.get("input"), str):
                return str(error["input"])[:80]
    return _detail(exc)[:80]


def _stderr_tail(errlog: TextIO) -> str:
    """The last few non-blank lines the child wrote to `errlog`, joined on one line."""
    with open(errlog.fileno(), "rb", closefd=False) as raw:  # the child wrote bytes past our text layer
        size = raw.seek(0, os.SEEK_END)
        start = raw.seek(max(0, size - _STDERR_TAIL_BYTES))
        text = raw.read().decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if start > 0 and lines:
        lines = lines[1:]  # the first line is probably cut
    return " | ".join(line[:_STDERR_LINE_CHARS] for line in lines[-STDERR_TAIL_LINES:])
