"""Spans: one `execute_tool {tool}` span per action with GenAI and quiver attributes, one event per attempt."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from quiver.errors import ConfigError
from quiver.runtime.executor import LedgerExecutor
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallRequest, UpstreamTimeout
from quiver.runtime.telemetry import (
    configure_tracing,
    exporter_disabled,
    get_tracer,
    otlp_endpoint,
    resource_attributes,
)

READ = {"side_effect": "read_only", "idempotent": True, "timeout_ms": 1000, "retry": {"maximum_attempts": 3}}
WRITE = {"side_effect": "irreversible_write", "idempotent": False, "timeout_ms": 1000}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def ledger_executor(tmp_path: Path, exporter: InMemorySpanExporter) -> Iterator[LedgerExecutor]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    store = SqliteLedger(tmp_path / "ledger.db")

    async def no_wait(seconds: float) -> None:
        return None

    yield LedgerExecutor(store, tracer=provider.get_tracer("test"), sleep=no_wait, rng=random.Random(1))
    store.close()
    provider.shutdown()


def scripted(*answers: object) -> Any:
    queue = list(answers)

    async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        answer = queue.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, Mapping)
        return answer

    return dispatch


def request(tool: str, policy: Mapping[str, Any], key: str | None = None) -> CallRequest:
    return CallRequest("calc", tool, {"a": 1}, "", policy, "s1", idempotency_key=key, call_id="req-9")


def only_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    [span] = exporter.get_finished_spans()
    return span


@pytest.mark.anyio
async def test_a_successful_call_is_one_internal_execute_tool_span_with_genai_and_quiver_attributes(
    ledger_executor: LedgerExecutor, exporter: InMemorySpanExporter
) -> None:
    outcome = await ledger_executor.execute(
        request("add", READ, key="k1"), scripted(UpstreamTimeout("slow"), {"content": [], "isError": False})
    )
    span = only_span(exporter)
    assert span.name == "execute_tool add"
    assert span.kind == SpanKind.INTERNAL
    attributes = dict(span.attributes or {})
    assert attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": outcome.action_id,
        "jsonrpc.request.id": "req-9",
        "gen_ai.tool.type": "extension",
        "quiver.server": "calc",
        "quiver.action_id": outcome.action_id,
        "quiver.idempotency_key": "k1",
        "quiver.side_effect": "read_only",
        "quiver.state": "succeeded",
        "quiver.attempt": 2,
        "quiver.replayed": False,
    }
    assert span.status.status_code == StatusCode.UNSET
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert [(name, a["quiver.attempt"], a["quiver.attempt.outcome"], a.get("error.type")) for name, a in events] == [
        ("quiver.attempt", 1, "error", "UpstreamTimeout"),
        ("quiver.attempt", 2, "ok", None),
    ]


@pytest.mark.anyio
async def test_an_unknown_outcome_sets_error_type_and_an_error_status(
    ledger_executor: LedgerExecutor, exporter: InMemorySpanExporter
) -> None:
    await ledger_executor.execute(request("counter_increment", WRITE), scripted(UpstreamTimeout("dropped")))
    span = only_span(exporter)
    attributes = dict(span.attributes or {})
    assert (attributes["quiver.state"], attributes["error.type"]) == ("unknown_outcome", "UpstreamTimeout")
    assert span.status.status_code == StatusCode.ERROR


@pytest.mark.anyio
async def test_a_tool_error_is_error_type_tool_error(
    ledger_executor: LedgerExecutor, exporter: InMemorySpanExporter
) -> None:
    await ledger_executor.execute(request("add", READ), scripted({"content": [], "isError": True}))
    assert dict(only_span(exporter).attributes or {})["error.type"] == "tool_error"


@pytest.mark.anyio
async def test_a_replay_is_a_span_marked_replayed_without_attempt_events(
    ledger_executor: LedgerExecutor, exporter: InMemorySpanExporter
) -> None:
    dispatch = scripted({"content": [], "isError": False})
    await ledger_executor.execute(request("add", READ, key="k1"), dispatch)
    await ledger_executor.execute(request("add", READ, key="k1"), dispatch)
    first, second = exporter.get_finished_spans()
    assert dict(second.attributes or {})["quiver.replayed"] is True
    assert second.events == () or list(second.events) == []
    assert dict(second.attributes or {})["quiver.action_id"] == dict(first.attributes or {})["quiver.action_id"]


@pytest.mark.anyio
async def test_the_dispatch_runs_inside_the_span_so_upstream_client_spans_nest_under_it(
    ledger_executor: LedgerExecutor, exporter: InMemorySpanExporter
) -> None:
    seen = []

    async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        seen.append(trace.get_current_span().get_span_context().span_id)
        return {"content": [], "isError": False}

    await ledger_executor.execute(request("add", READ), dispatch)
    assert seen == [only_span(exporter).context.span_id]


def test_without_a_configured_sdk_spans_do_not_record() -> None:
    with get_tracer().start_as_current_span("x") as span:
        assert not span.is_recording()


def test_importing_the_executor_loads_neither_the_sdk_nor_mcp() -> None:
    code = (
        "import sys, quiver.runtime.executor\n"
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'mcp'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_no_endpoint_means_no_exporter() -> None:
    assert configure_tracing(None, environ={}) is None


def test_an_endpoint_without_the_otlp_extra_is_a_config_error_with_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(ConfigError) as caught:
        configure_tracing(None, environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert caught.value.hint is not None and "agent-quiver[otlp]" in caught.value.hint


def test_the_otlp_endpoint_comes_from_config_or_the_standard_environment_variables() -> None:
    assert otlp_endpoint(None, {}) is None
    assert otlp_endpoint("http://collector:4318", {}) == "http://collector:4318/v1/traces"
    assert otlp_endpoint("http://collector:4318/v1/traces", {}) == "http://collector:4318/v1/traces"
    assert otlp_endpoint(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}) == "http://c:4318/v1/traces"
    assert otlp_endpoint(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x"}) == "http://t/x"


def test_otel_traces_exporter_none_turns_export_off_even_with_an_endpoint() -> None:
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}
    assert configure_tracing(None, environ=environ) is None
    assert exporter_disabled({"OTEL_TRACES_EXPORTER": " None "})
    assert not exporter_disabled({"OTEL_TRACES_EXPORTER": "otlp"}) and not exporter_disabled({})


def test_the_resource_honours_otel_service_name_and_otel_resource_attributes() -> None:
    assert resource_attributes({})["service.name"] == "quiver"
    environ = {"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod, team=a%2Cb,service.name=from-attrs,bad"}
    attributes = resource_attributes(environ)
    assert attributes["deployment.environment"] == "prod" and attributes["team"] == "a,b"
    assert attributes["service.name"] == "from-attrs"
    assert resource_attributes({**environ, "OTEL_SERVICE_NAME": "gateway-eu"})["service.name"] == "gateway-eu"
