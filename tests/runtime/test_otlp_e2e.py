"""OTLP over HTTP from a real `quiver serve`: a local receiver decodes what the gateway exports.

Per tool call exactly one `execute_tool {tool}` span (the SDK's own `tools/call` server span is replaced),
with a per-call unique `gen_ai.tool.call.id` (the action id), the tool's description, the MCP attributes,
and the resource from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES. Refused and invalid calls get a span
with `error.type`; OTEL_TRACES_EXPORTER=none sends nothing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

pytestmark = pytest.mark.anyio
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


class Receiver:
    """A tiny OTLP/HTTP traces endpoint: keeps every decoded ExportTraceServiceRequest."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                message = ExportTraceServiceRequest()
                message.ParseFromString(body)
                receiver.requests.append(message)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """(resource attributes, span) for every span received."""
        out = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    out.extend((resource, span) for span in scope.spans)
        return out


def _value(value: AnyValue) -> Any:
    return getattr(value, value.WhichOneof("value") or "string_value")


def _attributes(items: Any) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in items}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    server.thread.join(timeout=5)


async def _session_calls(
    manifest: Path, cwd: Path, env: dict[str, str], errlog: Path, *, ledger: bool = True
) -> list[Any]:
    store = ["--ledger", str(errlog.parent / "l.db")] if ledger else ["--no-ledger"]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "quiver", "serve", str(manifest), *store], env=env, cwd=str(cwd)
    )
    results = []
    with errlog.open("a") as log:
        async with stdio_client(params, errlog=log) as streams, ClientSession(*streams) as session:
            await session.initialize()
            results.append(await session.call_tool("calc__add", {"a": 2, "b": 3}))
            results.append(await session.call_tool("calc__add", {"a": 4, "b": 5}))
            results.append(await session.call_tool("calc__add", {"a": "two"}))  # invalid arguments
            results.append(await session.call_tool("calc__nope", {}))  # not a tool of the agent
            traceparent = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}  # the caller's trace
            results.append(await session.call_tool("calc__add", {"a": 1, "b": 1}, meta=traceparent))
            results.append(await session.call_tool("search_tools", {"query": "multiply two numbers"}))  # a meta-tool
            via = {"server": "calc", "tool": "add", "arguments": {"a": 7, "b": 8}}
            results.append(await session.call_tool("call_tool", via))  # the executor's span, not a second one
    return results


async def test_one_gateway_call_exports_exactly_one_execute_tool_span_with_a_unique_call_id(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], receiver: Receiver,
    tmp_path: Path,
) -> None:  # fmt: skip
    env = upstream_env(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
        OTEL_SERVICE_NAME="gateway-under-test",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=e2e,team=tools",
    )
    with anyio.fail_after(60):
        results = await _session_calls(serve_manifest, repo_root, env, tmp_path / "gateway.stderr")
        assert [r.is_error for r in results] == [False, False, True, True, False, False, False]
        while not receiver.spans():  # the gateway flushes its batch on exit; the POST may trail the exit
            await anyio.sleep(0.05)
    spans = receiver.spans()
    resources = {tuple(sorted(resource.items())) for resource, _ in spans}
    assert len(resources) == 1
    resource = dict(next(iter(resources)))
    assert resource["service.name"] == "gateway-under-test"
    assert (resource["deployment.environment"], resource["team"]) == ("e2e", "tools")
    tool_spans = [s for _, s in spans if _attributes(s.attributes).get("gen_ai.operation.name") == "execute_tool"]
    assert not [s.name for _, s in spans if s.name.startswith("tools/call")]
    assert [s.name for s in tool_spans].count("execute_tool calc__add") == 0  # named by the upstream tool
    executed = [s for s in tool_spans if "error.type" not in _attributes(s.attributes)]
    assert [s.name for s in executed] == ["execute_tool add"] * 3 + ["execute_tool search_tools", "execute_tool add"]
    meta = _attributes(executed[3].attributes)
    assert (meta["gen_ai.tool.type"], meta["mcp.method.name"]) == ("function", "tools/call")
    executed = [s for s in executed if s.name == "execute_tool add"]
    first, second, joined, via_meta = (_attributes(s.attributes) for s in executed)
    ids = {a["gen_ai.tool.call.id"] for a in (first, second, joined, via_meta)}
    assert len(ids) == 4 and all(len(i) > 20 for i in ids)  # action ids, not JSON-RPC ids
    assert first["gen_ai.tool.call.id"] == first["quiver.action_id"]
    assert first["gen_ai.tool.call.id"] != second["gen_ai.tool.call.id"]
    assert first["gen_ai.tool.description"]
    assert (first["mcp.method.name"], first["quiver.server"]) == ("tools/call", "calc")
    assert first["quiver.state"] == "succeeded"
    assert "jsonrpc.request.id" in first
    rejected = {s.name: _attributes(s.attributes) for s in tool_spans if "error.type" in _attributes(s.attributes)}
    assert rejected["execute_tool add"]["error.type"] == "invalid_arguments"
    assert rejected["execute_tool nope"]["error.type"] == "refused"  # named by the tool asked for, as the others
    assert rejected["execute_tool nope"]["quiver.server"] == "calc"
    for attributes in rejected.values():  # refused and invalid calls carry the ids every other span carries
        assert len(attributes["gen_ai.tool.call.id"]) == 32 and attributes["gen_ai.tool.call.id"] not in ids
        assert "jsonrpc.request.id" in attributes and attributes["mcp.method.name"] == "tools/call"
    assert len(tool_spans) == 7  # one span per call, executed or not
    # the call that carried a traceparent joins the caller's trace, as a child of the caller's span
    assert (executed[2].trace_id.hex(), executed[2].parent_span_id.hex()) == (TRACE_ID, PARENT_ID)
    assert executed[0].trace_id.hex() != TRACE_ID


async def test_otel_traces_exporter_none_exports_nothing(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], receiver: Receiver,
    tmp_path: Path,
) -> None:  # fmt: skip
    env = upstream_env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_TRACES_EXPORTER="none")
    with anyio.fail_after(60):
        results = await _session_calls(serve_manifest, repo_root, env, tmp_path / "gateway.stderr")
    assert not results[0].is_error
    assert receiver.requests == []


async def test_without_a_ledger_each_call_is_still_one_span_with_a_unique_call_id(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], receiver: Receiver,
    tmp_path: Path,
) -> None:  # fmt: skip
    env = upstream_env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    with anyio.fail_after(60):
        await _session_calls(serve_manifest, repo_root, env, tmp_path / "gateway.stderr", ledger=False)
        while not receiver.spans():
            await anyio.sleep(0.05)
    spans = [s for _, s in receiver.spans()]
    assert not [s.name for s in spans if s.name.startswith("tools/call")]
    added = [_attributes(s.attributes) for s in spans if s.name == "execute_tool add"]
    executed = [a for a in added if "error.type" not in a]
    assert len(executed) == 4  # two direct calls, the traceparent call, and call_tool
    assert len({a["gen_ai.tool.call.id"] for a in executed}) == 4
    assert all(a["quiver.state"] == "succeeded" for a in executed)
