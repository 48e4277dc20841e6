"""Run a real host (Claude Code, Copilot CLI) against a recording endpoint on loopback; keep what it sends.

`Recorder` is an Anthropic-compatible endpoint on an ephemeral 127.0.0.1 port, served from a thread: it
saves every request body, answers `/v1/messages` streaming or not with a one-word reply, answers
`/v1/messages/count_tokens` with a configurable `input_tokens`, and can answer the first main-thread request
with a `tool_use` of Claude Code's `Agent` tool so that a named subagent is spawned. It doubles as the
hosts' HTTP(S) proxy and refuses every request to anywhere else (recording the host it was for), so a
host run here reaches nothing beyond loopback.

`run_host` runs one host once on one project: a temporary HOME, a temporary project directory holding the
project's agent folders (`.claude/`, `.github/`) and links to the repository's `examples/` and
`tests/fixtures/hosts/` (so a server's repository-relative paths resolve from there), the project's
`.mcp.json` passed on the command line, a minimal environment. It returns once the request it is after
has arrived (or the host has exited), and then ends the host and every process it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLAUDE_CODE = "claude-code"
COPILOT_CLI = "copilot-cli"
HOSTS = (CLAUDE_CODE, COPILOT_CLI)
BINARIES = {CLAUDE_CODE: "claude", COPILOT_CLI: "copilot"}
PINNED = {CLAUDE_CODE: "2.1.332", COPILOT_CLI: "1.0.102"}  # scripts/install-hosts.sh
PROMPT = "hello"
PROBE = "quiver-hostrec: reply ok"  # the prompt the spawned subagent is given; finds its first request
SPAWN_ID = "toolu_quiver_hostrec_01"
# Folders of a project the host reads itself; everything else of the fixture stays out of its sight.
AGENT_DIRS = (".claude", ".github")
# Repository folders linked into the host's project so that repository-relative server paths resolve.
LINKED = (Path("examples"), Path("tests/fixtures/hosts"))
RUN_TIMEOUT_S = 180.0  # a safety net only: a run ends on the request it waits for, or the host's exit


@dataclass(frozen=True, slots=True)
class Request:
    """One POST the host sent: its path and its JSON body (None when it had none)."""

    path: str
    body: Any
    at: float = 0.0  # seconds since the recorder started

    @property
    def is_messages(self) -> bool:
        return self.path.split("?")[0].endswith("/messages")

    @property
    def is_count_tokens(self) -> bool:
        return "count_tokens" in self.path


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _has_role(body: Any, role: str) -> bool:
    messages = body.get("messages") if isinstance(body, dict) else None
    return any(isinstance(m, dict) and m.get("role") == role for m in messages or [])


def _tool_names(body: Any) -> list[str]:
    tools = body.get("tools") if isinstance(body, dict) else None
    return [str(t.get("name")) for t in tools or [] if isinstance(t, dict)]


class Recorder:
    """The recording endpoint. Use as a context manager; `url` is its base URL once entered."""

    def __init__(self, *, input_tokens: int = 10, spawn: str | None = None, save_dir: Path | None = None) -> None:
        self.input_tokens = input_tokens
        self.spawn = spawn
        self.save_dir = save_dir
        self.requests: list[Request] = []
        self.refused: list[str] = []  # hosts the host tried to reach through the proxy
        self.spawned = False
        self.started = time.monotonic()
        self.changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the recorder is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Recorder:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _refuse(self) -> bool:
                # A proxied request (absolute URL or CONNECT) for anywhere: refused, and noted.
                if self.command == "CONNECT" or self.path.startswith(("http://", "https://")):
                    with recorder.changed:
                        recorder.refused.append(self.path)
                    self._reply(403, b"", "text/plain")
                    return True
                return False

            def _reply(self, status: int, payload: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_CONNECT(self) -> None:
                self._refuse()

            def do_GET(self) -> None:
                if not self._refuse():
                    self._reply(200, b"{}")

            def do_HEAD(self) -> None:
                if not self._refuse():
                    self.send_response(200)
                    self.send_header("content-length", "0")
                    self.end_headers()

            def do_POST(self) -> None:
                if self._refuse():
                    return
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                request = Request(self.path, body, time.monotonic() - recorder.started)
                spawn = recorder._should_spawn(request)
                with recorder.changed:
                    index = len(recorder.requests)
                    recorder.requests.append(request)
                    if spawn:
                        recorder.spawned = True
                    recorder.changed.notify_all()
                if recorder.save_dir is not None:
                    recorder.save_dir.mkdir(parents=True, exist_ok=True)
                    text = json.dumps({"path": request.path, "body": body}, indent=1)
                    (recorder.save_dir / f"{index:03d}.json").write_text(text, encoding="utf-8")
                self._answer(request, index, spawn)

            def _answer(self, request: Request, index: int, spawn: bool) -> None:
                body = request.body if isinstance(request.body, dict) else {}
                if request.is_count_tokens:
                    self._reply(200, json.dumps({"input_tokens": recorder.input_tokens}).encode())
                    return
                model = str(body.get("model") or "model")
                message: dict[str, Any] = {
                    "id": f"msg_{index:03d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
                if spawn:
                    args = {"subagent_type": recorder.spawn, "description": "probe", "prompt": PROBE}
                    block: dict[str, Any] = {"type": "tool_use", "id": SPAWN_ID, "name": "Agent", "input": {}}
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
                    full = {**block, "input": args}
                    stop = "tool_use"
                else:
                    block = {"type": "text", "text": ""}
                    delta = {"type": "text_delta", "text": "ok"}
                    full = {"type": "text", "text": "ok"}
                    stop = "end_turn"
                if not body.get("stream"):
                    out = {**message, "content": [full], "stop_reason": stop}
                    self._reply(200, json.dumps(out).encode())
                    return
                events = [
                    _sse("message_start", {"type": "message_start", "message": message}),
                    _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                    _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                    _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    _sse(
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 1},
                        },
                    ),
                    _sse("message_stop", {"type": "message_stop"}),
                ]
                self._reply(200, b"".join(events), "text/event-stream")

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a host that drops a refused proxy connection: nothing to report

        self.started = time.monotonic()
        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="host-recorder", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def _should_spawn(self, request: Request) -> bool:
        """Spawn on the first main-thread conversation request that offers the `Agent` tool."""
        if not self.spawn or self.spawned or not request.is_messages:
            return False
        body = request.body
        return "Agent" in _tool_names(body) and not _has_role(body, "assistant") and PROBE not in json.dumps(body)

    def wait(self, done: Callable[[list[Request]], bool], alive: Callable[[], bool], timeout_s: float) -> bool:
        """Block until `done(requests)` holds (True) or `alive()` turns false or the safety timeout passes."""
        deadline = time.monotonic() + timeout_s
        with self.changed:
            while not done(self.requests):
                if not alive():
                    return done(self.requests)
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.2))
            return True


def target(requests: Sequence[Request], *, subagent: bool) -> Request | None:
    """The request that shows the split: the main thread's first conversation request with tools, or the
    spawned subagent's first one (its messages carry the probe prompt and no assistant turn yet)."""
    for request in requests:
        if not request.is_messages or not isinstance(request.body, dict) or "tools" not in request.body:
            continue
        if not subagent:
            return request
        if PROBE in json.dumps(request.body.get("messages")) and not _has_role(request.body, "assistant"):
            return request
    return None


