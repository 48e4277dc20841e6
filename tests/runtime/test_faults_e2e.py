"""End to end under faults: an MCP client talks to `python -m quiver serve` over stdio; the gateway talks to
our misbehaving payments server (examples/servers/faulty_server.py) as its own subprocess.

Effects are counted in the upstream's own ground-truth file (`FAULTY_EFFECTS`), never in what the
gateway says: for each fault the final ledger state and the effect count; a seeded run of 200 mixed
calls; and how the gateway's stop (stdin close, SIGTERM, SIGKILL) leaves the upstreams and the ledger.
Timeouts and backoffs are short in the test project's config, so these run in seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from quiver.runtime.ledger import Action, Attempt, Event
from quiver.runtime.ledger_sqlite import SqliteLedger

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
FAULTY = ROOT / "examples" / "servers" / "faulty_server.py"
KEY = "io.quiver/idempotency-key"
TEST_S = 240.0
POLL_S = 60.0  # the most a test waits for a process to die or a sweep to settle (polling, not sleeping)
FAST = "{initial_interval = 0.01, maximum_interval = 0.05, maximum_attempts = 3}"
RECONCILE = (
    '{tool = "get_transfer", arguments = {key = "$.idempotency_key"}, succeeded_when = "$.structuredContent.found",'
    " equals = true}"
)
CONFIG = f"""tool_search = "never"
[tools."faulty/transfer"]
timeout_ms = 500
retry = {FAST}
reconcile = {RECONCILE}
[tools."faulty/deposit"]
timeout_ms = 500
retry = {FAST}
[tools."faulty/lookup"]
timeout_ms = 2000
retry = {FAST}
[tools."faulty/get_transfer"]
timeout_ms = 2000
"""


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the faulty server, snapshotted live and compiled."""
    root = tmp_path_factory.mktemp("faults")
    server = {"type": "stdio", "command": "${PYTHON:-python3}", "args": [str(FAULTY)], "tools": ["*"],
              "description": "Payments with injected faults"}  # fmt: skip
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"faulty": server}}))
    (root / "quiver.toml").write_text(CONFIG)
    agents = root / ".github" / "agents"
    agents.mkdir(parents=True)
    (agents / "payer.agent.md").write_text(
        '---\nname: Payer\ndescription: Pays.\nmodel: claude-sonnet-4.5\ntools: ["faulty/*"]\n---\nPay.\n'
    )
    env = {**os.environ, "PYTHON": sys.executable, "FAULTY_EFFECTS": str(root / "snapshot-effects.jsonl")}
    for command in (["snapshot"], ["compile", "--quiet"]):
        done = subprocess.run(
            [sys.executable, "-m", "quiver", *command, "-C", str(root)], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr + done.stdout
    path = root / "build" / "quiver" / "payer.json"
    policy = next(t["policy"] for t in json.loads(path.read_text())["tools"] if t["name"] == "transfer")
    assert len(policy["reconcile"]["tool_sha256"]) == 64  # the reconcile tool's pin, from the lock
    return path


class Faults:
    """One test's gateway runs: the ledger, the upstream's ground truth and its pids, in a fresh directory."""

    def __init__(self, manifest: Path, work: Path, **env: str) -> None:
        self.manifest = manifest
        self.work = work
        self.effects = work / "effects.jsonl"
        self.pids = work / "pids.jsonl"
        self.ledger_path = work / "ledger.db"
        self.env = {**os.environ, "PYTHON": sys.executable, "FAULTY_EFFECTS": str(self.effects),
                    "FAULTY_PIDS": str(self.pids), "QUIVER_SWEEP_INTERVAL_S": "0.2", **env}  # fmt: skip

    @asynccontextmanager
    async def session(self) -> AsyncIterator[ClientSession]:
        argv = ["-m", "quiver", "serve", str(self.manifest), "--ledger", str(self.ledger_path),
                "--startup-timeout", "20"]  # fmt: skip
        params = StdioServerParameters(command=sys.executable, args=argv, env=self.env, cwd=str(self.work))
        with (self.work / "gateway.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                yield session

    def gateway_pid(self) -> int:
        found = []
        for entry in os.listdir("/proc"):
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(self.ledger_path).encode() in argv and _alive(int(entry)):
                found.append(int(entry))
        (pid,) = found
        return pid

    def upstream_pids(self) -> list[int]:
        if not self.pids.is_file():
            return []
        return [json.loads(line)["pid"] for line in self.pids.read_text().splitlines()]

    def effects_of(self, key: str) -> int:
        if not self.effects.is_file():
            return 0
        return sum(json.loads(line)["key"] == key for line in self.effects.read_text().splitlines())

    async def wait_for_effect(self, key: str) -> None:
        with anyio.fail_after(POLL_S):
            while self.effects_of(key) == 0:
                await anyio.sleep(0.02)

    async def wait_upstreams_gone(self) -> list[int]:
        """Poll (up to POLL_S) until no upstream process this test started is alive; the ones still alive."""
        deadline = time.monotonic() + POLL_S
        while (alive := [pid for pid in self.upstream_pids() if _alive(pid)]) and time.monotonic() < deadline:
            await anyio.sleep(0.02)
        return alive

    def ledger(self) -> SqliteLedger:
        return SqliteLedger(self.ledger_path)

    async def action(self, key: str) -> tuple[Action, list[Attempt], list[Event]]:
        store = self.ledger()
        try:
            action = await store.find_by_key(key)
            assert action is not None, f"no action for key {key}"
            return action, await store.attempts(action.id), await store.events(action.id)
        finally:
            store.close()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def call(session: ClientSession, tool: str, key: str, **arguments: Any) -> Any:
    return await session.call_tool(f"faulty__{tool}", arguments, read_timeout_seconds=30, meta={KEY: key})


def write(fault: str) -> dict[str, Any]:
    return {"to": "acct-1", "amount": 5, "fault": fault}


# (tool, fault, state the call ends in, effects upstream)
SCENARIOS = [
    ("transfer", "none", "succeeded", 1),
    ("transfer", "reject", "failed_final", 0),
    ("transfer", "crash_before", "unknown_outcome", 0),
    ("transfer", "crash_after", "succeeded", 1),  # reconciled through get_transfer
    ("transfer", "hang_before", "unknown_outcome", 0),
    ("transfer", "hang_after", "succeeded", 1),
    ("transfer", "error_after", "succeeded", 1),  # "connection reset": transient -> unknown_outcome -> reconciled
    ("transfer", "error_before", "unknown_outcome", 0),  # "503" on a write: never re-sent
    ("deposit", "crash_after", "unknown_outcome", 1),  # no reconcile configured
    ("deposit", "error_after", "unknown_outcome", 1),
]


async def test_each_fault_ends_in_the_state_its_effects_say(manifest: Path, tmp_path: Path) -> None:
    faults = Faults(manifest, tmp_path)
    with anyio.fail_after(TEST_S):
        async with faults.session() as session:
            for tool, fault, _, _ in SCENARIOS:
                await call(session, tool, f"{tool}-{fault}", **write(fault))
            retried = await call(session, "lookup", "lookup-1", item="a", fail_times=1)
            exhausted = await call(session, "lookup", "lookup-5", item="b", fail_times=5)
        seen = []
        for tool, fault, _, _ in SCENARIOS:
            action, attempts, _ = await faults.action(f"{tool}-{fault}")
            seen.append((tool, fault, action.state, faults.effects_of(f"{tool}-{fault}")))
            assert action.attempts == len(attempts) == 1  # a write is never re-sent
        assert seen == SCENARIOS

        _, attempts, events = await faults.action("transfer-error_after")
        assert [e.to_state for e in events][-2:] == ["unknown_outcome", "succeeded"]
        assert attempts[0].outcome == "tool_error" and attempts[0].error_type == "TransientToolError"
        assert any("pattern" in (e.detail or "") and "connection" in (e.detail or "") for e in events)

        lookup, attempts, _ = await faults.action("lookup-1")
        assert (lookup.state, lookup.attempts, retried.is_error) == ("succeeded", 2, False)
        assert json.loads(retried.content[0].text) == {"calls": 2, "item": "a"}  # type: ignore[union-attr]
        lookup, attempts, _ = await faults.action("lookup-5")
        assert (lookup.state, lookup.attempts, exhausted.is_error) == ("failed_final", 3, True)
        assert "503" in exhausted.content[0].text  # type: ignore[union-attr]  # the upstream's own answer

        assert await faults.wait_upstreams_gone() == []
        # a restart settles what only a "no" could settle: the old upstreams (and any request they held) are gone
        async with faults.session():
            pass
        for tool, fault in (("transfer", "crash_before"), ("transfer", "hang_before"), ("transfer", "error_before")):
            action, _, _ = await faults.action(f"{tool}-{fault}")
            assert (action.state, action.error_type, faults.effects_of(f"{tool}-{fault}")) == (
                "failed_final", "not_applied", 0,
            )  # fmt: skip
        deposit, _, _ = await faults.action("deposit-crash_after")
        assert deposit.state == "unknown_outcome"  # nothing to ask: an operator resolves it


async def test_a_running_gateway_reconciles_in_its_sweeps(manifest: Path, tmp_path: Path) -> None:
    faults = Faults(manifest, tmp_path, FAULTY_RECONCILE_FAILS="1")  # the reconcile right after fails
    with anyio.fail_after(TEST_S):
        async with faults.session() as session:
            result = await call(session, "transfer", "swept", **write("error_after"))
            assert result.is_error
            deadline = time.monotonic() + POLL_S
            while (await faults.action("swept"))[0].state == "unknown_outcome" and time.monotonic() < deadline:
                await anyio.sleep(0.05)
        action, _, events = await faults.action("swept")
        assert (action.state, faults.effects_of("swept")) == ("succeeded", 1)
        assert any((e.detail or "").startswith("reconciled by get_transfer") for e in events)


async def _hung_call(session: ClientSession, key: str) -> None:
    with contextlib.suppress(Exception):  # the gateway goes away under the call; the ledger says what happened
        await call(session, "transfer", key, **write("hang_after"))


@pytest.mark.parametrize("stop", ["stdin", "sigterm", "sigint"])
async def test_stopping_the_gateway_records_the_call_in_flight_then_stops_the_upstreams(
    manifest: Path, tmp_path: Path, stop: str
) -> None:
    """A raw JSON-RPC client (no SDK shutdown sequence of its own): the gateway alone must stop its upstream."""
    faults = Faults(manifest, tmp_path)
    argv = [sys.executable, "-m", "quiver", "serve", str(manifest), "--ledger", str(faults.ledger_path)]
    with anyio.fail_after(TEST_S), (tmp_path / "gateway.log").open("a") as errlog:
        gateway = await anyio.open_process(argv, stderr=errlog, env=faults.env, cwd=tmp_path)
        assert gateway.stdin is not None and gateway.stdout is not None
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        hung = {"name": "faulty__transfer", "arguments": write("hang_after"), "_meta": {KEY: "in-flight"}}
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": hung}):  # fmt: skip
            await gateway.stdin.send(json.dumps(message).encode() + b"\n")
        await faults.wait_for_effect("in-flight")  # the upstream holds the request
        (upstream,) = faults.upstream_pids()
        if stop == "stdin":
            await gateway.stdin.aclose()
        else:
            gateway.send_signal(signal.SIGTERM if stop == "sigterm" else signal.SIGINT)
        assert await faults.wait_upstreams_gone() == []
        assert not _alive(upstream)
        with anyio.fail_after(POLL_S):
            await gateway.wait()
        await gateway.aclose()
        action, attempts, _ = await faults.action("in-flight")
        assert (action.state, [a.outcome for a in attempts]) == ("unknown_outcome", ["error"])
        async with faults.session():  # the next gateway settles it through the reconcile tool
            pass
        action, _, _ = await faults.action("in-flight")
        assert (action.state, faults.effects_of("in-flight")) == ("succeeded", 1)


async def test_a_gateway_killed_mid_dispatch_leaves_the_attempt_and_no_upstream(manifest: Path, tmp_path: Path) -> None:
    faults = Faults(manifest, tmp_path)
    with anyio.fail_after(TEST_S):
        async with faults.session() as session, anyio.create_task_group() as tg:
            tg.start_soon(_hung_call, session, "killed")
            await faults.wait_for_effect("killed")
            gateway = faults.gateway_pid()
            os.kill(gateway, signal.SIGKILL)
            assert await faults.wait_upstreams_gone() == []  # the guard took the upstream with the gateway
        action, attempts, _ = await faults.action("killed")
        assert (action.state, action.attempts) == ("dispatching", 1)
        assert [(a.number, a.outcome) for a in attempts] == [(1, "in_flight")]  # written before the send
        async with faults.session():
            pass
        action, _, events = await faults.action("killed")
        assert (action.state, faults.effects_of("killed")) == ("succeeded", 1)
        assert [e.to_state for e in events][-2:] == ["unknown_outcome", "succeeded"]


async def test_200_seeded_mixed_calls_all_end_recorded_and_agree_with_the_effects(
    manifest: Path, tmp_path: Path
) -> None:
    rng = random.Random(14)
    weights = {"none": 8, "reject": 2, "error_before": 2, "error_after": 2, "crash_before": 1, "crash_after": 1,
               "hang_before": 1, "hang_after": 1}  # fmt: skip
    plan: list[tuple[str, str, dict[str, Any]]] = []
    for n in range(200):
        kind = rng.choice(["transfer", "transfer", "deposit", "lookup"])
        if kind == "lookup":
            plan.append((kind, f"c{n}", {"item": f"i{n}", "fail_times": rng.choice([0, 0, 1, 2, 5])}))
        else:
            plan.append((kind, f"c{n}", write(rng.choices(list(weights), list(weights.values()))[0])))
    faults = Faults(manifest, tmp_path)
    with anyio.fail_after(240):
        async with faults.session() as session:
            limiter = anyio.CapacityLimiter(4)

            async def one(tool: str, key: str, arguments: dict[str, Any]) -> None:
                async with limiter:
                    await call(session, tool, key, **arguments)

            async with anyio.create_task_group() as tg:
                for tool, key, arguments in plan:
                    tg.start_soon(one, tool, key, arguments)
    store = faults.ledger()
    try:
        actions = {a.idempotency_key: a for a in await store.list()}
    finally:
        store.close()
    assert sorted(actions) == sorted(key for _, key, _ in plan)  # every call ended recorded
    assert {a.state for a in actions.values()} <= {"succeeded", "failed_final", "unknown_outcome"}
    writes = [actions[key] for tool, key, _ in plan if tool != "lookup"]
    effects = {a.idempotency_key: faults.effects_of(a.idempotency_key) for a in writes}
    assert max(effects.values()) == 1  # never applied twice
    assert [a.idempotency_key for a in writes if a.state == "failed_final" and effects[a.idempotency_key]] == []
    assert all(effects[a.idempotency_key] == 1 for a in writes if a.state == "succeeded")
    unknown_with_effect = sum(1 for a in writes if a.state == "unknown_outcome" and effects[a.idempotency_key])
    succeeded = sum(1 for a in writes if a.state == "succeeded")
    assert sum(effects.values()) == succeeded + unknown_with_effect
    states = [a.state for a in actions.values()]
    assert all(states.count(state) for state in ("succeeded", "failed_final", "unknown_outcome"))
