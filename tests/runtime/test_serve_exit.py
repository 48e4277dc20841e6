"""How a real `quiver serve` process ends: exit 0 when the stdio client leaves or after SIGTERM (a
supervisor's stop), 130 after SIGINT (Ctrl-C), over stdio and HTTP alike, never with a traceback, and
with its upstream servers stopped."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

WAIT_S = 30.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "exit-test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL_ADD = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "call_tool", "arguments": {"server": "calc", "tool": "add", "arguments": {"a": 2, "b": 3}}},
}


def start(
    manifest: Path, tmp_path: Path, env: dict[str, str], cwd: Path, gateways: list[subprocess.Popen[bytes]], *extra: str
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "quiver", "serve", str(manifest), "--ledger", str(tmp_path / "ledger.db"), *extra]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    gateways.append(proc)
    return proc


def send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def answer(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], WAIT_S)
    assert ready, "no answer from the gateway"
    line = proc.stdout.readline()
    assert line, f"the gateway closed stdout: {proc.stderr.read() if proc.stderr else b''!r}"
    result: dict[str, Any] = json.loads(line)
    return result


def wait_for_line(proc: subprocess.Popen[bytes], text: str) -> None:
    assert proc.stderr is not None
    seen = b""
    while text.encode() not in seen:
        ready, _, _ = select.select([proc.stderr], [], [], WAIT_S)
        assert ready, f"no `{text}` on stderr: {seen!r}"
        chunk = os.read(proc.stderr.fileno(), 4096)
        assert chunk, f"stderr closed before `{text}`: {seen!r}"
        seen += chunk


def session_with_an_upstream(proc: subprocess.Popen[bytes], procs: Any) -> list[int]:
    """Initialize, call calc's add (so an upstream runs); the gateway's live children."""
    send(proc, INITIALIZE)
    assert answer(proc)["result"]["serverInfo"]["name"] == "quiver"
    send(proc, INITIALIZED)
    send(proc, CALL_ADD)
    called = answer(proc)
    assert called["id"] == 2 and not called["result"].get("isError"), called
    children = procs.children_of(proc.pid)
    assert children, "calling calc/add started no upstream"
    return children


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Its exit code and the rest of its stderr (a few log lines: the pipe cannot fill)."""
    code = proc.wait(timeout=WAIT_S)
    assert proc.stderr is not None and proc.stdout is not None
    err = proc.stderr.read().decode("utf-8", "replace")
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return code, err


def test_stdio_exits_0_without_a_traceback_when_the_client_leaves(
    serve_manifest: Path,
    tmp_path: Path,
    upstream_env: Any,
    repo_root: Path,
    gateways: list[subprocess.Popen[bytes]],
    procs: Any,
) -> None:
    proc = start(serve_manifest, tmp_path, upstream_env(), repo_root, gateways)
    children = session_with_an_upstream(proc, procs)
    assert proc.stdin is not None
    proc.stdin.close()
    code, err = finish(proc)
    assert code == 0, err
    assert "Traceback" not in err and "CancelledError" not in err, err
    assert not [pid for pid in children if procs.alive(pid)], "an upstream outlived the gateway"


@pytest.mark.parametrize(("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_stdio_exits_130_after_sigint_0_after_sigterm_and_stops_its_upstreams(
    signum: signal.Signals,
    expected: int,
    serve_manifest: Path,
    tmp_path: Path,
    upstream_env: Any,
    repo_root: Path,
    gateways: list[subprocess.Popen[bytes]],
    procs: Any,
) -> None:
    proc = start(serve_manifest, tmp_path, upstream_env(), repo_root, gateways)
    children = session_with_an_upstream(proc, procs)
    proc.send_signal(signum)
    code, err = finish(proc)
    assert code == expected, err
    assert "Traceback" not in err, err
    assert not [pid for pid in children if procs.alive(pid)], "an upstream outlived the gateway"


@pytest.mark.parametrize(("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_http_exits_like_stdio_after_a_signal(
    signum: signal.Signals,
    expected: int,
    serve_manifest: Path,
    tmp_path: Path,
    upstream_env: Any,
    repo_root: Path,
    gateways: list[subprocess.Popen[bytes]],
) -> None:
    env = upstream_env(QUIVER_TOKEN="exit-test-token")
    proc = start(serve_manifest, tmp_path, env, repo_root, gateways, "--http", "127.0.0.1:0")
    wait_for_line(proc, "listening on http://")
    proc.send_signal(signum)
    code, err = finish(proc)
    assert code == expected, err
    assert "Traceback" not in err, err


def test_http_parses_requests_with_httptools_not_h11() -> None:
    """httptools is a dependency for `serve --http`'s speed (bench/gateway.py: about 0.3 ms a call);
    the gateway's uvicorn settings must let uvicorn pick it."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from quiver.runtime.serve import uvicorn_config

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("not served")

    config = uvicorn_config(app)
    config.load()
    assert issubclass(config.http_protocol_class, HttpToolsProtocol)  # with the limits of _uvicorn_limits
