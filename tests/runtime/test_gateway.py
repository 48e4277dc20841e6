"""The gateway in memory: a real SDK `Client` talks to `Gateway.server` in-process, in both protocol eras.

Upstreams are a recording fake here (real subprocess upstreams are in test_upstream.py and the
end-to-end tests), so each behaviour of the gateway itself is checked exactly: what tools/list shows,
what the meta-tools answer, what is refused before dispatch, and what reaches the executor.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage

from quiver.metatools import META_TOOL_NAMES, META_TOOLS
from quiver.model import JSON, sha256_json
from quiver.runtime._manifest import Manifest, load_manifest, parse_manifest
from quiver.runtime.gateway import Gateway
from quiver.runtime.protocol import CallOutcome, CallRequest, Dispatch, UpstreamTimeout
from quiver.runtime.upstream import PinCheck, UpstreamManager

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "auto"]  # 2025-11-25 handshake, 2026-07-28 per-request envelope
WAIT_S = 5.0


class FakeUpstreams:
    """Stands in for UpstreamManager: pins checked against `current` definitions, calls recorded."""

    def __init__(self, manifest: Manifest, current: Mapping[tuple[str, str], JSON | None] | None = None) -> None:
        self._defs: dict[tuple[str, str], JSON | None] = {k: dict(t.definition) for k, t in manifest.by_key.items()}
        self._defs.update(current or {})
        self.checked: list[tuple[str, str]] = []
        self.dispatched: list[tuple[CallRequest, Mapping[str, JSON], float]] = []
        self.fail_with: Exception | None = None

    async def __aenter__(self) -> FakeUpstreams:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def check_pin(self, server: str, tool: str, sha256: str) -> PinCheck:
        self.checked.append((server, tool))
        current = self._defs.get((server, tool))
        digest = sha256_json(current) if current is not None else None
        return PinCheck(digest == sha256, current, digest)

    async def dispatch(self, request: CallRequest, meta: Mapping[str, JSON], timeout_s: float) -> Mapping[str, JSON]:
        self.dispatched.append((request, meta, timeout_s))
        if self.fail_with is not None:
            raise self.fail_with
        return {"content": [{"type": "text", "text": f"{request.server}/{request.tool} ran"}], "isError": False}


class RecordingExecutor:
    def __init__(self) -> None:
        self.requests: list[CallRequest] = []

    async def execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
        self.requests.append(request)
        result = await dispatch(request, {"io.quiver/idempotency-key": request.idempotency_key or ""}, 1.0)
        return CallOutcome(result, "succeeded")


class BrokenExecutor:
    async def execute(self, request: CallRequest, dispatch: Dispatch) -> CallOutcome:
        raise RuntimeError("a bug in the executor")


@pytest.fixture
def manifest(serve_manifest: Path) -> Manifest:
    return load_manifest(serve_manifest)


def gateway(manifest: Manifest, upstreams: Any = None, executor: Any = None) -> Gateway:
    return Gateway(manifest, upstreams=upstreams or FakeUpstreams(manifest), executor=executor)


def text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def payload(result: types.CallToolResult) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


async def names(client: Client) -> list[str]:
    return [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]


@pytest.mark.parametrize("mode", ERAS)
async def test_initial_tools_list_is_preloaded_tools_then_meta_tools(manifest: Manifest, mode: str) -> None:
    async with gateway(manifest) as gw, Client(gw.server, mode=mode) as client:
        tools = (await client.list_tools()).tools
    preloaded = [t.exposed for t in manifest.preloaded]
    assert [t.name for t in tools] == [*preloaded, *META_TOOL_NAMES]
    by_name = {t.name: t for t in tools}
    for tool in manifest.preloaded:  # the pinned schema, under the model-facing name
        served = by_name[tool.exposed].model_dump(mode="json", by_alias=True, exclude_none=True)
        always = {**tool.definition.get("_meta", {}), "anthropic/alwaysLoad": True}  # Claude Code keeps it up front
        assert served == {**tool.definition, "name": tool.exposed, "_meta": always}
    for meta in META_TOOLS:  # served as compile counted them, marked so that no host defers them
        served = by_name[str(meta["name"])].model_dump(mode="json", by_alias=True, exclude_none=True)
        assert served == {**meta, "_meta": {"anthropic/alwaysLoad": True}}


@pytest.mark.parametrize("mode", ERAS)
async def test_initialize_advertises_list_changed_and_the_server_index(manifest: Manifest, mode: str) -> None:
    async with gateway(manifest) as gw, Client(gw.server, mode=mode) as client:
        capabilities = client.server_capabilities
        instructions = client.instructions or ""
    assert capabilities.tools is not None and capabilities.tools.list_changed is True
    assert "search_tools" in instructions
    for server in {t.server for t in manifest.deferred}:
        assert f"- {server} (" in instructions


async def test_meta_tools_are_absent_when_nothing_is_deferred(serve_manifest: Path) -> None:
    data = json.loads(serve_manifest.read_text())
    for tool in data["tools"]:
        tool["gateway"]["load"] = "preloaded"  # what quiver serve reads
    everything = parse_manifest(data)
    async with gateway(everything) as gw, Client(gw.server) as client:
        listed = await names(client)
        refused = await client.call_tool("search_tools", {"query": "note"})
    assert listed == [t.exposed for t in everything.tools]
    assert refused.is_error and "not a tool of agent" in text(refused)


async def test_search_hits_join_the_list_only_once_described_in_the_handshake_era(manifest: Manifest) -> None:
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with gateway(manifest) as gw, Client(gw.server, mode="legacy", message_handler=on_message) as client:
        assert client.protocol_version == "2025-11-25"
        before = await names(client)
        found = payload(await client.call_tool("search_tools", {"query": "create a new note", "limit": 2}))
        after_search = await names(client)
        exposed = [hit["name"] for hit in found["tools"]]
        described = payload(await client.call_tool("describe_tool", {"name": "notes__create_note"}))
        with anyio.fail_after(WAIT_S):
            await changed.wait()
        listed = (await client.list_tools()).tools  # the notification evicted the client's cached listing
    assert "notes__create_note" in exposed and after_search == before
    assert described["name"] == "notes__create_note"
    assert [t.name for t in listed] == [*before, "notes__create_note"]
    for hit in found["tools"]:
        assert set(hit) == {"name", "server", "tool", "description"} and "\n" not in hit["description"]


async def test_describe_and_call_take_a_name_or_server_and_tool(manifest: Manifest) -> None:
    async with gateway(manifest) as gw, Client(gw.server) as client:
        by_name = payload(await client.call_tool("describe_tool", {"name": "calc__multiply"}))
        by_key = payload(await client.call_tool("describe_tool", {"name": "calc/multiply"}))
        by_pair = payload(await client.call_tool("describe_tool", {"server": "calc", "tool": "multiply"}))
        unknown = await client.call_tool("describe_tool", {"name": "calc__multiplyy"})
        neither = await client.call_tool("call_tool", {"server": "calc"})
    assert by_name == by_key == by_pair and by_name["name"] == "calc__multiply"
    assert unknown.is_error and "refused" in text(unknown) and "calc__multiply" in text(unknown)
    assert neither.is_error and "give `name`" in text(neither)


async def test_describe_loads_the_tool_with_list_changed_on_a_listen_stream_in_the_2026_era(manifest: Manifest) -> None:
    async with gateway(manifest) as gw, Client(gw.server) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as subscription:
            described = payload(await client.call_tool("describe_tool", {"server": "calc", "tool": "multiply"}))
            with anyio.fail_after(WAIT_S):
                event = await subscription.__anext__()
        assert type(event).__name__ == "ToolsListChanged"
        listed = await names(client)
    assert described["name"] == "calc__multiply" and listed[-1] == "calc__multiply"


async def test_loading_a_loaded_or_preloaded_tool_sends_no_notification(manifest: Manifest) -> None:
    notifications: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        notifications.append(message)

    async with gateway(manifest) as gw, Client(gw.server, mode="legacy", message_handler=on_message) as client:
        await client.call_tool("describe_tool", {"server": "calc", "tool": "echo"})  # preloaded
        await client.call_tool("describe_tool", {"server": "calc", "tool": "flaky"})
        await client.call_tool("describe_tool", {"server": "calc", "tool": "flaky"})  # already loaded
        listed = await names(client)
    assert len([m for m in notifications if isinstance(m, types.ToolListChangedNotification)]) == 1
    assert listed.count("calc__flaky") == 1 and listed.count("calc__echo") == 1


async def test_each_client_has_its_own_session(manifest: Manifest) -> None:
    async with gateway(manifest) as gw:
        async with Client(gw.server) as first:
            await first.call_tool("describe_tool", {"server": "notes", "tool": "get_note"})
            assert "notes__get_note" in await names(first)
        async with Client(gw.server) as second:
            assert "notes__get_note" not in await names(second)


async def test_list_tools_gives_names_and_one_line_descriptions_only(manifest: Manifest) -> None:
    async with gateway(manifest) as gw, Client(gw.server) as client:
        listed = payload(await client.call_tool("list_tools", {"server": "notes"}))
        unknown = await client.call_tool("list_tools", {"server": "note"})
    assert listed["server"] == "notes"
    assert {t["tool"] for t in listed["tools"]} == {t.name for t in manifest.server_tools("notes")}
    for entry in listed["tools"]:
        assert set(entry) == {"tool", "description"} and "\n" not in entry["description"]
    assert unknown.is_error and "did you mean `notes`?" in text(unknown)


async def test_describe_tool_gives_the_full_input_and_output_schema(manifest: Manifest) -> None:
    pinned = manifest.by_key[("notes", "create_note")].definition
    async with gateway(manifest) as gw, Client(gw.server) as client:
        described = payload(await client.call_tool("describe_tool", {"server": "notes", "tool": "create_note"}))
    assert described["inputSchema"] == pinned["inputSchema"]
    assert described["outputSchema"] == pinned["outputSchema"]
    assert described["description"] == pinned["description"]


async def test_list_servers_names_each_server_with_its_tool_count(manifest: Manifest) -> None:
    async with gateway(manifest) as gw, Client(gw.server) as client:
        listed = payload(await client.call_tool("list_servers", {}))
    assert {s["name"]: s["tools"] for s in listed["servers"]} == {"calc": 7, "notes": 5}
    assert all(s["description"] for s in listed["servers"])


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_outside_the_resolved_set_is_refused_and_logged(
    manifest: Manifest, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    upstreams = FakeUpstreams(manifest)
    caplog.set_level(logging.WARNING, logger="quiver.runtime.gateway")
    async with gateway(manifest, upstreams) as gw, Client(gw.server, mode=mode) as client:
        via_meta = await client.call_tool("call_tool", {"server": "notes", "tool": "delete_note", "arguments": {}})
        described = await client.call_tool("describe_tool", {"server": "notes", "tool": "delete_note"})
        direct = await client.call_tool("notes__delete_note", {"id": "n1"})
        raw_name = await client.call_tool("create_note", {"title": "t", "body": "b"})
        other_server = await client.call_tool("call_tool", {"server": "github", "tool": "create_issue"})
    for result in (via_meta, described, direct, raw_name, other_server):
        assert result.is_error and text(result).startswith("refused:"), text(result)
    assert "not in agent `assistant`'s tool set" in text(via_meta)
    assert "did you mean `notes__create_note`?" in text(raw_name)
    assert "`github` is not a server of agent `assistant`" in text(other_server)
    assert upstreams.checked == [] and upstreams.dispatched == []
    refusals = [r for r in caplog.records if r.getMessage().startswith("refused")]
    assert len(refusals) == 5


async def test_a_deferred_tool_is_callable_without_being_loaded_first(manifest: Manifest) -> None:
    upstreams = FakeUpstreams(manifest)
    async with gateway(manifest, upstreams) as gw, Client(gw.server) as client:
        via_meta = await client.call_tool(
            "call_tool", {"server": "calc", "tool": "multiply", "arguments": {"a": 2, "b": 3}}
        )
        direct = await client.call_tool("notes__list_notes", {})
    assert not via_meta.is_error and not direct.is_error
    assert [(r.server, r.tool) for r, _, _ in upstreams.dispatched] == [("calc", "multiply"), ("notes", "list_notes")]


@pytest.mark.parametrize("mode", ERAS)
async def test_invalid_arguments_are_refused_before_anything_is_started(manifest: Manifest, mode: str) -> None:
    upstreams = FakeUpstreams(manifest)
    async with gateway(manifest, upstreams) as gw, Client(gw.server, mode=mode) as client:
        missing = await client.call_tool("calc__add", {"a": 1})
        wrong_type = await client.call_tool(
            "call_tool", {"server": "notes", "tool": "get_note", "arguments": {"id": 7}}
        )
        extra = await client.call_tool("calc__echo", {"text": "x", "loud": True})
        bad_meta = await client.call_tool("search_tools", {"query": "x", "limit": 50})
    assert missing.is_error and "'b' is a required property" in text(missing)
    assert wrong_type.is_error and "at `id`" in text(wrong_type)
    assert extra.is_error and "loud" in text(extra)
    assert bad_meta.is_error and "invalid arguments for `search_tools`" in text(bad_meta)
    assert upstreams.checked == [] and upstreams.dispatched == []


async def test_a_drifted_upstream_schema_is_refused_naming_what_changed(manifest: Manifest) -> None:
    pinned = manifest.by_key[("notes", "create_note")].definition
    drifted = json.loads(json.dumps(pinned))
    drifted["inputSchema"]["properties"]["folder"] = {"type": "string"}
    drifted["inputSchema"]["required"].append("folder")
    upstreams = FakeUpstreams(manifest, {("notes", "create_note"): drifted, ("notes", "get_note"): None})
    async with gateway(manifest, upstreams) as gw, Client(gw.server) as client:
        result = await client.call_tool(
            "call_tool", {"server": "notes", "tool": "create_note", "arguments": {"title": "t", "body": "b"}}
        )
        gone = await client.call_tool("call_tool", {"server": "notes", "tool": "get_note", "arguments": {"id": "n1"}})
        fine = await client.call_tool("calc__echo", {"text": "x"})
    message = text(result)
    assert result.is_error and message.startswith("schema mismatch: `notes/create_note`")
    assert "inputSchema.properties.folder: added" in message and 'inputSchema.required: added "folder"' in message
    assert gone.is_error and "no longer serves `get_note`" in text(gone)
    assert not fine.is_error
    assert [r.tool for r, _, _ in upstreams.dispatched] == ["echo"]


async def test_the_executor_gets_the_pin_policy_session_and_idempotency_key(manifest: Manifest) -> None:
    upstreams, executor = FakeUpstreams(manifest), RecordingExecutor()
    tool = manifest.by_key[("calc", "counter_increment")]
    async with gateway(manifest, upstreams, executor) as gw, Client(gw.server) as client:
        await client.call_tool(
            "call_tool",
            {"server": "calc", "tool": "counter_increment", "arguments": {"amount": 2}, "idempotency_key": "k-1"},
        )
        await client.call_tool("calc__echo", {"text": "hi"})
    first, second = executor.requests
    assert (first.server, first.tool, dict(first.arguments)) == ("calc", "counter_increment", {"amount": 2})
    assert first.tool_sha256 == tool.sha256 and first.policy == tool.policy
    assert first.idempotency_key == "k-1" and second.idempotency_key is None
    assert first.session_id == second.session_id and first.call_id is not None
    assert not any(k.startswith("io.modelcontextprotocol/") for k in first.meta)  # the 2026 envelope stays here
    assert upstreams.dispatched[0][1] == {"io.quiver/idempotency-key": "k-1"}


async def test_upstream_failures_and_executor_bugs_become_error_results(manifest: Manifest) -> None:
    upstreams = FakeUpstreams(manifest)
    upstreams.fail_with = UpstreamTimeout("no answer within 1 s")
    async with gateway(manifest, upstreams) as gw, Client(gw.server) as client:
        timed_out = await client.call_tool("calc__echo", {"text": "hi"})
        assert timed_out.is_error and "timed out" in text(timed_out)
    async with gateway(manifest, FakeUpstreams(manifest), BrokenExecutor()) as gw, Client(gw.server) as client:
        broken = await client.call_tool("calc__echo", {"text": "hi"})
        still_serving = await client.call_tool("list_servers", {})
    assert broken.is_error and "internal error" in text(broken)
    assert not still_serving.is_error


async def test_the_demo_manifest_serves_discovery_without_starting_any_upstream(
    demo_manifest: Path, procs: Any
) -> None:
    import os

    manifest = load_manifest(demo_manifest)
    upstreams = UpstreamManager(manifest.servers.values(), environ={})
    # processes this worker already has (a session's database server started by another test file) are not
    # the gateway's: it must start none of its own
    before = set(procs.children_of(os.getpid()))
    async with Gateway(manifest, upstreams=upstreams) as gw, Client(gw.server) as client:
        listed = await names(client)
        servers = payload(await client.call_tool("list_servers", {}))
        tools = payload(await client.call_tool("list_tools", {"server": "tavily"}))
        found = payload(await client.call_tool("search_tools", {"query": "search the web", "limit": 3}))
        described = payload(
            await client.call_tool("describe_tool", {"server": "notion", "tool": tools_of(manifest, "notion")[0]})
        )
        unavailable = await client.call_tool("github__search_issues", {"query": "bug"})
        assert set(procs.children_of(os.getpid())) - before == set()
    assert listed == [*[t.exposed for t in manifest.preloaded], *META_TOOL_NAMES]
    assert [s["name"] for s in servers["servers"]] == ["github", "notion", "tavily"]
    assert len(tools["tools"]) == 5 and found["tools"]
    assert described["inputSchema"]
    assert unavailable.is_error and "GITHUB_TOKEN" in text(unavailable)  # a clear error, nothing started
    assert upstreams.starts == {"github": 0, "notion": 0, "tavily": 0}


def tools_of(manifest: Manifest, server: str) -> list[str]:
    return [t.name for t in manifest.server_tools(server)]


def _preloaded(manifest: Manifest) -> set[str]:
    return {t.exposed for t in manifest.preloaded}
