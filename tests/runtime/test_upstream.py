"""UpstreamManager against our example servers as real subprocesses (stdio) and over streamable HTTP.

Lazy start, one start for concurrent first calls, a crash mid-call (ambiguous) then recovery, timeouts,
error mapping, pins, `_meta` forwarding, a lost HTTP session, and no child process left behind.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from quiver.model import sha256_json
from quiver.runtime._manifest import Manifest, ManifestServer, load_manifest
from quiver.runtime.protocol import (
    CallRequest,
    UpstreamProtocolError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from quiver.runtime.upstream import SchemaMismatch, UpstreamConnectionLost, UpstreamManager

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_children")]

WAIT_S = 60.0


@pytest.fixture
def manifest(serve_manifest: Path) -> Manifest:
    return load_manifest(serve_manifest)


@pytest.fixture
def manager(
    manifest: Manifest, repo_root: Path, upstream_env: Callable[..., dict[str, str]]
) -> Callable[..., UpstreamManager]:
    def make(*servers: ManifestServer, **env: str) -> UpstreamManager:
        chosen = servers or tuple(manifest.servers.values())
        return UpstreamManager(chosen, environ=upstream_env(**env), cwd=repo_root, startup_timeout_s=15.0)

    return make


def own_children(procs: Any) -> list[int]:
    """Our example upstream servers among the test runner's children (other fixtures, such as a
    session-wide PostgreSQL server, may have children of their own)."""
    servers = ("calc_server.py", "notes_server.py")
    found = []
    for pid in procs.children_of(os.getpid()):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if any(arg.endswith(servers) for arg in args):
            found.append(pid)
    return found


async def test_servers_start_lazily_on_first_use_and_stop_on_exit(
    manager: Callable[..., UpstreamManager], procs: Any
) -> None:
    with anyio.fail_after(WAIT_S):
        async with manager() as upstreams:
            assert own_children(procs) == [] and not upstreams.running("calc")
            result = await upstreams.call("calc", "add", {"a": 2, "b": 3})
            assert result["structuredContent"] == {"result": 5}
            started = own_children(procs)
            assert len(started) == 1 and upstreams.running("calc") and not upstreams.running("notes")
        assert not any(procs.alive(pid) for pid in started)


async def test_concurrent_first_calls_start_the_server_once(manager: Callable[..., UpstreamManager]) -> None:
    results: list[Any] = []

    async def one(i: int) -> None:
        results.append(await upstreams.call("calc", "echo", {"text": str(i)}))

    with anyio.fail_after(WAIT_S):
        async with manager() as upstreams:
            async with anyio.create_task_group() as tg:
                for i in range(8):
                    tg.start_soon(one, i)
            assert upstreams.starts["calc"] == 1
    assert sorted(r["content"][0]["text"] for r in results) == [str(i) for i in range(8)]


async def test_a_crash_mid_call_is_ambiguous_and_the_next_call_restarts_the_server(
    manager: Callable[..., UpstreamManager], procs: Any
) -> None:
    with anyio.fail_after(WAIT_S):
        async with manager() as upstreams:
            await upstreams.call("calc", "echo", {"text": "before"})
            (first_pid,) = own_children(procs)
            with pytest.raises(UpstreamConnectionLost) as lost:
                await upstreams.call("calc", "crash", {})
            assert isinstance(lost.value, UpstreamTimeout)  # the executor treats it as "may have run"
            again = await upstreams.call("calc", "echo", {"text": "after"})
            assert again["content"][0]["text"] == "after"
            assert upstreams.starts["calc"] == 2
            assert not procs.alive(first_pid) and len(own_children(procs)) == 1


async def test_a_server_that_died_between_calls_is_restarted_before_sending(
    manager: Callable[..., UpstreamManager], procs: Any
) -> None:
    with anyio.fail_after(WAIT_S):
        async with manager() as upstreams:
            await upstreams.call("calc", "echo", {"text": "one"})
            (pid,) = own_children(procs)
            os.kill(pid, 9)
            await upstreams.wait_ended("calc")  # the manager notices the end of the child's stdout
            assert not upstreams.running("calc")
            result = await upstreams.call("calc", "echo", {"text": "two"})  # never written to the dead one
            assert result["content"][0]["text"] == "two" and upstreams.starts["calc"] == 2


async def test_timeouts_and_jsonrpc_errors_map_to_the_protocol_errors(manager: Callable[..., UpstreamManager]) -> None:
    with anyio.fail_after(WAIT_S):
        async with manager(CALC_FLAKY_MODE="rpc") as upstreams:
            with pytest.raises(UpstreamTimeout) as slow:
                await upstreams.call("calc", "slow_echo", {"text": "x", "delay_ms": 5000}, timeout_s=0.2)
            assert not isinstance(slow.value, UpstreamConnectionLost)
            with pytest.raises(UpstreamProtocolError) as unknown:
                await upstreams.call("calc", "no_such_tool", {})
            assert unknown.value.code == -32602 and not unknown.value.transient
            with pytest.raises(UpstreamProtocolError) as flaky:
                await upstreams.call("calc", "flaky", {"key": "k"})
            assert flaky.value.code == -32603 and flaky.value.transient
            assert (await upstreams.call("calc", "echo", {"text": "still up"}))["isError"] is False


async def test_a_server_that_cannot_start_is_unavailable(repo_root: Path, tmp_path: Path) -> None:
    never_answers = ["-c", "import sys; sys.stdin.read()"]  # reads, never answers; exits when stdin closes
    servers = {
        "missing": ({"type": "stdio", "command": str(tmp_path / "nope")}, "cannot start upstream `missing`"),
        "unset": ({"type": "stdio", "command": "${QUIVER_TEST_UNSET}"}, "`${QUIVER_TEST_UNSET}` is not set"),
        "silent": ({"type": "stdio", "command": sys.executable, "args": never_answers}, "did not start within 1 s"),
        "refused": ({"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"}, "cannot start upstream `refused`"),
    }
    specs = [ManifestServer(name, "", transport, None) for name, (transport, _) in servers.items()]
    failures: dict[str, str] = {}

    async def attempt(name: str) -> None:
        with pytest.raises(UpstreamUnavailable) as caught:
            await upstreams.call(name, "x", {})
        failures[name] = str(caught.value)

    with anyio.fail_after(WAIT_S):
        async with (
            UpstreamManager(specs, environ={}, cwd=repo_root, startup_timeout_s=1.0) as upstreams,
            anyio.create_task_group() as tg,
        ):
            for name in servers:
                tg.start_soon(attempt, name)
    for name, (_, expected) in servers.items():
        assert expected in failures[name], failures[name]


async def test_a_pin_is_checked_against_the_live_definition(
    manager: Callable[..., UpstreamManager], manifest: Manifest
) -> None:
    create = manifest.by_key[("notes", "create_note")]
    listed = manifest.by_key[("notes", "list_notes")]
    with anyio.fail_after(WAIT_S):
        async with manager(manifest.servers["notes"], NOTES_SCHEMA_VARIANT="2") as upstreams:
            drifted = await upstreams.check_pin("notes", "create_note", create.sha256)
            unchanged = await upstreams.check_pin("notes", "list_notes", listed.sha256)
            with pytest.raises(SchemaMismatch, match="create_note"):
                await upstreams.call(
                    "notes", "create_note", {"title": "t", "body": "b", "folder": "f"}, pin=create.sha256
                )
    assert not drifted.matches and drifted.current is not None
    assert "folder" in drifted.current["inputSchema"]["required"]
    assert drifted.current_sha256 == sha256_json(drifted.current)
    assert unchanged.matches


async def test_dispatch_forwards_meta_but_not_the_client_envelope(
    manager: Callable[..., UpstreamManager], manifest: Manifest
) -> None:
    tool = manifest.by_key[("calc", "counter_increment")]
    request = CallRequest(
        server="calc",
        tool="counter_increment",
        arguments={"amount": 1},
        tool_sha256=tool.sha256,
        policy=tool.policy,
        session_id="s",
        meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 3},
    )
    with anyio.fail_after(WAIT_S):
        async with manager() as upstreams:
            result = await upstreams.dispatch(request, {"io.quiver/idempotency-key": "key-7"}, 5.0)
    assert result["structuredContent"] == {"total": 1, "applied": True, "key": "key-7"}


async def test_a_lost_http_session_is_reinitialized_and_the_call_sent_again(
    repo_root: Path, upstream_env: Callable[..., dict[str, str]]
) -> None:
    port = free_port()
    calc = ManifestServer("calc", "", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}, None)
    with anyio.fail_after(WAIT_S):
        async with UpstreamManager([calc], environ={}, startup_timeout_s=5.0) as upstreams:
            async with http_calc(repo_root, port, upstream_env()):
                assert (await upstreams.call("calc", "add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
            async with http_calc(repo_root, port, upstream_env()):  # a new process: our session is unknown
                result = await upstreams.call("calc", "add", {"a": 2, "b": 2})
                assert result["structuredContent"] == {"result": 4}
                assert upstreams.starts["calc"] == 2


@asynccontextmanager
async def http_calc(repo_root: Path, port: int, env: dict[str, str]) -> AsyncIterator[None]:
    script = repo_root / "examples" / "servers" / "calc_server.py"
    process = await anyio.open_process(
        [sys.executable, str(script), "--http", f"127.0.0.1:{port}"],
        env={**env, "CALC_LOG_LEVEL": "WARNING"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await wait_for_port(port)
        yield
    finally:
        process.terminate()
        with anyio.move_on_after(5, shield=True):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


async def wait_for_port(port: int) -> None:
    """Readiness probe: the server accepts connections (each attempt is refused at once until then)."""
    while True:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            await anyio.sleep(0.05)
            continue
        await stream.aclose()
        return


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_empty_pin_is_no_pin_and_is_refused_before_anything_starts(
    manager: Callable[..., UpstreamManager],
) -> None:
    with anyio.fail_after(WAIT_S):
        async with manager() as upstreams:
            with pytest.raises(SchemaMismatch, match="no pin"):
                await upstreams.call("calc", "echo", {"text": "x"}, pin="")
            assert upstreams.starts["calc"] == 0
