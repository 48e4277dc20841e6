"""One span per tool call: the gateway's stand-in for the mcp SDK's OpenTelemetry middleware.

The SDK wraps every request in a SERVER span; for `tools/call` that span also says
`gen_ai.operation.name = execute_tool`, so with quiver's own `execute_tool {tool}` span every call was
counted twice. `ToolCallTracing` lets the SDK's middleware trace every other method, and for
`tools/call` opens no span of its own: it makes the caller's trace context (W3C `traceparent` in
`params._meta`) current, so quiver's span joins the caller's trace, and hands the MCP attributes to that
span (`telemetry.MCP_ATTRIBUTES`), as the MCP semantic conventions ask when an outer GenAI span exists.
The gateway's own meta-tools (`search_tools`, `describe_tool`, ...) never reach the executor, so for
them it opens the `execute_tool {name}` span itself (`gen_ai.tool.type = function`); `call_tool` is
left to the executor's span of the tool it calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from opentelemetry import context as otel_context
from opentelemetry.propagate import extract
from opentelemetry.trace import SpanKind, Status, StatusCode

from quiver.mcp_sdk import is_sdk_tracing
from quiver.runtime.telemetry import MCP_ATTRIBUTES, get_tracer, tracing_configured

DELEGATING_META_TOOL = "call_tool"  # runs a tool through the executor, which opens the span


class ToolCallTracing:
    """Context-tier middleware: `tools/call` traced by quiver's executor span, the rest by `inner`."""

    def __init__(self, inner: ServerMiddleware[Any], is_meta_tool: Callable[[str], bool]) -> None:
        self.inner = inner
        self.is_meta_tool = is_meta_tool

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await self.inner(ctx, call_next)
        if not tracing_configured():  # no span will read the attributes; the caller's context still goes on
            meta = ctx.meta
            if not isinstance(meta, dict) or "traceparent" not in meta:
                return await call_next(ctx)
            attached = otel_context.attach(extract(dict(meta)))
            try:
                return await call_next(ctx)
            finally:
                otel_context.detach(attached)
        attributes = {"mcp.method.name": ctx.method, "mcp.protocol.version": ctx.protocol_version}
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        carrier = dict(ctx.meta) if isinstance(ctx.meta, dict) else {}
        parent = extract(carrier) if "traceparent" in carrier else None
        token = otel_context.attach(parent) if parent is not None else None
        reset = MCP_ATTRIBUTES.set(attributes)
        name = ctx.params.get("name") if ctx.params else None
        try:
            if isinstance(name, str) and name != DELEGATING_META_TOOL and self.is_meta_tool(name):
                return await _meta_tool_span(name, attributes, ctx, call_next)
            return await call_next(ctx)
        finally:
            MCP_ATTRIBUTES.reset(reset)
            if token is not None:
                otel_context.detach(token)


async def _meta_tool_span(
    name: str, mcp: dict[str, str], ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.type": "function"}
    with get_tracer().start_as_current_span(
        f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes={**attributes, **mcp}
    ) as span:
        result = await call_next(ctx)
        if isinstance(result, dict) and result.get("isError") is True and span.is_recording():
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR))
        return result


def install(middleware: list[ServerMiddleware[Any]], is_meta_tool: Callable[[str], bool]) -> None:
    """Replace the SDK's OpenTelemetry middleware in a server's `middleware` list, in place;
    `is_meta_tool(name)` says which tool names are the gateway's own meta-tools."""

    for i, item in enumerate(middleware):
        if is_sdk_tracing(item):
            middleware[i] = ToolCallTracing(item, is_meta_tool)
