"""Start-up of an upstream's transport: the stdio child process (under the guard), streamable HTTP and SSE.

Each yields the (read stream, write stream) of a `ClientSession`; the stdio one (on POSIX) also yields
its `upstream_stdio.DirectCalls` third."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

from quiver.runtime import upstream_stdio
from quiver.runtime._guard import guarded

if TYPE_CHECKING:
    from quiver.mcp_sdk import TransportStreams


@asynccontextmanager
async def _stdio_streams(
    command: str, args: list[str], env: Mapping[str, str], cwd: str | None, errlog: TextIO | None
) -> AsyncIterator[tuple[Any, ...]]:
    from mcp import StdioServerParameters, stdio_client

    # The whole environment, as a shell would pass it (stdio_client alone passes a safe subset); on Linux
    # under the guard that kills the server when the gateway dies (`quiver.runtime._guard`).
    command, args = guarded(command, args, env, cwd)
    if upstream_stdio.usable():  # with direct tools/call (POSIX)
        async with upstream_stdio.stdio_pipes(command, args, env, cwd, errlog or sys.stderr) as pipes:
            yield pipes
        return
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
