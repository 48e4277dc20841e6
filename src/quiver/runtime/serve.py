"""Run a gateway over stdio or streamable HTTP until the client leaves or a signal arrives.

stdio: stdout carries only the protocol (fd 1 points at stderr while serving, so stray output cannot
corrupt it), logs go to stderr; the thread-free transport of `_stdio` when stdin and stdout are pipes,
else the SDK's `stdio_server`. HTTP: the SDK's streamable-HTTP app behind a bearer-token check (compared
with `hmac.compare_digest`; anything else gets 401 and is logged), bound to 127.0.0.1 unless another
host is named, served by uvicorn. Either way, leaving stops every upstream server. Recovery and
reconcile sweeps run every `QUIVER_SWEEP_INTERVAL_S` seconds (default 5).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping, MutableMapping, Sequence
from functools import partial
from types import FrameType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import uvicorn

from quiver.runtime import _stdio
from quiver.runtime._throttle import Throttle, throttle_logger
from quiver.runtime._uvicorn_limits import HttpLimits, limited_protocol
from quiver.runtime.gateway import DEFAULT_SWEEP_INTERVAL_S, Gateway

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

__all__ = ["BearerAuth", "serve_http", "serve_stdio"]

logger = logging.getLogger(__name__)
throttle_logger("mcp.server.transport_security")  # its "Invalid Host header" is a line per refused request

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

GRACEFUL_SHUTDOWN_S = 5
STOP_GRACE_S = 2.0  # for the calls in flight to be cancelled and recorded after a signal
MCP_PATH = "/mcp"


async def serve_stdio(gateway: Gateway) -> int:
    """Serve one client over stdin/stdout until it closes stdin, or SIGTERM/SIGINT; returns the exit code.

    0 when the client left or after SIGTERM, 130 after SIGINT (`exit_code`).

    Either way the calls in flight are cancelled first (the executor records each: a write in flight is
    `unknown_outcome`), then every upstream is stopped, while SIGTERM/SIGINT are still handled: a client
    that signals during that shutdown (the usual "close stdin, SIGTERM after 2 s") gets an immediate exit,
    and the upstreams' guards (`quiver.runtime._guard`) take their servers with it.
    """
    from mcp.server.stdio import stdio_server

    server = gateway.server
    serving = anyio.CancelScope()
    sweeping = anyio.CancelScope()
    stopped = anyio.Event()
    received: list[int] = []

    async def sweeps() -> None:
        with sweeping:
            await gateway.sweep_orphans(sweep_interval())

    async with gateway, anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signals, gateway, (sweeping, serving), stopped, received)
        tg.start_soon(sweeps)
        transport = _stdio.stdio_streams() if _stdio.usable() else stdio_server()
        with serving:
            async with transport as (read_stream, write_stream):
                logger.info("serving agent `%s` over stdio", gateway.manifest.agent_id)
                if isinstance(read_stream, _stdio._LineReader) and isinstance(write_stream, _stdio._LineWriter):
                    init = server.create_initialization_options()
                    await _stdio.serve(server, read_stream, write_stream, init, gateway, on_end=sweeping.cancel)
                else:
                    await server.run(read_stream, write_stream, server.create_initialization_options())
        stopped.set()
        # no sweep starts a reconcile once serving has stopped (after a signal, none has since it came): what
        # the stop left unknown, the next gateway settles; a sweep racing the shutdown would ask an upstream
        # that is being stopped
        sweeping.cancel()
        logger.info("the client left: stopping the upstream servers")
        await gateway.upstreams.aclose()
        tg.cancel_scope.cancel()
    return exit_code(received)


def exit_code(received: list[int]) -> int:
    """130 (128 + SIGINT, as shells report Ctrl-C) when the first signal was SIGINT; else 0: the client left,
    or SIGTERM asked for the stop that a supervisor (systemd, docker, kubernetes) counts as clean."""
    return 128 + signal.SIGINT if received and received[0] == signal.SIGINT else 0


def sweep_interval() -> float:
    """Seconds between recovery and reconcile sweeps: `QUIVER_SWEEP_INTERVAL_S`, else the gateway's default."""

    try:
        value = float(os.environ.get("QUIVER_SWEEP_INTERVAL_S", DEFAULT_SWEEP_INTERVAL_S))
    except ValueError:
        return DEFAULT_SWEEP_INTERVAL_S
    return value if value > 0 else DEFAULT_SWEEP_INTERVAL_S


async def _stop_on_signals(
    gateway: Gateway,
    scopes: tuple[anyio.CancelScope, anyio.CancelScope],
    stopped: anyio.Event,
    received: list[int],
) -> None:
    """On SIGTERM/SIGINT: stop the sweeps, then cancel the calls in flight (they are recorded) and let
    serve_stdio stop the upstreams. `scopes` is (the sweeps', serving's): in that order, no sweep settles a
    call the stop has just recorded, so what the stop leaves unknown is left to the next gateway.

    The SDK's `stdio_server` (the fallback transport) reads stdin in a worker thread that a cancellation
    cannot interrupt: if serving has not stopped within STOP_GRACE_S, stop the upstreams and exit here.
    A second signal exits at once (the guards kill the upstreams).
    """
    sweeping, serving = scopes
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            received.append(int(signum))
            if not serving.cancel_called:
                logger.info("received %s: recording the calls in flight, then stopping the upstream servers", name)
                sweeping.cancel()
                serving.cancel()
                with anyio.move_on_after(STOP_GRACE_S):
                    await stopped.wait()
                if stopped.is_set():
                    continue  # serve_stdio stops the upstreams; a further signal hurries it
                await gateway.upstreams.aclose()
            else:
                logger.info("received %s again: exiting now", name)
            logging.shutdown()
            sys.stderr.flush()
            os._exit(exit_code(received))


