"""OpenTelemetry for tool execution: one `execute_tool {tool}` span per action, one event per attempt.

Spans follow the GenAI semantic conventions (Development status) for "execute tool": kind INTERNAL,
`gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id` (the MCP request id,
when known), `gen_ai.tool.type = extension`, and `error.type` when the action fails (`tool_error` for
a result with isError true, else the error class, e.g. `UpstreamTimeout`). quiver adds
`quiver.server`, `quiver.action_id`, `quiver.idempotency_key`, `quiver.attempt` (attempts made),
`quiver.state` (ledger state at return), `quiver.side_effect` and `quiver.replayed`. Each attempt is a
span event `quiver.attempt` with its number, outcome, error type and duration.

Only opentelemetry-api is imported here. Without a configured SDK the API hands out non-recording
spans and the helpers below skip building attributes, so tracing costs next to nothing.
`configure_tracing` installs the SDK with an OTLP/HTTP exporter only when an endpoint is configured
(argument, or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`); that needs the
`otlp` extra (`pip install 'agent-quiver[otlp]'`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from quiver import __version__
from quiver.errors import ConfigError

TRACER_NAME = "quiver"
SPAN_EVENT_ATTEMPT = "quiver.attempt"
FAILED_STATES = frozenset({"failed_final", "unknown_outcome"})
_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


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


def configure_tracing(
    endpoint: str | None = None, *, environ: Mapping[str, str], service_name: str = "quiver"
) -> Any | None:
    """Install an SDK TracerProvider exporting over OTLP/HTTP when an endpoint is configured.

    Returns the provider (call `.shutdown()` on exit to flush), or None when nothing is configured."""
    url = otlp_endpoint(endpoint, environ)
    if url is None:
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
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
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


@contextmanager
def action_span(
    tracer: Tracer, *, server: str, tool: str, call_id: str | None, side_effect: str | None
) -> Iterator[ActionSpan]:
    """Start `execute_tool {tool}` as the current span (so upstream client spans nest under it)."""
    attributes: dict[str, str] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.type": "extension",
        "quiver.server": server,
    }
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    if side_effect is not None:
        attributes["quiver.side_effect"] = side_effect
    with tracer.start_as_current_span(
        f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=attributes, record_exception=True
    ) as span:
        yield ActionSpan(span)
