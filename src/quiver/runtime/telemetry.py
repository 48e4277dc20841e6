"""OpenTelemetry for tool execution: one `execute_tool {tool}` span per call, one event per attempt.

Spans follow the GenAI semantic conventions (Development status) for "execute tool": kind INTERNAL,
`gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.description`,
`gen_ai.tool.call.id` (the ledger's action id: unique per call, unlike the JSON-RPC id, which restarts
every session and is kept as `jsonrpc.request.id`), `gen_ai.tool.type = extension`, and `error.type`
when the call fails (`tool_error` for a result with isError true, else the error class, e.g.
`UpstreamTimeout`). quiver adds `quiver.server`, `quiver.action_id`, `quiver.idempotency_key`,
`quiver.attempt` (attempts made), `quiver.state` (ledger state at return), `quiver.side_effect` and
`quiver.replayed`. Each attempt is a span event `quiver.attempt` with its number, outcome, error type
and duration. A call the gateway turns away before the executor (a tool outside the agent's set,
invalid arguments, a schema mismatch) gets the same span, ended at once, with `error.type`
(`refused`, `invalid_arguments`, `schema_mismatch`, `upstream_unavailable`).

One span per call: the mcp SDK's own server span for `tools/call` also claims `execute_tool`, so the
gateway replaces it (`telemetry_mcp.ToolCallTracing`) with the caller's trace context and the MCP
attributes (`mcp.method.name`, `mcp.protocol.version`, `jsonrpc.request.id`) carried on quiver's span.

Only opentelemetry-api is imported here. Without a configured SDK the API hands out non-recording
spans and the helpers below skip building attributes, so tracing costs next to nothing.
`configure_tracing` installs the SDK with an OTLP/HTTP exporter only when an endpoint is configured
(argument, or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`) and
`OTEL_TRACES_EXPORTER` is not `none`; the resource honours `OTEL_SERVICE_NAME` and
`OTEL_RESOURCE_ATTRIBUTES`. That needs the `otlp` extra (`pip install 'agent-quiver[otlp]'`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from quiver import __version__
from quiver.errors import ConfigError

if TYPE_CHECKING:
    from quiver.runtime.protocol import CallOutcome, CallRequest

TRACER_NAME = "quiver"
SPAN_EVENT_ATTEMPT = "quiver.attempt"
FAILED_STATES = frozenset({"failed_final", "unknown_outcome"})
_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
DEFAULT_SERVICE_NAME = "quiver"
# MCP attributes of the request being served (set by telemetry_mcp.ToolCallTracing), for the tool span
MCP_ATTRIBUTES: ContextVar[Mapping[str, str] | None] = ContextVar("quiver_mcp_attributes", default=None)


def get_tracer() -> Tracer:
    """quiver's tracer from the global provider (a no-op one unless the SDK was configured)."""
    return trace.get_tracer(TRACER_NAME, __version__)


def otlp_endpoint(endpoint: str | None, environ: Mapping[str, str]) -> str | None:
    """The OTLP/HTTP traces URL to export to, or None for no exporter. Pure."""
    if endpoint:
        return endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"
    if environ.get(_ENDPOINT_VARS[0]):
        return environ[_ENDPOINT_VARS[0]]
    if environ.get(_ENDPOINT_VARS[1]):
        return environ[_ENDPOINT_VARS[1]].rstrip("/") + "/v1/traces"
    return None


def resource_attributes(environ: Mapping[str, str]) -> dict[str, str]:
    """The resource: `OTEL_RESOURCE_ATTRIBUTES` (`k=v,k2=v2`, percent-encoded values), with
    `service.name` from `OTEL_SERVICE_NAME`, else from those attributes, else `quiver`. Pure."""
    attributes: dict[str, str] = {}
    for item in environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            attributes[key.strip()] = unquote(value.strip())
    service = environ.get("OTEL_SERVICE_NAME", "").strip() or attributes.get("service.name") or DEFAULT_SERVICE_NAME
    attributes["service.name"] = service
    attributes.setdefault("service.version", __version__)
    return attributes


def exporter_disabled(environ: Mapping[str, str]) -> bool:
    """`OTEL_TRACES_EXPORTER=none`: no spans leave the process, whatever endpoint is set."""
    names = {n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()}
    return bool(names) and names <= {"none"}


def configure_tracing(endpoint: str | None = None, *, environ: Mapping[str, str]) -> Any | None:
    """Install an SDK TracerProvider exporting over OTLP/HTTP when an endpoint is configured.

    Returns the provider (call `.shutdown()` on exit to flush), or None when nothing is configured."""
    url = otlp_endpoint(endpoint, environ)
    if url is None or exporter_disabled(environ):
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found,unused-ignore]
            OTLPSpanExporter,
        )
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ConfigError(
            f"OTLP export to {url} needs the OpenTelemetry SDK and OTLP exporter ({exc.name} is missing)",
            hint="pip install 'agent-quiver[otlp]', or unset OTEL_EXPORTER_OTLP_ENDPOINT",
        ) from None
    provider = TracerProvider(resource=Resource.create(resource_attributes(environ)))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    trace.set_tracer_provider(provider)
    return provider


