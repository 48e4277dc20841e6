"""`quiver serve --http` against hostile clients, through a real gateway process (issue 26): half-sent
requests and stalled bodies are closed, connections are limited, a flood of refused requests is a few log
lines, and beyond loopback only the allowed Host and Origin headers are served."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from _http_gateway import HANG_GUARD_S, http_gateway
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

TOKEN = "hardening-test-token-0123456789"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.port is not None
    return ("127.0.0.1" if parts.hostname in ("0.0.0.0", "::") else str(parts.hostname)), parts.port


def closed_by_server(sock: socket.socket) -> bool:
    """Blocks until the server closes the connection (an event); the socket timeout is only a hang guard."""
    sock.settimeout(HANG_GUARD_S)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


async def works(url: str) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        assert (await session.list_tools()).tools


async def test_half_sent_requests_and_stalled_bodies_are_closed(
    demo_manifest: Path, tmp_path: Path, upstream_env: Callable[..., dict[str, str]]
) -> None:
    env = upstream_env(QUIVER_HTTP_HEADER_TIMEOUT_S="1", QUIVER_HTTP_BODY_TIMEOUT_S="1")
    with anyio.fail_after(HANG_GUARD_S):
        async with http_gateway(demo_manifest, TOKEN, env, tmp_path, ["--no-ledger"]) as gateway:
            host, port = address(gateway.url)
            held = []
            for i in range(60):
                sock = socket.create_connection((host, port))
                if i % 2:  # headers never finished
                    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ")
                else:  # a body that stops a tenth of the way in
                    sock.sendall(
                        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
                        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode()
                        + b"{" * 100
                    )
                held.append(sock)
            for sock in held:  # was: all held open, none closed
                assert await anyio.to_thread.run_sync(closed_by_server, sock)
                sock.close()
            await works(gateway.url)
    log = gateway.log()
    assert "did not arrive within 1 s" in log
    assert len(re.findall(r"closed the connection of", log)) <= 3  # throttled: not a line per connection


async def test_connections_beyond_the_limit_are_closed_and_the_gateway_stays_up(
    demo_manifest: Path, tmp_path: Path, upstream_env: Callable[..., dict[str, str]]
) -> None:
    env = upstream_env(QUIVER_HTTP_MAX_CONNECTIONS="8", QUIVER_HTTP_HEADER_TIMEOUT_S="600")
    with anyio.fail_after(HANG_GUARD_S):
        async with http_gateway(demo_manifest, TOKEN, env, tmp_path, ["--no-ledger"]) as gateway:
            host, port = address(gateway.url)
            idle = [socket.create_connection((host, port)) for _ in range(8)]
            for sock in idle:
                sock.sendall(b"GET /mcp HTTP/1.1\r\n")  # the connection is open and counted
            extra = socket.create_connection((host, port))
            assert await anyio.to_thread.run_sync(closed_by_server, extra)
            extra.close()
            for sock in idle:
                sock.close()
            await works(gateway.url)  # slots free again once the idle ones left
    assert "closed a connection: 8 are open, the limit" in gateway.log()


async def test_a_flood_of_refused_requests_is_a_few_log_lines(
    demo_manifest: Path, tmp_path: Path, upstream_env: Callable[..., dict[str, str]]
) -> None:
    with anyio.fail_after(HANG_GUARD_S):
        async with http_gateway(demo_manifest, TOKEN, upstream_env(), tmp_path, ["--no-ledger"]) as gateway:
            async with httpx2.AsyncClient() as http:
                for i in range(300):
                    token = {"Authorization": "Bearer wrong"} if i % 2 else {}
                    answer = await http.post(gateway.url, json=INITIALIZE, headers={**HEADERS, **token})
                    assert answer.status_code == 401
            await works(gateway.url)
    refusals = [line for line in gateway.stderr if "missing or wrong bearer token" in line]
    assert 1 <= len(refusals) <= 3, refusals  # was 300 lines; one per 10 s window, with a count


async def test_beyond_loopback_only_the_allowed_host_and_origin_are_served(
    demo_manifest: Path, tmp_path: Path, upstream_env: Callable[..., dict[str, str]]
) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "quiver", "serve", str(demo_manifest), "--http", "0.0.0.0:0", "--no-ledger"],
        capture_output=True, text=True, timeout=HANG_GUARD_S, stdin=subprocess.DEVNULL,
        env={**upstream_env(), "QUIVER_TOKEN": TOKEN},
    )  # fmt: skip
    assert refused.returncode == 2 and "--allow-host" in refused.stderr  # every address: name the host first
    extra = ["--no-ledger", "--allow-host", "127.0.0.1:*", "--allow-origin", "https://app.example.com"]
    with anyio.fail_after(HANG_GUARD_S):
        async with http_gateway(demo_manifest, TOKEN, upstream_env(), tmp_path, extra, host="0.0.0.0") as gateway:
            host, port = address(gateway.url)
            url = f"http://{host}:{port}/mcp"
            auth = {**HEADERS, "Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient() as http:
                assert (
                    await http.post(url, json=INITIALIZE, headers={**auth, "Host": "evil.example"})
                ).status_code == 421
                evil = {**auth, "Origin": "https://evil.example"}
                assert (await http.post(url, json=INITIALIZE, headers=evil)).status_code == 403
                good = {**auth, "Origin": "https://app.example.com"}
                assert (await http.post(url, json=INITIALIZE, headers=good)).status_code == 200
            await works(url)
    assert "guarded by the bearer token and the Host allow-list 127.0.0.1:*" in gateway.log()