def _answered(requests: Sequence[Request]) -> bool:
    """The spawn's tool_result came back to the main thread: the subagent ran (or failed) before it."""
    return any(r.is_messages and SPAWN_ID in json.dumps(r.body) and _has_role(r.body, "assistant") for r in requests)


def host_binary(hosts_dir: Path, host: str) -> Path:
    path = hosts_dir / "node_modules" / ".bin" / BINARIES[host]
    if not path.exists():
        raise SystemExit(f"{path}: not installed; run scripts/install-hosts.sh {hosts_dir}")
    return path


def cache_dir(hosts_dir: Path) -> Path:
    """Where Copilot CLI keeps its unpacked package between runs (XDG_CACHE_HOME), beside the install."""
    return hosts_dir / ".hostrec-cache"


def host_version(hosts_dir: Path, host: str) -> str:
    """The installed host's version (`claude --version`, `copilot --version`), e.g. "2.1.332". Copilot CLI
    unpacks itself into `cache_dir` on this first call."""
    with tempfile.TemporaryDirectory(prefix="hostrec-home-") as home:
        env = {
            "PATH": _path(),
            "HOME": home,
            "COPILOT_OFFLINE": "true",
            "LANG": "C.UTF-8",
            "XDG_CACHE_HOME": str(cache_dir(hosts_dir)),
        }
        out = subprocess.run(
            [str(host_binary(hosts_dir, host)), "--version"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        ).stdout
    found = re.search(r"\d+\.\d+\.\d+", out)
    if not found:
        raise SystemExit(f"{host}: cannot read a version from `--version`: {out.strip()[:200]}")
    return found.group(0)


def _path() -> str:
    """PATH for a host: this Python's bin (a server's `python` is this one, with `mcp`), node, the system."""
    node = shutil.which("node")
    parts = [str(Path(sys.executable).parent), *([str(Path(node).parent)] if node else []), "/usr/bin", "/bin"]
    return os.pathsep.join(dict.fromkeys(parts))


@dataclass(frozen=True, slots=True)
class Run:
    """One host run: every request it sent, the one that shows the split (None: it never came), whether the
    subagent was spawned, the proxy requests refused, the host's stderr tail, the wall time, and the MCP
    servers that failed to connect (from the host's debug log, written to the run's temporary folder)."""

    host: str
    requests: tuple[Request, ...]
    target: Request | None
    spawned: bool
    refused: tuple[str, ...]
    stderr_tail: str
    seconds: float
    mcp_failed: tuple[str, ...] = ()  # MCP servers the host's log says it could not connect
    argv: tuple[str, ...] = field(default=())


def _project(project: Path, into: Path) -> Path:
    """The host's view of a project: its agent folders, and links to the repository's server paths."""
    work = into / "project"
    work.mkdir()
    for name in AGENT_DIRS:
        if (project / name).is_dir():
            shutil.copytree(project / name, work / name)
    for rel in LINKED:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).symlink_to(ROOT / rel, target_is_directory=True)
    return work


