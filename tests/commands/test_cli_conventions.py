"""Command-line conventions: `-C` everywhere, one-line usage errors, Ctrl-C exits 130, FORCE_COLOR when
piped, `lint DIR`, `--changed-only` in every format, globs in `mcp_configs`."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from projects import agent_text, make_project
from quiver.cli import cli

COMMANDS = [
    ["compile"],
    ["explain", "a"],
    ["snapshot"],
    ["lint"],
    ["diff"],
    ["rule", "AGT001"],
    ["search", "x"],
    ["route-test"],
    ["stats"],
    ["advise"],
    ["budget"],
    ["ledger", "list"],
    ["serve", "m.json"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0] if c[0] != "ledger" else "ledger list")
def test_every_command_takes_minus_c(command: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [*command, "-C", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: Invalid value for --project: directory ")
    assert "No such option" not in result.stderr


def test_a_usage_error_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["lint", "--frob"], prog_name="quiver")
    assert result.exit_code == 2
    assert result.stderr == "error: No such option '--frob' (see `quiver lint --help`)\n"


def _quiver(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "quiver", *args], cwd=cwd, env={**environ, **env}, capture_output=True, text=True
    )


def test_force_color_colors_piped_output_and_no_color_wins(tmp_path: Path) -> None:
    make_project(tmp_path, agents={".github/agents/a.agent.md": agent_text("name: a")})  # no description
    assert "\x1b[" in _quiver("lint", cwd=tmp_path, FORCE_COLOR="1").stdout
    assert "\x1b[" not in _quiver("lint", cwd=tmp_path).stdout
    assert "\x1b[" not in _quiver("lint", cwd=tmp_path, FORCE_COLOR="1", NO_COLOR="1").stdout
    for off in ("0", "", "false"):  # the force-color convention: these force nothing
        assert "\x1b[" not in _quiver("lint", cwd=tmp_path, FORCE_COLOR=off).stdout


def _interrupted_snapshot(
    project: Path, held: Callable[[], None], interrupt: Callable[[int], None] | None = None
) -> subprocess.CompletedProcess[str]:
    """`quiver snapshot` of `project`, interrupted with SIGINT once `held()` returns (the server holds it);
    `interrupt(pid)` sends it some other way."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "quiver", "snapshot", "--timeout", "60", "-C", str(project)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        held()
        if interrupt is None:
            proc.send_signal(signal.SIGINT)
        else:
            interrupt(proc.pid)
        out, err = proc.communicate(timeout=30)  # far below the 60 s capture timeout a lost Ctrl-C waits for
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _silent_stdio_server(project: Path) -> Callable[[], None]:
    """A stdio server in `project`'s .mcp.json that never answers initialize; returns a wait for its start."""
    marker = project / "started"
    script = f"import pathlib, sys; pathlib.Path({str(marker)!r}).write_text('x'); sys.stdin.read()"
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"slow": {"command": sys.executable, "args": ["-c", script]}}}), encoding="utf-8"
    )

    def started() -> None:
        for _ in range(1200):
            if marker.exists():
                return
            time.sleep(0.05)
        raise AssertionError("the server never started")

    return started


def test_ctrl_c_exits_130_not_1(tmp_path: Path) -> None:
    """A stdio server that never answers initialize: Ctrl-C stops it and exits 130."""
    done = _interrupted_snapshot(tmp_path, _silent_stdio_server(tmp_path))
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "error: interrupted"


def _to_another_thread(pid: int) -> None:
    """SIGINT to a thread of `pid` other than its main one (asyncio's child watcher waits in one), as the kernel
    may deliver a terminal's Ctrl-C: the main thread, asleep in epoll, is not woken by the signal itself."""
    threads = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    target = threads[0] if threads else pid  # no other thread (a pidfd child watcher): the main one
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(pid, target, signal.SIGINT) == 0, os.strerror(ctypes.get_errno())


def test_ctrl_c_delivered_to_another_thread_still_ends_the_capture(tmp_path: Path) -> None:
    """Before the capture took SIGINT itself, such a Ctrl-C waited out the capture's 60 s timeout."""
    done = _interrupted_snapshot(tmp_path, _silent_stdio_server(tmp_path), _to_another_thread)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "error: interrupted"


def test_ctrl_c_during_an_http_capture_exits_130(tmp_path: Path) -> None:
    """An HTTP server that takes the request and never answers: Ctrl-C ends the capture, not its timeout."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        (tmp_path / ".mcp.json").write_text(
            json.dumps({"mcpServers": {"silent": {"type": "http", "url": url}}}), encoding="utf-8"
        )
        held: list[socket.socket] = []

        def connected() -> None:
            listener.settimeout(60)
            conn, _ = listener.accept()
            held.append(conn)
            conn.settimeout(60)
            assert conn.recv(65536).startswith(b"POST "), "no request came"  # the request arrived, unanswered

        try:
            done = _interrupted_snapshot(tmp_path, connected)
        finally:
            for conn in held:
                conn.close()
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "error: interrupted"


def test_lint_takes_a_directory_and_reports_only_what_is_inside(tmp_path: Path) -> None:
    make_project(
        tmp_path,
        agents={
            ".github/agents/a.agent.md": agent_text("name: a"),
            ".claude/agents/b.md": agent_text("name: b"),
        },
    )
    result = CliRunner().invoke(cli, ["lint", "-C", str(tmp_path), "--format", "json", str(tmp_path / ".github")])
    files = {f["file"] for f in json.loads(result.stdout)}
    assert files == {".github/agents/a.agent.md"}


def test_changed_only_filters_every_format(tmp_path: Path) -> None:
    make_project(tmp_path, agents={".github/agents/old.agent.md": agent_text("name: old")})
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    (tmp_path / ".github/agents/new.agent.md").write_text(agent_text("name: new"), encoding="utf-8")
    args = ["lint", "-C", str(tmp_path), "--format", "json", "--changed-only", "--base", "HEAD"]
    result = CliRunner().invoke(cli, args)
    assert {f["file"] for f in json.loads(result.stdout)} == {".github/agents/new.agent.md"}


def test_mcp_configs_takes_globs(tmp_path: Path) -> None:
    agent = agent_text("description: d\ntools: ['one/*', 'two/*']")
    make_project(tmp_path, agents={".github/agents/a.agent.md": agent})
    (tmp_path / "mcp").mkdir()
    for name in ("one", "two"):
        config = {"mcpServers": {name: {"command": "srv", "tools": ["*"]}}}
        (tmp_path / "mcp" / f"{name}.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "quiver.toml").write_text('mcp_configs = ["mcp/*.json"]\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["lint", "-C", str(tmp_path), "--format", "json"])
    servers = {f["server"] for f in json.loads(result.stdout) if f["rule"] == "MCP012"}
    assert servers == {"one", "two"}  # both files read: their servers are known, only unsnapshotted
