"""One span per tool call: the gateway's stand-in for the mcp SDK's OpenTelemetry middleware.

The SDK wraps every request in a SERVER span; for `tools/call` that span also says
`gen_ai.operation.name = execute_tool`, so with quiver's own `execute_tool {tool}` span every call was
counted twice. `ToolCallTracing` lets the SDK's middleware trace every other method, and for
`tools/call` opens no span of its own: it makes the caller's trace context (W3C `traceparent` in
`params._meta`) current, so quiver's span joins the caller's trace, and hands the MCP attributes to that
span (`telemetry.MCP_ATTRIBUTES`), as the MCP semantic conventions ask when an outer GenAI span exists.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from opentelemetry import context as otel_context
from opentelemetry.propagate import extract

from quiver.runtime.telemetry import MCP_ATTRIBUTES


class ToolCallTracing:
    """Context-tier middleware: `tools/call` traced by quiver's executor span, the rest by `inner`."""

    def __init__(self, inner: ServerMiddleware[Any]) -> None:
        self.inner = inner

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await self.inner(ctx, call_next)
        attributes = {"mcp.method.name": ctx.method, "mcp.protocol.version": ctx.protocol_version}
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        carrier = dict(ctx.meta) if isinstance(ctx.meta, dict) else {}
        parent = extract(carrier) if "traceparent" in carrier else None
        token = otel_context.attach(parent) if parent is not None else None
        reset = MCP_ATTRIBUTES.set(attributes)
        try:
            return await call_next(ctx)
        finally:
            MCP_ATTRIBUTES.reset(reset)
            if token is not None:
                otel_context.detach(token)


def install(middleware: list[ServerMiddleware[Any]]) -> None:
    """Replace the SDK's OpenTelemetry middleware in a server's `middleware` list, in place."""
    from mcp.server._otel import OpenTelemetryMiddleware

    for i, item in enumerate(middleware):
        if isinstance(item, OpenTelemetryMiddleware):
            middleware[i] = ToolCallTracing(item)
