"""Servers for bench/gateway.py: streamable-HTTP endpoints (calc direct, `quiver serve --http`) and the peers.

Peers, where they run: FastMCP's proxy (`fastmcp.server.create_proxy` of calc over stdio, served over stdio
or streamable HTTP) and mcp-proxy (stdio server exposed over streamable HTTP). They are not quiver's
dependencies: the bench looks for them in `--peers-python` (a Python that has them, e.g. a venv made with
`pip install fastmcp mcp-proxy`), else in the bench's own Python, and says why a peer is left out.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FASTMCP_PROXY = r"""
import sys
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy
python, calc, http = sys.argv[1], sys.argv[2], sys.argv[3]
proxy = create_proxy(StdioTransport(command=python, args=[calc]), name="fastmcp-proxy")
if http:
    host, port = http.rsplit(":", 1)
    proxy.run(transport="http", host=host, port=int(port), show_banner=False, log_level="warning")
else:
    proxy.run(show_banner=False, log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(command: list[str], port: int, env: dict[str, str], cwd: Path) -> Iterator[str]:
    """Run `command` (serving http://127.0.0.1:PORT/mcp) until the block ends; yields the URL."""
    with open(os.devnull, "w") as errlog:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=errlog, stderr=errlog)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{command[:3]} exited with {proc.returncode} before listening")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{command[:3]} did not listen on {port} within 60 s") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def peer_python(given: str | None) -> str:
    return given or os.environ.get("QUIVER_BENCH_PEERS_PYTHON") or sys.executable


def fastmcp_problem(python: str) -> str | None:
    """Why FastMCP's proxy cannot run with `python` (None: it can)."""
    probe = subprocess.run(
        [python, "-c", "from fastmcp.server import create_proxy; import fastmcp; print(fastmcp.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return None if probe.returncode == 0 else _last_line(probe.stderr) or "fastmcp is not installed"


def fastmcp_version(python: str) -> str:
    out = subprocess.run([python, "-c", "import fastmcp; print(fastmcp.__version__)"], capture_output=True, text=True)
    return out.stdout.strip()


def fastmcp_command(python: str, calc: Path, http: str = "") -> list[str]:
    return [python, "-c", FASTMCP_PROXY, sys.executable, str(calc), http]


def mcp_proxy_command(python: str, given: str | None = None) -> tuple[list[str] | None, str | None]:
    """(the mcp-proxy command, None) or (None, why it does not run here): `given` (`--mcp-proxy`, else
    QUIVER_BENCH_MCP_PROXY), else beside `python`, else on PATH. mcp-proxy imports the SDK's 1.x server
    internals, so it may need a venv of its own (`pip install mcp-proxy "mcp<2"`)."""
    given = given or os.environ.get("QUIVER_BENCH_MCP_PROXY")
    beside = Path(python).parent / "mcp-proxy"
    found = given or (str(beside) if beside.is_file() else shutil.which("mcp-proxy"))
    if found is None:
        return None, "mcp-proxy is not installed"
    probe = subprocess.run([found, "--help"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return None, _last_line(probe.stderr) or f"mcp-proxy --help exited with {probe.returncode}"
    return [found], None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""
