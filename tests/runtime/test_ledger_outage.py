"""The ledger unavailable, through a real `quiver serve` and the SDK's client (issue 26): every call is
answered with the JSON-RPC error LEDGER_UNAVAILABLE (data: retryable, sent, the key), nothing is sent
upstream, the log says so once per outage, and the same call with the same key runs once the ledger is back.

A full disk is a file size limit (RLIMIT_FSIZE, lowered on the running gateway with prlimit(2)): an
unprivileged stand-in for a full file system that SQLite sees the same way (a write that cannot extend a
file fails; Python ignores SIGXFSZ). The PostgreSQL case restarts a real server the test started.
"""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

pytestmark = pytest.mark.anyio

LEDGER_UNAVAILABLE = -32030
TEST_S = 120.0


def gateway_params(manifest: Path, ledger: str, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "quiver", "serve", str(manifest), "--ledger", ledger, "--startup-timeout", "30"],
        env={**env, "QUIVER_SWEEP_INTERVAL_S": "0.2"},
    )


def effects(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def refused(session: ClientSession, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> Any:
    with pytest.raises(MCPError) as caught:
        await session.call_tool(name, arguments, meta=meta)
    assert caught.value.code == LEDGER_UNAVAILABLE, caught.value
    return caught.value


async def test_a_full_disk_is_ledger_unavailable_once_logged_and_nothing_is_sent(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path, procs: Any
) -> None:
    effect_log = tmp_path / "effects.jsonl"
    ledger = tmp_path / "ledger.db"
    errlog = tmp_path / "gateway.stderr"
    params = gateway_params(serve_manifest, str(ledger), upstream_env(CALC_EFFECT_LOG=str(effect_log)))
    params.cwd = str(repo_root)
    increment = {"server": "calc", "tool": "counter_increment", "arguments": {"amount": 1}}
    with anyio.fail_after(TEST_S), errlog.open("w") as log:
        async with stdio_client(params, errlog=log) as streams, ClientSession(*streams) as session:
            await session.initialize()
            first = await session.call_tool("call_tool", {**increment, "idempotency_key": "k-0"})
            assert not first.is_error
            (pid,) = procs.with_argument(str(serve_manifest))
            wal = Path(f"{ledger}-wal")
            limit = max(wal.stat().st_size, 1)
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))  # the disk is full
            for i in range(1, 16):  # through the SDK's dispatcher (a meta-tool) ...
                error = await refused(session, "call_tool", {**increment, "idempotency_key": f"k-{i}"}, None)
                assert error.data == {"retryable": True, "sent": False, "idempotency_key": f"k-{i}"}
                assert f"call it again with idempotency key `k-{i}` later" in error.message
            for i in range(15):  # ... and on the stdio path beside it (a preloaded tool)
                meta = {"io.quiver/idempotency-key": f"add-{i}"}
                error = await refused(session, "calc__add", {"a": i, "b": 1}, meta)
                assert error.data == {"retryable": True, "sent": False, "idempotency_key": f"add-{i}"}
            assert [e.get("key") for e in effects(effect_log)] == ["k-0"]  # nothing was sent
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            again = await session.call_tool("call_tool", {**increment, "idempotency_key": "k-3"})
            assert not again.is_error
            replay = await session.call_tool("call_tool", {**increment, "idempotency_key": "k-3"})
            assert replay.content == again.content
    assert [e.get("key") for e in effects(effect_log)] == ["k-0", "k-3"]  # once each
    text = errlog.read_text()
    assert "Traceback" not in text and "internal error" not in text
    assert text.count("ledger unavailable:") == 1, text  # one line for the outage, not one per call
    assert "database or disk is full" in text or "disk I/O error" in text  # ENOSPC, or EFBIG past the limit
    assert text.count("the ledger is available again (30 call(s) were refused meanwhile)") == 1


async def test_a_postgresql_restart_is_ledger_unavailable_and_then_calls_go_on(
    serve_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    from _pg_server import PgServer

    effect_log = tmp_path / "effects.jsonl"
    errlog = tmp_path / "gateway.stderr"
    pg = PgServer()  # a server of its own: the shared one must not restart under other tests
    try:
        pg.start()
        url = pg.url(pg.create_database())
        migrated = await anyio.run_process(
            [sys.executable, "-m", "quiver", "ledger", "migrate", "--ledger", url], check=False
        )
        assert migrated.returncode == 0, migrated.stderr
        params = gateway_params(serve_manifest, url, upstream_env(CALC_EFFECT_LOG=str(effect_log)))
        params.cwd = str(repo_root)
        increment = {"server": "calc", "tool": "counter_increment", "arguments": {"amount": 1}}
        with anyio.fail_after(TEST_S), errlog.open("w") as log:
            async with stdio_client(params, errlog=log) as streams, ClientSession(*streams) as session:
                await session.initialize()
                assert not (await session.call_tool("call_tool", {**increment, "idempotency_key": "p-0"})).is_error
                await anyio.to_thread.run_sync(pg.halt)
                for i in range(1, 9):
                    error = await refused(session, "call_tool", {**increment, "idempotency_key": f"p-{i}"}, None)
                    assert error.data == {"retryable": True, "sent": False, "idempotency_key": f"p-{i}"}
                await anyio.to_thread.run_sync(pg.resume)
                for i in range(1, 9):  # the same calls, again: each sent once now
                    assert not (
                        await session.call_tool("call_tool", {**increment, "idempotency_key": f"p-{i}"})
                    ).is_error
        assert [e.get("key") for e in effects(effect_log)] == [f"p-{i}" for i in range(9)]
        text = errlog.read_text()
        assert "Traceback" not in text and "internal error" not in text
        assert text.count("ledger unavailable:") == 1, text
        assert text.count("the ledger is available again (8 call(s) were refused meanwhile)") == 1
    finally:
        pg.stop()
