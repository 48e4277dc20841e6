"""Three `quiver serve` replicas (real gateway processes over streamable HTTP, see `_ledger_replica.py`) on one
PostgreSQL ledger, in front of the real calc server: eight concurrent MCP clients sending overlapping
idempotency keys get one dispatch per key; a replica SIGKILLed mid-dispatch leaves actions that a
surviving replica's recovery sweep settles once their lease has expired."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from _pg_server import PgServer, fresh_database, session_server
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from quiver.runtime.ledger import TERMINAL, Action
from quiver.runtime.ledger_postgres import PostgresLedger, migrate_schema

ROOT = Path(__file__).resolve().parents[2]
HELPER = Path(__file__).with_name("_ledger_replica.py")
TOKEN = "replicas-test-token-0123456789"
LEASE_MARGIN_S = 0.5
TIMEOUT_MS = 2500  # calc's per-tool timeout: the lease of a dispatch is 2.5 s + 1 s grace + the margin
WAIT_S = 30.0
KEYS = [f"key-{n}" for n in range(12)]
PROJECT_POLICY = f"""
[servers.calc]
timeout_ms = {TIMEOUT_MS}
retry = {{maximum_attempts = 1}}
"""


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    yield from session_server()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    yield from fresh_database(pg_server)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="quiver-replicas-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def manifest(workdir: Path) -> Path:
    """examples/serve with a short calc timeout (so short leases), compiled afresh."""
    project = workdir / "project"
    shutil.copytree(ROOT / "examples" / "serve", project, ignore=shutil.ignore_patterns("build", ".quiver"))
    with (project / "quiver.toml").open("a") as config:
        config.write(PROJECT_POLICY)
    subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "--project", str(project)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return project / "build" / "quiver" / "assistant.json"


class Replica:
    """One `quiver serve` replica process; `session()` opens an MCP client session to it."""

    def __init__(self, name: str, manifest: Path, url: str, workdir: Path, **env: str) -> None:
        self.name = name
        self.workdir = workdir
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("CALC_", "NOTES_", "QUIVER_LEDGER"))}
        environ.update(PYTHON=sys.executable, QUIVER_TOKEN=TOKEN, CALC_EFFECT_LOG=str(workdir / f"{name}.jsonl"), **env)
        self.proc = subprocess.Popen(
            [sys.executable, str(HELPER), str(manifest), url, name, str(workdir), str(LEASE_MARGIN_S)],
            env=environ, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
        )  # fmt: skip
        self.stderr: list[str] = []
        self.url: str | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            if self.url is None and (match := re.search(r"listening on (\S+)", line)):
                self.url = match.group(1)

    def recovered(self) -> list[dict[str, Any]]:
        log = self.workdir / f"{self.name}-recovered.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    @asynccontextmanager
    async def session(self) -> AsyncIterator[ClientSession]:
        assert self.url is not None
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=WAIT_S) as http,
            streamable_http_client(self.url, http_client=http) as (read_stream, write_stream),
            ClientSession(read_stream, write_stream) as session,
        ):
            await session.initialize()
            yield session

    def kill(self) -> None:
        """SIGKILL the gateway process alone: what a crash or an OOM kill does."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGKILL the replica's whole process group (its upstream servers too) and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def wait_until(what: str, check: Callable[[], bool], replicas: list[Replica]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        for replica in replicas:
            if replica.proc.poll() is not None:
                raise AssertionError(f"replica {replica.name} exited before {what}: {''.join(replica.stderr)}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def effects(workdir: Path, pattern: str) -> Counter[str]:
    keys: Counter[str] = Counter()
    for log in workdir.glob(pattern):
        keys.update(json.loads(line)["key"] for line in log.read_text().splitlines() if line.strip())
    return keys


async def read_actions(url: str) -> dict[str, Action]:
    store = PostgresLedger(url)
    try:
        return {action.idempotency_key: action for action in await store.list()}
    finally:
        store.close()


def ledger_actions(url: str) -> dict[str, Action]:
    return anyio.run(read_actions, url)


def increment(key: str) -> dict[str, Any]:
    return {"server": "calc", "tool": "counter_increment", "arguments": {"amount": 1}, "idempotency_key": key}


def payload(result: types.CallToolResult) -> Any:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    assert not result.is_error, content.text
    return json.loads(content.text)


@pytest.fixture
def start(pg_url: str, manifest: Path, workdir: Path) -> Iterator[Callable[..., Replica]]:
    migrate_schema(pg_url)  # `quiver ledger migrate`, once, before the replicas start
    started: list[Replica] = []

    def start_replica(name: str, **env: str) -> Replica:
        replica = Replica(name, manifest, pg_url, workdir, **env)
        started.append(replica)
        return replica

    try:
        yield start_replica
    finally:
        for replica in started:
            replica.stop()


def test_three_replicas_eight_clients_one_dispatch_per_key_and_a_killed_replica_is_recovered_after_its_lease(
    pg_url: str, workdir: Path, start: Callable[..., Replica]
) -> None:
    replicas = [start(f"r{n}") for n in range(3)]
    wait_until("three listening replicas", lambda: all(r.url for r in replicas), replicas)

    # --- eight clients, each with a session on one replica, twelve keys each, in overlapping orders ------
    async def client(n: int, results: dict[int, list[tuple[str, Any]]]) -> None:
        async with replicas[n % 3].session() as session:
            for key in KEYS[n:] + KEYS[:n]:
                results[n].append((key, payload(await session.call_tool("call_tool", increment(key)))))

    async def warm(replica: Replica) -> None:  # calc starts on a replica's first call: start it beforehand
        async with replica.session() as session:
            assert payload(await session.call_tool("calc__add", {"a": 1, "b": 2})) == {"result": 3}

    async def clients() -> dict[int, list[tuple[str, Any]]]:
        results: dict[int, list[tuple[str, Any]]] = {n: [] for n in range(8)}
        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as group:
                for replica in replicas:
                    group.start_soon(warm, replica)
            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(client, n, results)
        return results

    results = anyio.run(clients)
    assert effects(workdir, "r?.jsonl") == dict.fromkeys(KEYS, 1)  # one dispatch per key, over all replicas
    by_key: dict[str, list[Any]] = {}
    for key, value in (item for items in results.values() for item in items):
        by_key.setdefault(key, []).append(value)
    assert sorted(by_key) == sorted(KEYS)
    for key, values in by_key.items():  # every client got the one stored outcome of the key
        assert len(values) == 8 and all(value == values[0] for value in values)
        assert (values[0]["key"], values[0]["applied"]) == (key, True)
    served = {r.name for r in replicas if effects(workdir, f"{r.name}.jsonl")}
    actions = {key: a for key, a in ledger_actions(pg_url).items() if a.tool == "counter_increment"}
    assert sorted(actions) == sorted(KEYS)  # no lost rows, no extra rows
    assert {(a.state, a.attempts) for a in actions.values()} == {("succeeded", 1)}
    assert len({a.owner for a in actions.values()}) == len(served) >= 2  # the dispatches were spread out

    # --- r2 is replaced by a replica whose calc applies each effect and never answers; it dies mid-dispatch -
    replicas[2].stop()
    doomed = start("r3", CALC_DROP_AFTER_EFFECT="1")
    survivors = replicas[:2]
    wait_until("the replacement replica", lambda: doomed.url is not None, [doomed, *survivors])
    in_flight = {
        "hang-0": increment("hang-0"),
        "hang-1": increment("hang-1"),
        "slow-read": {"server": "calc", "tool": "slow_echo", "arguments": {"text": "x", "delay_ms": 60_000},
                      "idempotency_key": "slow-read"},
    }  # fmt: skip

    async def call_and_die() -> None:
        async def one(arguments: dict[str, Any]) -> None:
            with contextlib.suppress(Exception):  # the replica is killed under this call
                async with doomed.session() as session:
                    await session.call_tool("call_tool", arguments)

        async def all_dispatching() -> bool:
            actions = await read_actions(pg_url)
            return all(key in actions and actions[key].state == "dispatching" for key in in_flight)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as group:
                for arguments in in_flight.values():
                    group.start_soon(one, arguments)
                while not (await all_dispatching() and effects(workdir, "r3.jsonl") == {"hang-0": 1, "hang-1": 1}):
                    await anyio.sleep(0.02)
                doomed.kill()  # SIGKILL, mid-dispatch: two effects applied, no answers, one read in flight

    anyio.run(call_and_die)
    killed_at = time.time()
    store = PostgresLedger(pg_url)
    try:
        actions = ledger_actions(pg_url)
        ids = {key: actions[key].id for key in in_flight}
        assert {actions[key].owner.split("/")[0] for key in in_flight} == {"r3.replica"}  # type: ignore[union-attr]

        def settled() -> bool:
            current = ledger_actions(pg_url)
            return all(current[key].state != "dispatching" for key in in_flight)

        wait_until("a surviving replica to recover the dead replica's actions", settled, survivors)
        actions = ledger_actions(pg_url)
        assert {key: actions[key].state for key in in_flight} == {
            "hang-0": "unknown_outcome", "hang-1": "unknown_outcome", "slow-read": "failed_final",
        }  # fmt: skip
        for key in in_flight:
            events = anyio.run(store.events, ids[key])
            dispatched, last = events[-2], events[-1]
            assert dispatched.to_state == "dispatching" and last.from_state == "dispatching"
            lease_end = dispatched.at + TIMEOUT_MS / 1000 + 1.0 + LEASE_MARGIN_S
            assert last.at >= lease_end > killed_at  # it died with its lease running; recovered after it ran out
            assert last.detail is not None and "lease of r3.replica/" in last.detail
        recoveries = [line for replica in survivors for line in replica.recovered()]
        assert sorted(line["recovered"] for line in recoveries) == sorted(ids.values())  # each exactly once

        # a client retrying through a surviving replica gets the stored outcome; nothing is sent again
        async def retry() -> types.CallToolResult:
            async with survivors[0].session() as session:
                return await session.call_tool("call_tool", increment("hang-0"))

        again = anyio.run(retry)
        assert again.is_error and "may or may not have taken effect" in str(again.content[0])
        assert effects(workdir, "r3.jsonl") == {"hang-0": 1, "hang-1": 1}
        assert effects(workdir, "r[0-2].jsonl") == dict.fromkeys(KEYS, 1)
        actions = ledger_actions(pg_url)
        assert len(actions) == len(KEYS) + len(in_flight) + len(replicas)  # and the three warm-up reads
        assert all(a.state in TERMINAL or a.state == "unknown_outcome" for a in actions.values())
    finally:
        store.close()