class ActionSpan:
    """The span of one action; every method is a no-op on a non-recording span."""

    def __init__(self, span: Span) -> None:
        self.span = span
        self.recording = span.is_recording()

    def bind(self, *, action_id: str, idempotency_key: str, side_effect: str | None = None) -> None:
        if self.recording:
            self.span.set_attribute("gen_ai.tool.call.id", action_id)
            self.span.set_attribute("quiver.action_id", action_id)
            self.span.set_attribute("quiver.idempotency_key", idempotency_key)
            if side_effect is not None:
                self.span.set_attribute("quiver.side_effect", side_effect)

    def attempt(self, number: int, *, outcome: str, error_type: str | None, duration_s: float) -> None:
        if not self.recording:
            return
        attributes: dict[str, str | int | float] = {
            "quiver.attempt": number,
            "quiver.attempt.outcome": outcome,
            "quiver.attempt.duration_ms": round(duration_s * 1000, 3),
        }
        if error_type is not None:
            attributes["error.type"] = error_type
        self.span.add_event(SPAN_EVENT_ATTEMPT, attributes)

    def finish(self, *, state: str, attempts: int, error_type: str | None, replayed: bool = False) -> None:
        if not self.recording:
            return
        self.span.set_attribute("quiver.state", state)
        self.span.set_attribute("quiver.attempt", attempts)
        self.span.set_attribute("quiver.replayed", replayed)
        if state in FAILED_STATES or (error_type is not None and state != "succeeded"):
            self.span.set_attribute("error.type", error_type or state)
            self.span.set_status(Status(StatusCode.ERROR, state))


_UNTRACED = ActionSpan(trace.INVALID_SPAN)  # every method a no-op: it never records


def _tool_attributes(server: str, tool: str, call_id: str | None, description: str | None) -> dict[str, str]:
    attributes: dict[str, str] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.type": "extension",
        "quiver.server": server,
    }
    if description:
        attributes["gen_ai.tool.description"] = description
    attributes.update(MCP_ATTRIBUTES.get() or {})
    if call_id is not None:
        attributes["jsonrpc.request.id"] = call_id
    return attributes


def tracing_configured() -> bool:
    """Whether a tracer provider was set (spans are recorded); without one, spans cost and show nothing."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


@contextmanager
def action_span(
    tracer: Tracer,
    *,
    server: str,
    tool: str,
    call_id: str | None,
    side_effect: str | None,
    description: str | None = None,
) -> Iterator[ActionSpan]:
    """Start `execute_tool {tool}` as the current span (so upstream client spans nest under it).
    `call_id` is the JSON-RPC request id; `gen_ai.tool.call.id` is set by `ActionSpan.bind`.
    Without a tracer provider (no SDK configured) nothing is started: the no-op span would carry the
    current span's context, which stays current anyway, so what reaches the upstream is the same."""
    if isinstance(tracer, trace.ProxyTracer) and not tracing_configured():
        yield _UNTRACED
        return
    attributes = _tool_attributes(server, tool, call_id, description)
    if side_effect is not None:
        attributes["quiver.side_effect"] = side_effect
    with tracer.start_as_current_span(
        f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=attributes, record_exception=True
    ) as span:
        yield ActionSpan(span)


def rejected_call_span(
    *, server: str, tool: str, error_type: str, message: str, description: str | None = None, call_id: str | None = None
) -> None:
    """The span of a call turned away before the executor: `execute_tool {tool}`, ended at once, ERROR.

    Named, like an executed call's, by the upstream tool (`server`/`tool` as the manifest knows them, or as
    the requested name reads when it names no tool of the manifest). No action was recorded for it, so
    `gen_ai.tool.call.id` is a fresh UUID (unique per call, as without a ledger); `call_id` is the JSON-RPC
    id, kept as `jsonrpc.request.id`."""
    tracer = get_tracer()
    span = tracer.start_span(
        f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=_tool_attributes(server, tool, call_id, description)
    )
    if span.is_recording():
        span.set_attribute("gen_ai.tool.call.id", uuid.uuid4().hex)
        span.set_attribute("error.type", error_type)
        span.set_attribute("quiver.state", "refused")
        span.set_status(Status(StatusCode.ERROR, message[:200]))
    span.end()


class _Tool(Protocol):
    @property
    def server(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...


def rejected_tool_span(tool: _Tool, error_type: str, message: str, call_id: str | None = None) -> None:
    """`rejected_call_span` for a tool of the manifest."""
    rejected_call_span(
        server=tool.server,
        tool=tool.name,
        error_type=error_type,
        message=message,
        description=tool.description,
        call_id=call_id,
    )


def requested_tool(name: str) -> tuple[str, str]:
    """(server, tool) a refused name asks for: `server/tool` (call_tool), `server__tool` (a gateway name),
    else no server and the name as it was called."""
    if "/" in name:
        server, _, tool = name.partition("/")
        return server, tool
    server, sep, tool = name.partition("__")
    return (server, tool) if sep and server and tool else ("", name)


@contextmanager
def direct_span(request: CallRequest) -> Iterator[Callable[[CallOutcome], CallOutcome]]:
    """The span of a call run without a ledger (`serve --no-ledger`): no action id, so
    `gen_ai.tool.call.id` is a fresh UUID. Yields `finish(outcome) -> outcome`."""
    side_effect = request.policy.get("side_effect")
    with action_span(
        get_tracer(),
        server=request.server,
        tool=request.tool,
        call_id=request.call_id,
        side_effect=side_effect if isinstance(side_effect, str) else None,
        description=request.description,
    ) as span:
        if span.recording:
            span.span.set_attribute("gen_ai.tool.call.id", uuid.uuid4().hex)

        def finish(outcome: CallOutcome) -> CallOutcome:
            error = "tool_error" if outcome.result.get("isError") else None
            span.finish(state=outcome.state, attempts=outcome.attempts, error_type=error)
            return outcome

        yield finish
