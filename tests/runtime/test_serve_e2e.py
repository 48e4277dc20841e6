"""End to end: the SDK's client talks to `python -m quiver serve MANIFEST` as a subprocess, over stdio and
over streamable HTTP, and the gateway talks to our example servers as its own subprocesses.

The example project (examples/serve) is compiled afresh for the session; its servers run with this
interpreter (`PYTHON`, referenced as `${PYTHON:-python3}` in its .mcp.json) from the repository root.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client

from quiver.commands.serve import parse_address, resolve_token
from quiver.errors import UsageError
from quiver.metatools import META_TOOL_NAMES

pytestmark = pytest.mark.anyio

TRANSPORTS = ["stdio", "http"]
TOKEN = "e2e-test-token-0123456789"
TEST_S = 180.0  # hang guards: every wait is for an event; a loaded 2-core machine needs room
WAIT_S = 60.0


class Gateway:
    """How a test reaches one `quiver serve` subprocess."""

    def __init__(self, manifest: Path, transport: str, env: dict[str, str], cwd: Path, errlog: Path) -> None:
        self.manifest = manifest
        self.transport = transport
        self.env = env
        self.cwd = cwd
        self.errlog = errlog
        self.url: str | None = None
        self.stderr_lines: list[str] = []
        self.ledger = errlog.parent / "ledger.db"

    def argv(self) -> list[str]:
        args = [
            sys.executable,
            "-m",
            "quiver",
            "serve",
            str(self.manifest),
            "--startup-timeout",
            "20",
            "--ledger",
            str(self.ledger),
        ]
        return [*args, "--http", "127.0.0.1:0"] if self.transport == "http" else args

    def pid(self, procs: Any) -> int:
        (pid,) = procs.with_argument(str(self.manifest))
        return int(pid)

    @asynccontextmanager
    async def session(self, on_message: Callable[[IncomingMessage], Any] | None = None) -> AsyncIterator[ClientSession]:
        """A handshake-era (2025-11-25) ClientSession."""
        async with (
            self.streams() as (read_stream, write_stream),
            ClientSession(read_stream, write_stream, message_handler=on_message) as session,
        ):
            await session.initialize()
            yield session

    @asynccontextmanager
    async def client(self) -> AsyncIterator[Client]:
        """The unified Client, which speaks 2026-07-28."""
        async with self.streams() as streams, Client(_Fixed(streams)) as client:
            yield client

    @asynccontextmanager
    async def streams(self) -> AsyncIterator[Any]:
        if self.transport == "stdio":
            params = StdioServerParameters(
                command=self.argv()[0], args=self.argv()[1:], env=self.env, cwd=str(self.cwd)
            )
            with self.errlog.open("a") as errlog:
                async with stdio_client(params, errlog=errlog) as streams:
                    yield streams
            return
        assert self.url is not None
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
            streamable_http_client(self.url, http_client=http) as streams,
        ):
            yield streams


class _Fixed:
    """An already-open stream pair as a `Transport` for `Client`."""

    def __init__(self, streams: Any) -> None:
        self._streams = streams

    async def __aenter__(self) -> Any:
        return self._streams

    async def __aexit__(self, *exc: object) -> None:
        return None


@asynccontextmanager
async def serving(
    manifest: Path, transport: str, cwd: Path, env: dict[str, str], tmp_path: Path
) -> AsyncIterator[Gateway]:
    """A gateway subprocess: stdio ones are started by each client; an HTTP one runs for the block."""
    gateway = Gateway(manifest, transport, env, cwd, tmp_path / "gateway.stderr")
    if transport == "stdio":
        try:
            yield gateway
        finally:
            print(gateway.errlog.read_text() if gateway.errlog.exists() else "")
        return
    process = await anyio.open_process(
        gateway.argv(), env={**env, "QUIVER_TOKEN": TOKEN}, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    assert process.stderr is not None
    lines = _lines(process.stderr)
    try:
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(WAIT_S):
                async for line in lines:
                    gateway.stderr_lines.append(line)
                    if match := re.search(r"listening on (\S+)", line):
                        gateway.url = match.group(1)
                        break
            assert gateway.url, "\n".join(gateway.stderr_lines)
            tg.start_soon(_drain, lines, gateway.stderr_lines)
            yield gateway
            process.terminate()
            with anyio.fail_after(WAIT_S):
                assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            with anyio.move_on_after(WAIT_S, shield=True):
                await process.wait()
        print("\n".join(gateway.stderr_lines))


async def _lines(stream: Any) -> AsyncIterator[str]:
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", "replace")


async def _drain(lines: AsyncIterator[str], into: list[str]) -> None:
    async for line in lines:
        into.append(line)


def text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def payload(result: types.CallToolResult) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


@pytest.fixture
def env(upstream_env: Callable[..., dict[str, str]]) -> dict[str, str]:
    return upstream_env()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_search_describe_call_refusals_schema_drift_and_recovery_after_a_crash(
    serve_manifest: Path,
    repo_root: Path,
    upstream_env: Callable[..., dict[str, str]],
    tmp_path: Path,
    procs: Any,
    transport: str,
) -> None:
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    env = upstream_env(NOTES_SCHEMA_VARIANT="2")  # notes drifts from the schema it was compiled against
    with anyio.fail_after(TEST_S):
        async with serving(serve_manifest, transport, repo_root, env, tmp_path) as gateway:
            async with gateway.session(on_message) as session:
                gateway_pid = gateway.pid(procs)
                listed = [t.name for t in (await session.list_tools()).tools]
                assert listed == ["calc__add", "calc__echo", "notes__search_notes", *META_TOOL_NAMES]
                assert procs.children_of(gateway_pid) == []  # nothing started before the first call

                # search -> describe (by the name search returned) -> call; a hit joins the list once described
                found = payload(await session.call_tool("search_tools", {"query": "multiply two numbers"}))
                assert found["tools"][0]["name"] == "calc__multiply"
                assert [t.name for t in (await session.list_tools()).tools] == listed  # hits alone join nothing
                assert not changed.is_set()
                described = payload(await session.call_tool("describe_tool", {"name": "calc__multiply"}))
                assert described["inputSchema"]["required"] == ["a", "b"] and "outputSchema" in described
                with anyio.fail_after(WAIT_S):
                    await changed.wait()
                assert [t.name for t in (await session.list_tools()).tools] == [*listed, "calc__multiply"]
                product = await session.call_tool("calc__multiply", {"a": 6, "b": 7})
                assert not product.is_error and product.structured_content == {"result": 42}

                # outside the allow-list, and invalid arguments: refused, nothing dispatched or started
                refused = await session.call_tool(
                    "call_tool", {"server": "notes", "tool": "delete_note", "arguments": {"id": "n1"}}
                )
                assert refused.is_error and "not in agent `assistant`'s tool set" in text(refused)
                invalid = await session.call_tool("notes__search_notes", {"query": 3})
                assert invalid.is_error and "nothing was sent to `notes`" in text(invalid)
                (calc_pid,) = procs.children_of(gateway_pid)  # notes was not started for the invalid call

                # the pinned schema drifted: refused naming the change; an unchanged tool still works
                drifted = await session.call_tool(
                    "call_tool", {"server": "notes", "tool": "create_note", "arguments": {"title": "t", "body": "b"}}
                )
                message = text(drifted)
                assert drifted.is_error and message.startswith("schema mismatch: `notes/create_note`"), message
                assert 'inputSchema.required: added "folder"' in message
                assert not (await session.call_tool("notes__search_notes", {"query": "t"})).is_error

                # calc crashes mid-call; the next call restarts it
                crashed = await session.call_tool("call_tool", {"server": "calc", "tool": "crash", "arguments": {}})
                assert crashed.is_error and "may or may not have run" in text(crashed)
                assert text(await session.call_tool("calc__echo", {"text": "after"})) == "after"
                assert not procs.alive(calc_pid)
                upstream_pids = procs.children_of(gateway_pid)
                assert len(upstream_pids) == 2
            if transport == "http":  # the HTTP gateway keeps its upstreams until it stops
                assert all(procs.alive(p) for p in upstream_pids)
        assert not procs.alive(gateway_pid)
        assert not any(procs.alive(p) for p in upstream_pids), "upstream processes outlived the gateway"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_2026_era_client_gets_list_changed_on_its_listen_stream(
    serve_manifest: Path, repo_root: Path, env: dict[str, str], tmp_path: Path, transport: str
) -> None:
    with anyio.fail_after(TEST_S):
        async with serving(serve_manifest, transport, repo_root, env, tmp_path) as gateway, gateway.client() as client:
            assert client.protocol_version == "2026-07-28"
            capabilities = client.server_capabilities.tools
            assert capabilities is not None and capabilities.list_changed
            async with client.listen(tools_list_changed=True) as subscription:
                found = payload(await client.call_tool("search_tools", {"query": "multiply two numbers", "limit": 1}))
                assert [hit["name"] for hit in found["tools"]] == ["calc__multiply"]
                assert "calc__multiply" not in [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
                # call_tool takes the name search returned; calling it is what joins it to the list
                product = await client.call_tool("call_tool", {"name": "calc__multiply", "arguments": {"a": 6, "b": 7}})
                with anyio.fail_after(WAIT_S):
                    event = await subscription.__anext__()
            assert type(event).__name__ == "ToolsListChanged"
            assert product.structured_content == {"result": 42}
            assert "calc__multiply" in [t.name for t in (await client.list_tools()).tools]
            direct = await client.call_tool("calc__multiply", {"a": 2, "b": 3})
            assert direct.structured_content == {"result": 6}
            mismatch = await client.call_tool(
                "call_tool", {"name": "calc__multiply", "server": "notes", "arguments": {}}
            )
            assert mismatch.is_error and "is calc/multiply, not notes/multiply" in text(mismatch)
            neither = await client.call_tool("describe_tool", {"tool": "multiply"})
            assert neither.is_error and "give `name` (as search_tools returned it) or `server` and `tool`" in text(
                neither
            )


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_demo_manifest_serves_discovery_without_starting_upstreams(
    demo_manifest: Path, repo_root: Path, env: dict[str, str], tmp_path: Path, procs: Any, transport: str
) -> None:
    manifest = json.loads(demo_manifest.read_text())
    preloaded = [t["names"]["quiver"] for t in manifest["tools"] if t["gateway"]["load"] == "preloaded"]
    with anyio.fail_after(TEST_S):
        async with serving(demo_manifest, transport, repo_root, env, tmp_path) as gateway:
            if transport == "http":
                assert gateway.url is not None and gateway.url.startswith("http://127.0.0.1:")
                async with httpx2.AsyncClient() as http:
                    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
                    anonymous = await http.post(gateway.url, json=initialize)
                    wrong = await http.post(gateway.url, json=initialize, headers={"Authorization": "Bearer nope"})
                assert anonymous.status_code == 401 and wrong.status_code == 401
                assert "bearer" in anonymous.headers.get("www-authenticate", "").lower()
            async with gateway.session() as session:
                listed = [t.name for t in (await session.list_tools()).tools]
                servers = payload(await session.call_tool("list_servers", {}))
                tools = payload(await session.call_tool("list_tools", {"server": "notion"}))
                found = payload(await session.call_tool("search_tools", {"query": "search issues", "limit": 3}))
                first = tools["tools"][0]["tool"]
                described = payload(await session.call_tool("describe_tool", {"server": "notion", "tool": first}))
                assert procs.children_of(gateway.pid(procs)) == []  # lazy: no npx, no remote connection
    assert listed == [*preloaded, *META_TOOL_NAMES]
    assert [s["name"] for s in servers["servers"]] == ["github", "notion", "tavily"]
    assert len(tools["tools"]) == 24 and found["tools"]
    assert described["name"] == f"notion__{first}" and "inputSchema" in described


@pytest.mark.parametrize(
    ("value", "expected"),
    [("8765", ("127.0.0.1", 8765)), ("0.0.0.0:0", ("0.0.0.0", 0)), ("[::1]:80", ("::1", 80)), (":9", ("127.0.0.1", 9))],
)
def test_http_addresses_default_to_the_loopback_host(value: str, expected: tuple[str, int]) -> None:
    assert parse_address(value) == expected


@pytest.mark.parametrize("value", ["abc", "127.0.0.1:", "127.0.0.1:70000", "host:-1"])
def test_a_malformed_http_address_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="is not HOST:PORT"):
        parse_address(value)


def test_the_token_comes_from_the_option_else_the_environment() -> None:
    assert resolve_token(" t1 ", {"QUIVER_TOKEN": "t2"}) == "t1"
    assert resolve_token(None, {"QUIVER_TOKEN": "t2"}) == "t2"
    with pytest.raises(UsageError, match="needs a bearer token"):
        resolve_token(None, {"QUIVER_TOKEN": "  "})


async def test_serving_http_without_a_token_refuses_to_start(demo_manifest: Path, env: dict[str, str]) -> None:
    env = {k: v for k, v in env.items() if k != "QUIVER_TOKEN"}
    result = subprocess.run(
        [sys.executable, "-m", "quiver", "serve", str(demo_manifest), "--http", "127.0.0.1:0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "needs a bearer token" in result.stderr and "QUIVER_TOKEN" in result.stderr


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_concurrent_calls_with_messages_larger_than_a_pipe_buffer_each_get_their_own_answer(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path,
    transport: str,
) -> None:  # fmt: skip
    # 300 KB lines arrive in many reads and fill the pipes (the gateway's and its upstream's) while small
    # calls are in flight: every answer must still be whole and go to its own call
    texts = [f"{i}:" + ("é" if i % 2 else "x") * (300_000 if i % 3 == 0 else 10) for i in range(12)]
    answers: dict[int, str] = {}
    with anyio.fail_after(TEST_S):
        async with (
            serving(serve_manifest, transport, repo_root, upstream_env(), tmp_path) as gateway,
            gateway.session() as session,
        ):

            async def call(i: int) -> None:
                result = await session.call_tool("calc__echo", {"text": texts[i]})
                assert not result.is_error
                block = result.content[0]
                assert isinstance(block, types.TextContent)
                answers[i] = block.text

            async with anyio.create_task_group() as tg:
                for i in range(len(texts)):
                    tg.start_soon(call, i)
    assert answers == dict(enumerate(texts))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_without_tracing_configured_the_callers_trace_context_and_the_key_still_reach_the_upstream(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path,
    transport: str,
) -> None:  # fmt: skip
    metas = tmp_path / "meta.jsonl"
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    traceparent = f"00-{trace_id}-{parent_id}-01"
    with anyio.fail_after(TEST_S):
        async with (
            serving(serve_manifest, transport, repo_root, upstream_env(CALC_META_LOG=str(metas)), tmp_path) as gw,
            gw.session() as session,
        ):
            joined = await session.call_tool("calc__echo", {"text": "a"}, meta={"traceparent": traceparent})
            alone = await session.call_tool("calc__echo", {"text": "b"})
    assert not joined.is_error and not alone.is_error
    sent = [json.loads(line)["meta"] for line in metas.read_text().splitlines()]
    assert len(sent) == 2
    assert sent[0]["traceparent"].split("-")[1] == trace_id  # the caller's trace, on to the upstream
    assert "traceparent" not in sent[1]  # no caller trace, no provider: nothing invented
    keys = [meta["io.quiver/idempotency-key"] for meta in sent]
    assert len(set(keys)) == 2 and all(len(key) == 26 for key in keys)  # each call its own action's key


async def test_every_call_goes_through_the_ledger_and_a_repeated_key_is_not_sent_twice(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.jsonl"
    env = upstream_env(CALC_EFFECT_LOG=str(effects))
    call = {"server": "calc", "tool": "counter_increment", "arguments": {"amount": 2}, "idempotency_key": "k-1"}
    with anyio.fail_after(TEST_S):
        async with (
            serving(serve_manifest, "stdio", repo_root, env, tmp_path) as gateway,
            gateway.session() as session,
        ):
            first = await session.call_tool("call_tool", call)
            again = await session.call_tool("call_tool", call)
            other = await session.call_tool("call_tool", {**call, "arguments": {"amount": 3}})
    assert not first.is_error and not again.is_error
    assert first.content == again.content
    assert other.is_error  # same key, different arguments
    assert len(effects.read_text().splitlines()) == 1  # the side effect happened once
    listed = subprocess.run(
        [sys.executable, "-m", "quiver", "ledger", "list", "--ledger", str(gateway.ledger), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )  # a subprocess: `quiver ledger` runs its own event loop
    actions = json.loads(listed.stdout)
    recorded = [(a["tool"], a["state"], a["idempotency_key"]) for a in actions]
    assert recorded == [("counter_increment", "succeeded", "k-1")]


async def test_the_gateway_records_session_figures_that_quiver_stats_reports(
    repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(repo_root / "examples" / "serve", project, ignore=shutil.ignore_patterns("build", ".quiver"))
    subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "--project", str(project)], check=True, capture_output=True
    )
    manifest = project / "build" / "quiver" / "assistant.json"
    with anyio.fail_after(TEST_S):
        async with (
            serving(manifest, "stdio", repo_root, upstream_env(), tmp_path) as gateway,
            gateway.session() as session,
        ):
            await session.call_tool("search_tools", {"query": "multiply two numbers"})
            await session.call_tool("describe_tool", {"server": "calc", "tool": "multiply"})
            await session.call_tool("calc__multiply", {"a": 2, "b": 3})
            await session.call_tool("calc__add", {"a": "x"})  # fails validation
            await session.call_tool("call_tool", {"server": "notes", "tool": "delete_note", "arguments": {}})
            await session.call_tool("call_tool", {"server": "github", "tool": "x", "arguments": {}})  # no such server
            await session.call_tool("describe_tool", {"server": "github", "tool": "x"})  # refused too
    stats = subprocess.run(
        [sys.executable, "-m", "quiver", "stats", "--project", str(project), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(stats.stdout)
    (agent,) = figures["agents"]
    assert agent["agent"] == "assistant" and agent["sessions"] == 1
    assert (agent["calls"], agent["validation_failures"], agent["refusals"]) == (2, 1, 3)  # refusals are not calls
    assert agent["discovery_steps"] == 3