def _argv(
    host: str, binary: Path, config: Path, model: str | None, agent: str | None, flag: bool, logs: Path
) -> list[str]:
    if host == CLAUDE_CODE:
        argv = [str(binary), "-p", PROMPT, "--mcp-config", str(config), "--strict-mcp-config"]
        argv += ["--debug-file", str(logs / "claude-debug.log")]
        if agent is not None and flag:
            argv += ["--agent", agent]
    else:
        argv = [str(binary), "-p", PROMPT, "--additional-mcp-config", f"@{config}"]
        argv += ["--log-level", "debug", "--log-dir", str(logs)]
        if agent is not None:
            argv += ["--agent", agent]
    if model:
        argv += ["--model", model]
    return argv


def run_host(
    host: str,
    project: Path,
    hosts_dir: Path,
    *,
    model: str | None,
    env: Mapping[str, str] | None = None,
    agent: str | None = None,
    launch: str = "spawn",
    count_tokens: int = 10,
    save_dir: Path | None = None,
    timeout_s: float = RUN_TIMEOUT_S,
) -> Run:
    """Run `host` once on `project` (a folder with `.mcp.json` and agent folders) and return what it sent.

    `agent` None is the main thread. For Claude Code an agent is spawned as a subagent by the recorder's
    `Agent` tool_use (`launch="spawn"`) or started as the main thread with `--agent` (`launch="flag"`); for
    Copilot CLI it is always `--agent`. `env` adds to the host's environment (ENABLE_TOOL_SEARCH, ...).
    """
    if host not in HOSTS:
        raise SystemExit(f"unknown host `{host}`: one of {', '.join(HOSTS)}")
    binary = host_binary(hosts_dir, host)
    spawn = agent if host == CLAUDE_CODE and agent is not None and launch == "spawn" else None
    subagent = spawn is not None
    marker = secrets.token_hex(8)
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="hostrec-") as tmp,
        Recorder(input_tokens=count_tokens, spawn=spawn, save_dir=save_dir) as recorder,
    ):
        home = Path(tmp) / "home"
        home.mkdir()
        cwd = _project(project, Path(tmp))
        proxy = recorder.url
        base = {
            "PATH": _path(),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "TMPDIR": tmp,
            "QUIVER_HOSTREC": marker,  # every process of this run carries it: how leftovers are found
            "HTTP_PROXY": proxy,
            "HTTPS_PROXY": proxy,
            "http_proxy": proxy,
            "https_proxy": proxy,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        if host == CLAUDE_CODE:
            base |= {"ANTHROPIC_BASE_URL": recorder.url, "ANTHROPIC_API_KEY": "dummy"}
        else:
            base |= {
                # Copilot CLI unpacks itself into its cache on a first run (5 s): shared across runs.
                "XDG_CACHE_HOME": str(cache_dir(hosts_dir)),
                "COPILOT_OFFLINE": "true",
                "COPILOT_PROVIDER_TYPE": "anthropic",
                "COPILOT_PROVIDER_BASE_URL": recorder.url,
                "COPILOT_PROVIDER_API_KEY": "dummy",
            }
        logs = Path(tmp) / "logs"
        logs.mkdir()
        argv = _argv(host, binary, project / ".mcp.json", model, agent, launch == "flag", logs)
        stderr_path = Path(tmp) / "stderr"
        with open(stderr_path, "wb") as errfile:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**base, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errfile,
                start_new_session=True,
            )
            waiter = threading.Thread(target=_notify_on_exit, args=(proc, recorder), daemon=True)
            waiter.start()

            def done(requests: list[Request]) -> bool:
                return target(requests, subagent=subagent) is not None or (subagent and _answered(requests))

            try:
                recorder.wait(done, lambda: proc.poll() is None, timeout_s)
            finally:
                end_processes(proc, marker)
                waiter.join()
        with recorder.changed:
            requests = tuple(recorder.requests)
            refused = tuple(recorder.refused)
            spawned = recorder.spawned
        tail = stderr_path.read_text(encoding="utf-8", errors="replace")[-2000:]
        failed = failed_servers(logs)
        if save_dir is not None:  # the host's own debug log beside the requests, for a look by hand
            shutil.copytree(logs, save_dir / "logs", dirs_exist_ok=True)
    return Run(
        host=host,
        requests=requests,
        target=target(requests, subagent=subagent),
        spawned=spawned,
        refused=refused,
        stderr_tail=tail,
        seconds=time.monotonic() - started,
        mcp_failed=failed,
        argv=tuple(argv),
    )


