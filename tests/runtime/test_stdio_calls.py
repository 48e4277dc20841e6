"""tools/call answered beside the SDK's dispatcher (`quiver.runtime._stdio_calls`), through a real
`quiver serve` process: the answers are the SDK path's (the same calls with the path turned off),
cancellation and calls in flight together behave as they do there, and what it does not take still
reaches the SDK."""

from __future__ import annotations

import json
import re
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

WAIT_S = 30.0
KEY = "io.quiver/idempotency-key"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "direct-test", "version": "1"},
    },
}
# (label, params): answered beside the SDK unless noted
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("a result", {"name": "calc__echo", "arguments": {"text": "héllo"}}),
    ("structured content", {"name": "calc__add", "arguments": {"a": 2, "b": 3}}),
    ("invalid arguments", {"name": "calc__echo", "arguments": {"text": 5}}),
    ("no arguments", {"name": "calc__echo"}),
    ("a deferred tool by name", {"name": "calc__multiply", "arguments": {"a": 4, "b": 5}}),
    ("a key", {"name": "calc__add", "arguments": {"a": 1, "b": 1}, "_meta": {KEY: "k-1"}}),
    ("the key again", {"name": "calc__add", "arguments": {"a": 1, "b": 1}, "_meta": {KEY: "k-1"}}),
    ("the key, other arguments", {"name": "calc__add", "arguments": {"a": 7, "b": 1}, "_meta": {KEY: "k-1"}}),
    ("an unknown tool (the SDK's)", {"name": "calc__nope", "arguments": {}}),
    ("a meta-tool (the SDK's)", {"name": "list_servers", "arguments": {}}),
    ("an unknown parameter (the SDK's)", {"name": "calc__echo", "arguments": {"text": "x"}, "task": {"ttl": 1}}),
]
SDK_ONLY = {"an unknown tool (the SDK's)", "a meta-tool (the SDK's)", "an unknown parameter (the SDK's)"}
_ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")


class Gateway:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], WAIT_S)
        assert ready, "no answer from the gateway"
        line = self.proc.stdout.readline()
        assert line, "the gateway closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    def call(self, ident: int, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})

    def finish(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=WAIT_S)
        return self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def serve(serve_manifest: Path, upstream_env: Any, repo_root: Path, gateways: list[subprocess.Popen[bytes]]) -> Any:
    def start(ledger: Path, *, direct: bool) -> Gateway:
        env = upstream_env(QUIVER_STDIO_DIRECT_CALLS="1" if direct else "0")
        argv = [sys.executable, "-m", "quiver", "serve", str(serve_manifest), "--ledger", str(ledger)]
        proc = subprocess.Popen(
            [*argv, "--log-level", "debug"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=repo_root,
        )  # fmt: skip
        gateways.append(proc)
        gateway = Gateway(proc)
        gateway.send(INITIALIZE)
        assert gateway.answer()["result"]["protocolVersion"] == "2025-11-25"
        gateway.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return gateway

    return start


def _stable(message: dict[str, Any]) -> str:
    """The answer with action ids (fresh in every run) masked."""
    return _ULID.sub("<action id>", json.dumps(message, sort_keys=True, ensure_ascii=False))


def test_answers_beside_the_sdk_are_the_sdk_paths_answers(serve: Any, tmp_path: Path) -> None:
    answers: dict[bool, dict[str, str]] = {}
    logs: dict[bool, str] = {}
    for direct in (True, False):
        gateway = serve(tmp_path / f"ledger-{direct}.db", direct=direct)
        answers[direct] = {}
        for ident, (label, params) in enumerate(CALLS, start=1):
            gateway.call(ident, params)
            answer = gateway.answer()
            assert answer["id"] == ident, (label, answer)
            answers[direct][label] = _stable(answer)
        logs[direct] = gateway.finish()
    for label, _ in CALLS:
        assert answers[True][label] == answers[False][label], label
    assert '"isError": false' in answers[True]["a result"] and "héllo" in answers[True]["a result"]
    assert "different call" in answers[True]["the key, other arguments"]
    assert "answered beside the SDK" not in logs[False]
    beside = len(re.findall(r"tools/call `[^`]+` \(id \d+\) answered beside the SDK", logs[True]))
    assert beside == len(CALLS) - len(SDK_ONLY), logs[True]
    assert "Traceback" not in logs[True], logs[True]


def _slow_echo(ledger: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(ledger) as db:
        return db.execute("SELECT state, error_type FROM actions WHERE tool = 'slow_echo'").fetchall()


def _until(check: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("direct", [True, False])
def test_a_cancelled_call_gets_no_answer_and_is_recorded_as_cancelled(serve: Any, tmp_path: Path, direct: bool) -> None:
    ledger = tmp_path / "ledger.db"
    gateway = serve(ledger, direct=direct)
    gateway.call(10, {"name": "calc__slow_echo", "arguments": {"text": "late", "delay_ms": 1500}})
    _until(lambda: _slow_echo(ledger) == [("dispatching", None)])  # on record as sent: in flight upstream
    gateway.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10, "reason": "t"}})
    _until(lambda: _slow_echo(ledger) != [("dispatching", None)])  # while the gateway serves on
    assert _slow_echo(ledger) == [("failed_final", "cancelled")]  # a read-only tool: nothing to doubt
    gateway.call(11, {"name": "calc__echo", "arguments": {"text": "next"}})
    answer = gateway.answer()
    assert answer["id"] == 11 and "next" in json.dumps(answer), answer
    time.sleep(2.0)  # past the upstream's 1.5 s: an answer to 10 would be here by now
    assert gateway.proc.stdout is not None
    assert select.select([gateway.proc.stdout], [], [], 0.5)[0] == [], "an answer came for the cancelled call"
    assert "Traceback" not in gateway.finish()


def test_calls_in_flight_together_each_get_their_own_answer(serve: Any, tmp_path: Path) -> None:
    gateway = serve(tmp_path / "ledger.db", direct=True)
    delays = {20: 2000, 21: 300, 22: 0, 23: 150, 24: 50}  # the first sent answers last, by far
    for ident, delay in delays.items():
        gateway.call(ident, {"name": "calc__slow_echo", "arguments": {"text": f"t{ident}", "delay_ms": delay}})
    gateway.call(25, {"name": "calc__echo", "arguments": {"text": "t25"}})
    answers = [gateway.answer() for _ in range(len(delays) + 1)]
    assert sorted(a["id"] for a in answers) == [*delays, 25]
    for answer in answers:
        assert answer["result"]["content"][0]["text"] == f"t{answer['id']}", answer
    assert answers[-1]["id"] == 20  # sent first, answered last: no call waited for another
    assert "Traceback" not in gateway.finish()