async def serve_http(
    gateway: Gateway,
    host: str,
    port: int,
    token: str,
    *,
    ready: Callable[[str], None] | None = None,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
) -> int:
    """Serve streamable HTTP at http://HOST:PORT/mcp, requiring `Authorization: Bearer TOKEN`, until
    SIGTERM/SIGINT; returns the exit code as `serve_stdio` does (0 after SIGTERM, 130 after SIGINT).

    Requests must name an allowed `Host` (and, when they carry one, an allowed `Origin`: browsers do): on
    loopback the SDK's loopback names plus `allow_hosts`/`allow_origins`; beyond loopback only the bound
    address and `allow_hosts`/`allow_origins` (`transport_security`). Connections are bounded by
    `http_limits()` (header and body timeouts, a connection limit); refusals are logged a few lines a flood."""
    security = transport_security(host, port, allow_hosts, allow_origins)
    if not _is_loopback(host):
        logger.warning(
            "listening on %s: reachable from other machines; guarded by the bearer token and the Host allow-list %s",
            host, ", ".join(security.allowed_hosts),
        )  # fmt: skip
    inner = gateway.server.streamable_http_app(host=host, streamable_http_path=MCP_PATH, transport_security=security)
    app = BearerAuth(inner, token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
        bound_port = sock.getsockname()[1]
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        url = f"http://{shown}:{bound_port}{MCP_PATH}"
        config = uvicorn_config(app, http_limits())
        async with gateway, anyio.create_task_group() as sweeps:
            sweeps.start_soon(gateway.sweep_orphans, sweep_interval())
            logger.info("serving agent `%s` at %s", gateway.manifest.agent_id, url)
            server = _Uvicorn(config, ready=partial(ready, url) if ready is not None else None)
            await server.serve(sockets=[sock])
            sweeps.cancel_scope.cancel()
    finally:
        sock.close()
    return exit_code(server.received)


def uvicorn_config(app: Any, limits: HttpLimits | None = None) -> uvicorn.Config:
    """uvicorn's settings for the gateway: no access log, lifespan on, our graceful shutdown bound, and
    httptools' C parser (a dependency) rather than h11, in the protocol that enforces `limits`."""
    limits = limits or http_limits()
    return uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        http=limited_protocol(limits),
        limit_concurrency=limits.max_connections,
    )


HEADER_TIMEOUT_S, BODY_TIMEOUT_S, MAX_CONNECTIONS = 10.0, 30.0, 256


def http_limits(environ: Mapping[str, str] | None = None) -> HttpLimits:
    """The HTTP limits: QUIVER_HTTP_HEADER_TIMEOUT_S, QUIVER_HTTP_BODY_TIMEOUT_S, QUIVER_HTTP_MAX_CONNECTIONS,
    else 10 s, 30 s and 256 (a value that is not a positive number keeps the default)."""
    env = os.environ if environ is None else environ

    def positive(name: str, default: float) -> float:
        try:
            value = float(env.get(name, default))
        except ValueError:
            return default
        return value if value > 0 else default

    return HttpLimits(
        header_timeout_s=positive("QUIVER_HTTP_HEADER_TIMEOUT_S", HEADER_TIMEOUT_S),
        body_timeout_s=positive("QUIVER_HTTP_BODY_TIMEOUT_S", BODY_TIMEOUT_S),
        max_connections=int(positive("QUIVER_HTTP_MAX_CONNECTIONS", MAX_CONNECTIONS)),
    )


_LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


def transport_security(
    host: str, port: int, allow_hosts: Sequence[str], allow_origins: Sequence[str]
) -> TransportSecuritySettings:
    """The Host/Origin allow-lists (the SDK's DNS-rebinding protection), on whatever address the gateway binds."""
    from mcp.server.transport_security import TransportSecuritySettings

    if _is_loopback(host):
        hosts, origins = [*_LOOPBACK_HOSTS], [*_LOOPBACK_ORIGINS]
    else:
        shown = f"[{host}]" if ":" in host else host
        hosts = [] if host in ("0.0.0.0", "::") else [f"{shown}:*", shown]
        origins = []
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *allow_hosts],
        allowed_origins=[*origins, *allow_origins],
    )


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, stopping on SIGTERM/SIGINT without re-raising them afterwards: upstreams still run."""

    def __init__(self, config: uvicorn.Config, ready: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.received: list[int] = []
        self._ready = ready  # told once SIGTERM/SIGINT are ours (the socket already listens)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.received.append(int(sig))
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            if self._ready is not None:
                self._ready()
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            if self._ready is not None:
                self._ready()
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


class BearerAuth:
    """ASGI middleware: HTTP requests must carry `Authorization: Bearer <token>`; lifespan passes through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token.strip():
            raise ValueError("the bearer token is empty")
        self._app = app
        self._token = token.strip().encode("utf-8")
        self._refusals = Throttle(logger)  # a flood of refusals is a few lines, not a line per request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self._authorized(scope):
            client = scope.get("client")
            self._refusals.warn(
                "unauthorized",
                "refused %s %s from %s: missing or wrong bearer token",
                scope.get("method", ""),
                scope.get("path", ""),
                f"{client[0]}:{client[1]}" if client else "unknown",
            )
            await _unauthorized(send)
            return
        await self._app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, credential = bytes(value).partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), self._token)
        return False


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Unauthorized: bearer token required"}}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="quiver"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def write_ready(url: str) -> None:
    """The readiness line on stderr that scripts (and the tests) wait for."""
    sys.stderr.write(f"quiver serve: listening on {url}\n")
    sys.stderr.flush()