# How each host's debug log says an MCP server did not connect (2.1.332, 1.0.102): a connection timeout
# under load, or a failed protocol negotiation. Such a run shows a split the host did not mean.
FAILED_SERVER = (
    re.compile(r'MCP server "([^"]+)":? Connection failed'),
    re.compile(r'MCP server connection failed \{"server_name":"([^"]+)"'),
)


def failed_servers(logs: Path) -> tuple[str, ...]:
    """The MCP servers a host's debug logs in `logs` report as failed to connect, sorted."""
    found: set[str] = set()
    for path in logs.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found.update(m.group(1) for pattern in FAILED_SERVER for m in pattern.finditer(text))
    return tuple(sorted(found))


def _notify_on_exit(proc: subprocess.Popen[bytes], recorder: Recorder) -> None:
    proc.wait()
    with recorder.changed:
        recorder.changed.notify_all()


def _marked(marker: str) -> list[int]:
    """Pids of live processes whose environment carries this run's marker."""
    found = []
    needle = f"QUIVER_HOSTREC={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def end_processes(proc: subprocess.Popen[bytes], marker: str) -> None:
    """End the host, its process group, and any process of the run that left the group (by its marker):
    SIGTERM, up to 5 s to go, then SIGKILL; the host is reaped."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        for pid in _marked(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _live(_marked(marker)):
                return
            time.sleep(0.05)
    proc.wait()


def _live(pids: list[int]) -> list[int]:
    """The pids that are not zombies (a zombie of another parent is gone for our purposes)."""
    live = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            live.append(pid)
    return live
