"""A small stdio `Dispatch` to the calc example server, for the executor's fault-injection tests.

The gateway's `UpstreamManager` replaces it in production; this one keeps the same error contract:
REQUEST_TIMEOUT -> UpstreamTimeout; the connection lost while a request is in flight -> an ambiguous
UpstreamTimeout (the request was written); any request after that -> UpstreamUnavailable (nothing is
sent); other JSON-RPC errors -> UpstreamProtocolError, transient for -32603.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.types import CONNECTION_CLOSED, INTERNAL_ERROR, REQUEST_TIMEOUT

from quiver.runtime.protocol import (
    CallRequest,
    Dispatch,
    UpstreamProtocolError,
    UpstreamTimeout,
    UpstreamUnavailable,
)

CALC = Path(__file__).resolve().parents[2] / "examples" / "servers" / "calc_server.py"


@asynccontextmanager
async def calc_dispatch(env: Mapping[str, str]) -> AsyncIterator[Dispatch]:
    """Start calc over stdio with `env` added; yield a Dispatch bound to that one connection."""
    params = StdioServerParameters(
        command=sys.executable, args=[str(CALC)], env={**os.environ, "CALC_LOG_LEVEL": "WARNING", **env}
    )
    lost = False
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
            nonlocal lost
            if lost:
                raise UpstreamUnavailable("calc is gone; nothing was sent")
            try:
                result = await session.call_tool(
                    request.tool, dict(request.arguments), read_timeout_seconds=timeout_s, meta={**request.meta, **meta}
                )
            except MCPError as exc:
                code = exc.error.code
                if code == REQUEST_TIMEOUT:
                    raise UpstreamTimeout(str(exc)) from None
                if code == CONNECTION_CLOSED:
                    lost = True
                    raise UpstreamTimeout(f"connection lost with the request in flight: {exc}") from None
                raise UpstreamProtocolError(str(exc), code, transient=code == INTERNAL_ERROR) from None
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)

        yield dispatch
