"""Live catalog capture against our example servers as real subprocesses; plus the servers' fault knobs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import pytest

from quiver.errors import InputError
from quiver.sources.live import CapturedCatalog, fetch_catalog, fetch_catalog_sync

SERVERS = Path(__file__).resolve().parents[2] / "examples" / "servers"
NOTES = str(SERVERS / "notes_server.py")
CALC = str(SERVERS / "calc_server.py")
NOTES_TOOLS = ["list_notes", "get_note", "search_notes", "create_note", "update_note", "delete_note"]
CALC_TOOLS = ["add", "multiply", "echo", "slow_echo", "flaky", "crash", "counter_increment"]
HANDSHAKE_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
READY_TIMEOUT_S = 15.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def capture_notes(**env: str) -> CapturedCatalog:
    return fetch_catalog_sync(transport="stdio", command=sys.executable, args=[NOTES], env=env, timeout_s=20)


@pytest.fixture(scope="module")
def notes_catalog() -> CapturedCatalog:
    return capture_notes(NOTES_PAGE_SIZE="2")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def calc_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`calc_server.py --http` on a free port; yields the base URL once the port accepts connections."""
    yield from _serve_calc("--http", tmp_path_factory.mktemp("calc_http"))


@pytest.fixture(scope="module")
def calc_sse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve_calc("--sse", tmp_path_factory.mktemp("calc_sse"))


def _serve_calc(flag: str, workdir: Path) -> Iterator[str]:
    port = _free_port()
    with (workdir / "stderr.log").open("w+", encoding="utf-8") as stderr:
        proc = subprocess.Popen(
            [sys.executable, CALC, flag, f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL, stderr=stderr
        )
        try:
            _wait_for_port(proc, port, stderr)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def _wait_for_port(proc: subprocess.Popen[bytes], port: int, stderr: IO[str]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stderr.seek(0)
            pytest.fail(f"calc server exited with {proc.returncode}: {stderr.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)  # polling interval, not a wait for readiness
    pytest.fail(f"calc server did not listen on port {port} within {READY_TIMEOUT_S} s")


# --- capture over stdio ---------------------------------------------------------------------------


def test_stdio_capture_follows_next_cursor_until_all_six_tools_are_collected(
    notes_catalog: CapturedCatalog,
) -> None:
    assert [tool["name"] for tool in notes_catalog.tools] == NOTES_TOOLS


def test_stdio_capture_reports_server_info_instructions_and_protocol_version(
    notes_catalog: CapturedCatalog,
) -> None:
    assert notes_catalog.server_info == {"name": "notes", "version": "1.0.0"}
    assert notes_catalog.instructions is not None
    assert "search_notes" in notes_catalog.instructions
    assert notes_catalog.protocol_version in HANDSHAKE_VERSIONS


def test_captured_tools_use_camel_case_wire_keys_and_omit_unset_fields(
    notes_catalog: CapturedCatalog,
) -> None:
    tools = {tool["name"]: tool for tool in notes_catalog.tools}
    for tool in tools.values():
        assert set(tool) <= {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
        assert tool["inputSchema"]["additionalProperties"] is False
        assert None not in tool.values()
    assert tools["list_notes"]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert tools["delete_note"]["annotations"]["destructiveHint"] is True
    assert tools["update_note"]["annotations"]["idempotentHint"] is True
    assert tools["get_note"]["outputSchema"]["required"] == ["id", "title", "body", "tags"]
    assert "outputSchema" not in tools["delete_note"]
    json.dumps(notes_catalog.tools)  # plain JSON, ready for a lock file


def test_page_size_does_not_change_the_captured_catalog(notes_catalog: CapturedCatalog) -> None:
    assert capture_notes(NOTES_PAGE_SIZE="100") == notes_catalog


def test_schema_variant_2_changes_only_create_note_input_schema(notes_catalog: CapturedCatalog) -> None:
    drifted = capture_notes(NOTES_SCHEMA_VARIANT="2")
    before = {tool["name"]: tool for tool in notes_catalog.tools}
    after = {tool["name"]: tool for tool in drifted.tools}
    assert [name for name in NOTES_TOOLS if before[name] != after[name]] == ["create_note"]
    assert "folder" not in before["create_note"]["inputSchema"]["required"]
    assert "folder" in after["create_note"]["inputSchema"]["required"]


@pytest.mark.anyio
async def test_async_capture_passes_cwd_and_env_to_the_server(tmp_path: Path) -> None:
    catalog = await fetch_catalog(
        transport="stdio",
        command=sys.executable,
        args=["notes_server.py"],
        cwd=str(SERVERS),
        env={"NOTES_SCHEMA_VARIANT": "2"},
        timeout_s=20,
    )
    create = next(tool for tool in catalog.tools if tool["name"] == "create_note")
    assert "folder" in create["inputSchema"]["required"]


# --- capture over HTTP ----------------------------------------------------------------------------


def test_streamable_http_capture_reads_calc_server_catalog(calc_http: str) -> None:
    catalog = fetch_catalog_sync(transport="http", url=f"{calc_http}/mcp", headers={"X-Quiver-Test": "1"}, timeout_s=20)
    assert catalog.server_info == {"name": "calc", "version": "1.0.0"}
    assert catalog.protocol_version in HANDSHAKE_VERSIONS
    assert [tool["name"] for tool in catalog.tools] == CALC_TOOLS
    add = catalog.tools[0]
    assert add["inputSchema"]["required"] == ["a", "b"]
    assert add["outputSchema"]["properties"] == {"result": {"type": "number"}}


def test_sse_capture_reads_calc_server_catalog(calc_sse: str) -> None:
    catalog = fetch_catalog_sync(transport="sse", url=f"{calc_sse}/sse", timeout_s=20)
    assert catalog.server_info["name"] == "calc"
    assert [tool["name"] for tool in catalog.tools] == CALC_TOOLS


def test_http_url_where_nothing_listens_raises_input_error_naming_the_url() -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    with pytest.raises(InputError) as caught:
        fetch_catalog_sync(transport="http", url=url, timeout_s=10)
    assert f"`{url}`" in caught.value.message


# --- failures -------------------------------------------------------------------------------------


def test_command_that_does_not_exist_raises_input_error_naming_it() -> None:
    with pytest.raises(InputError) as caught:
        fetch_catalog_sync(transport="stdio", command="quiver-no-such-mcp-server", args=["--flag"])
    assert "`quiver-no-such-mcp-server --flag`" in caught.value.message
    assert caught.value.hint is not None
    assert "PATH" in caught.value.hint


def test_server_that_exits_at_once_raises_input_error_with_its_stderr() -> None:
    script = "import sys; print('fatal: NOTES_TOKEN is not set', file=sys.stderr); sys.exit(3)"
    with pytest.raises(InputError) as caught:
        fetch_catalog_sync(transport="stdio", command=sys.executable, args=["-c", script], timeout_s=20)
    message = caught.value.message
    assert message.startswith(f"MCP server `{sys.executable} -c ")
    assert "closed the connection during initialize" in message
    assert "fatal: NOTES_TOKEN is not set" in message
    assert "\n" not in caught.value.one_line()


def test_server_that_never_answers_raises_input_error_after_the_timeout() -> None:
    script = "import sys; print('not json-rpc'); sys.stdout.flush(); sys.stdin.read()"
    with pytest.raises(InputError) as caught:  # the message says the 1 s timeout fired, not a later one
        fetch_catalog_sync(transport="stdio", command=sys.executable, args=["-c", script], timeout_s=1)
    assert "within 1 s (during initialize)" in caught.value.message
    assert "`not json-rpc`" in caught.value.message


def test_repeated_cursor_raises_input_error_instead_of_looping() -> None:
    with pytest.raises(InputError) as caught:
        capture_notes(NOTES_CURSOR_LOOP="1")
    assert "repeated tools/list cursor" in caught.value.message


def test_missing_working_directory_raises_input_error() -> None:
    with pytest.raises(InputError, match="working directory"):
        fetch_catalog_sync(transport="stdio", command=sys.executable, args=[NOTES], cwd="/no/such/dir")


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"transport": "websocket", "url": "ws://x"}, "unknown MCP transport `websocket`"),
        ({"transport": "stdio"}, "needs a command"),
        ({"transport": "http"}, "needs a URL"),
        ({"transport": "sse", "command": "x"}, "needs a URL"),
    ],
)
def test_arguments_that_name_no_server_raise_input_error(kwargs: dict[str, Any], expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        fetch_catalog_sync(**kwargs)


def test_importing_live_does_not_import_mcp() -> None:
    code = "import sys, quiver.sources.live; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert out.stdout.strip() == "[]"


@pytest.mark.anyio
async def test_notes_db_file_keeps_notes_across_server_processes(tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=[NOTES], env={**os.environ, "NOTES_DB": str(tmp_path / "notes.json")}
    )
    listings = []
    with (tmp_path / "notes.stderr").open("a", encoding="utf-8") as errlog:
        for _ in range(2):
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.call_tool("create_note", {"title": "groceries", "body": "milk", "tags": ["home"]})
                listings.append((await session.call_tool("list_notes", {"tag": "home"})).structured_content)
    assert listings[0] == {"notes": [{"id": "n1", "title": "groceries", "tags": ["home"]}]}
    assert listings[1] == {"notes": [{"id": "n2", "title": "groceries", "tags": ["home"]}, listings[0]["notes"][0]]}


# --- calc_server fault knobs, driven with the SDK client over stdio -------------------------------


@asynccontextmanager
async def calc_session(tmp_path: Path, env: Mapping[str, str]) -> AsyncIterator[Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[CALC], env={**os.environ, **env})
    with (tmp_path / "calc.stderr").open("a", encoding="utf-8") as errlog, anyio.fail_after(20):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def effect_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.anyio
async def test_flaky_fails_the_configured_number_of_times_per_key_then_succeeds(tmp_path: Path) -> None:
    async with calc_session(tmp_path, {"CALC_FLAKY_FAILS": "3"}) as session:
        outcomes = [(await session.call_tool("flaky", {"key": "a"})).is_error for _ in range(4)]
        other = await session.call_tool("flaky", {"key": "b"})
        assert outcomes == [True, True, True, False]
        assert other.is_error
        final = await session.call_tool("flaky", {"key": "a"})
        assert final.structured_content == {"key": "a", "attempts": 5}


@pytest.mark.anyio
async def test_flaky_in_rpc_mode_fails_with_a_json_rpc_error(tmp_path: Path) -> None:
    from mcp import MCPError

    async with calc_session(tmp_path, {"CALC_FLAKY_FAILS": "1", "CALC_FLAKY_MODE": "rpc"}) as session:
        with pytest.raises(MCPError, match="transient failure 1 of 1"):
            await session.call_tool("flaky", {"key": "a"})
        assert not (await session.call_tool("flaky", {"key": "a"})).is_error


@pytest.mark.anyio
async def test_counter_increment_logs_every_call_and_its_key_when_keys_are_not_honoured(
    tmp_path: Path,
) -> None:
    log = tmp_path / "effects.jsonl"
    async with calc_session(tmp_path, {"CALC_EFFECT_LOG": str(log)}) as session:
        first = await session.call_tool("counter_increment", {"amount": 2}, meta={"io.quiver/idempotency-key": "k1"})
        second = await session.call_tool("counter_increment", {"amount": 2, "idempotency_key": "k1"})
    assert first.structured_content == {"total": 2, "applied": True, "key": "k1"}
    assert second.structured_content == {"total": 4, "applied": True, "key": "k1"}
    assert [(entry["amount"], entry["key"]) for entry in effect_log(log)] == [(2, "k1"), (2, "k1")]


@pytest.mark.anyio
async def test_honoured_idempotency_keys_apply_each_effect_once(tmp_path: Path) -> None:
    log = tmp_path / "effects.jsonl"
    env = {"CALC_EFFECT_LOG": str(log), "CALC_HONOUR_KEYS": "1"}
    async with calc_session(tmp_path, env) as session:
        first = await session.call_tool("counter_increment", {"amount": 5}, meta={"io.quiver/idempotency-key": "k1"})
        replay = await session.call_tool("counter_increment", {"amount": 5, "idempotency_key": "k1"})
        other = await session.call_tool("counter_increment", {"amount": 1, "idempotency_key": "k2"})
    assert first.structured_content == {"total": 5, "applied": True, "key": "k1"}
    assert replay.structured_content == {"total": 5, "applied": False, "key": "k1"}
    assert other.structured_content == {"total": 6, "applied": True, "key": "k2"}
    assert [entry["key"] for entry in effect_log(log)] == ["k1", "k2"]


@pytest.mark.anyio
async def test_drop_after_effect_applies_the_effect_and_a_keyed_retry_elsewhere_is_deduped(
    tmp_path: Path,
) -> None:
    from mcp import MCPError

    log = tmp_path / "effects.jsonl"
    env = {"CALC_EFFECT_LOG": str(log), "CALC_HONOUR_KEYS": "1"}
    async with calc_session(tmp_path, {**env, "CALC_DROP_AFTER_EFFECT": "1"}) as session:
        with pytest.raises(MCPError):
            await session.call_tool("counter_increment", {"amount": 3, "idempotency_key": "k1"}, read_timeout_seconds=1)
    assert [entry["key"] for entry in effect_log(log)] == ["k1"]
    async with calc_session(tmp_path, env) as session:  # a fresh process sharing the effect log
        retry = await session.call_tool("counter_increment", {"amount": 3, "idempotency_key": "k1"})
    assert retry.structured_content == {"total": 3, "applied": False, "key": "k1"}
    assert len(effect_log(log)) == 1


@pytest.mark.anyio
async def test_crash_ends_the_server_process_without_an_answer(tmp_path: Path) -> None:
    from mcp import MCPError

    async with calc_session(tmp_path, {}) as session:
        with pytest.raises(MCPError, match="Connection closed"):
            await session.call_tool("crash", {})
    assert "crash requested" in (tmp_path / "calc.stderr").read_text(encoding="utf-8")
