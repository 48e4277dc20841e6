"""The ledger: state machine, SQLite store (WAL, schema version, atomic key claim), recovery of orphans."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from quiver.runtime.ledger import (
    STATES,
    TERMINAL,
    TRANSITIONS,
    Action,
    ActionFilter,
    Attempt,
    InvalidTransition,
    SchemaVersionError,
    State,
    StateConflict,
    UnknownAction,
    canonical_json,
    check_transition,
    new_action_id,
    sha256_text,
)
from quiver.runtime.ledger_sqlite import CHECKPOINT_EVERY, SCHEMA_VERSION, SqliteLedger

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
LEGAL = sorted((a, b) for a in STATES for b in TRANSITIONS[a])
ILLEGAL = sorted((a, b) for a in STATES for b in STATES if b not in TRANSITIONS[a])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteLedger]:
    ledger = SqliteLedger(tmp_path / ".quiver" / "ledger.db")
    yield ledger
    ledger.close()


def make_action(
    key: str | None = None, *, tool: str = "counter_increment", side_effect: str = "irreversible_write", at: float = T0,
    arguments: dict[str, object] | None = None,
) -> Action:  # fmt: skip
    action_id = new_action_id(at)
    args = canonical_json(arguments if arguments is not None else {"amount": 1})
    return Action(
        id=action_id, idempotency_key=key or action_id, session_id="s1", requester="model", call_id="7", server="calc",
        tool=tool, tool_sha256="0" * 64, arguments=args, args_sha256=sha256_text(args), side_effect=side_effect,
        policy=canonical_json({"side_effect": side_effect}), state="proposed", created_at=at, updated_at=at,
        owner="elsewhere/1/x",
    )  # fmt: skip


async def walk(store: SqliteLedger, action: Action, *states: State) -> Action:
    for state in states:
        action = await store.transition(action.id, (action.state,), state, at=T0 + 1)
    return action


def test_terminal_states_have_no_way_out_and_every_other_state_has_one() -> None:
    assert {state for state in STATES if not TRANSITIONS[state]} == set(TERMINAL)
    assert set(TRANSITIONS) == set(STATES)


@pytest.mark.parametrize(("from_state", "to_state"), ILLEGAL)
def test_every_illegal_transition_raises(from_state: str, to_state: str) -> None:
    with pytest.raises(InvalidTransition):
        check_transition(from_state, to_state)


@pytest.mark.parametrize(("from_state", "to_state"), LEGAL)
def test_every_legal_transition_passes(from_state: str, to_state: str) -> None:
    check_transition(from_state, to_state)


def test_unknown_states_are_illegal() -> None:
    with pytest.raises(InvalidTransition):
        check_transition("done", "succeeded")
    with pytest.raises(InvalidTransition):
        check_transition("proposed", "done")


@pytest.mark.anyio
async def test_the_store_refuses_an_illegal_transition_and_leaves_the_record_unchanged(store: SqliteLedger) -> None:
    action, _ = await store.create_action(make_action())
    with pytest.raises(InvalidTransition):
        await store.transition(action.id, ("proposed",), "succeeded", at=T0)
    assert (await store.get(action.id)).state == "proposed"
    assert len(await store.events(action.id)) == 1


@pytest.mark.anyio
async def test_a_transition_from_a_state_the_action_has_left_is_a_conflict(store: SqliteLedger) -> None:
    action, _ = await store.create_action(make_action())
    await walk(store, action, "validated", "dispatching")
    with pytest.raises(StateConflict) as caught:
        await store.transition(action.id, ("validated",), "dispatching", at=T0)
    assert caught.value.action.state == "dispatching"


@pytest.mark.anyio
async def test_transitions_append_numbered_events_and_set_fields(store: SqliteLedger) -> None:
    action, created = await store.create_action(make_action("k1"))
    assert created
    action = await walk(store, action, "validated", "dispatching")
    action = await store.transition(
        action.id, ("dispatching",), "succeeded", at=T0 + 2, detail="done", result='{"isError":false}', attempts=1
    )
    assert (action.state, action.attempts, action.result, action.updated_at) == (
        "succeeded", 1, '{"isError":false}', T0 + 2,
    )  # fmt: skip
    events = await store.events(action.id)
    assert [(e.seq, e.from_state, e.to_state) for e in events] == [
        (1, None, "proposed"), (2, "proposed", "validated"), (3, "validated", "dispatching"),
        (4, "dispatching", "succeeded"),
    ]  # fmt: skip
    assert events[-1].detail == "done"


@pytest.mark.anyio
async def test_every_field_of_an_action_reads_back_as_written_and_as_the_store_returned_it(store: SqliteLedger) -> None:
    draft = make_action("k-fields")
    created, _ = await store.create_action(draft, then=("validated", "dispatching"))
    assert created == replace(draft, state="dispatching")
    moved = await store.transition(
        created.id, ("dispatching",), "succeeded", at=T0 + 3, attempts=2, approval="approved", approval_ref="ref-1",
        result='{"isError":false}', error_type="none", error="no error", owner="here/2/y",
    )  # fmt: skip
    assert await store.get(created.id) == moved
    assert (moved.approval, moved.approval_ref, moved.owner, moved.attempts) == ("approved", "ref-1", "here/2/y", 2)
    assert (moved.session_id, moved.requester, moved.call_id, moved.tool_sha256) == ("s1", "model", "7", "0" * 64)
    assert (moved.created_at, moved.updated_at, moved.policy) == (T0, T0 + 3, draft.policy)


@pytest.mark.anyio
async def test_a_transition_may_only_set_known_fields(store: SqliteLedger) -> None:
    action, _ = await store.create_action(make_action())
    with pytest.raises(ValueError, match="unknown action field"):
        await store.transition(action.id, ("proposed",), "validated", at=T0, state="succeeded")
    with pytest.raises(ValueError, match="approval"):
        await store.transition(action.id, ("proposed",), "validated", at=T0, approval="maybe")


@pytest.mark.anyio
async def test_an_unknown_action_id_raises(store: SqliteLedger) -> None:
    with pytest.raises(UnknownAction):
        await store.get("nope")
    with pytest.raises(UnknownAction):
        await store.transition("nope", ("proposed",), "validated", at=T0)


@pytest.mark.anyio
async def test_creating_an_action_with_a_taken_key_returns_the_existing_action(store: SqliteLedger) -> None:
    first, created = await store.create_action(make_action("k1"))
    second, created_again = await store.create_action(make_action("k1", arguments={"amount": 2}))
    assert created and not created_again
    assert second == first
    assert await store.find_by_key("k1") == first
    assert await store.find_by_key("k2") is None


@pytest.mark.anyio
async def test_attempts_are_recorded_in_order(store: SqliteLedger) -> None:
    action, _ = await store.create_action(make_action())
    await store.record_attempt(Attempt(action.id, 1, T0, T0 + 0.5, "error", "UpstreamTimeout", "slow"))
    await store.record_attempt(Attempt(action.id, 2, T0 + 1, T0 + 1.25, "ok"))
    attempts = await store.attempts(action.id)
    assert [(a.number, a.outcome, a.error_type) for a in attempts] == [(1, "error", "UpstreamTimeout"), (2, "ok", None)]
    assert attempts[1].to_json()["duration_ms"] == 250.0


@pytest.mark.anyio
async def test_list_filters_by_state_tool_and_since_oldest_first(store: SqliteLedger) -> None:
    a, _ = await store.create_action(make_action(tool="add", at=T0))
    b, _ = await store.create_action(make_action(tool="counter_increment", at=T0 + 60))
    c, _ = await store.create_action(make_action(tool="add", at=T0 + 120))
    await walk(store, c, "validated")
    assert [x.id for x in await store.list()] == [a.id, b.id, c.id]
    assert [x.id for x in await store.list(ActionFilter(states=("validated",)))] == [c.id]
    assert [x.id for x in await store.list(ActionFilter(tools=("add",)))] == [a.id, c.id]
    assert [x.id for x in await store.list(ActionFilter(tools=("calc/counter_increment",)))] == [b.id]
    assert [x.id for x in await store.list(ActionFilter(since=T0 + 60))] == [b.id, c.id]
    assert [x.id for x in await store.list(ActionFilter(limit=1))] == [a.id]


def test_the_file_is_in_wal_mode_with_a_busy_timeout_and_a_schema_version(store: SqliteLedger) -> None:
    assert store.journal_mode == "wal"
    assert store.schema_version() == SCHEMA_VERSION
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def test_reopening_an_existing_ledger_keeps_its_records(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    first = SqliteLedger(path)
    action, _ = anyio.run(first.create_action, make_action("k"))
    first.close()
    again = SqliteLedger(path)
    try:
        assert anyio.run(again.get, action.id) == action
    finally:
        again.close()


def test_a_ledger_from_a_newer_quiver_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    SqliteLedger(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(SchemaVersionError):
        SqliteLedger(path)


@pytest.mark.anyio
async def test_a_version_1_ledger_is_upgraded_in_place_and_its_events_keep_counting(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    store = SqliteLedger(path)
    action, _ = await store.create_action(make_action())
    await store.transition(action.id, ("proposed",), "validated", at=T0 + 1)
    store.close()
    with sqlite3.connect(path) as raw:  # what version 1 wrote: no event_count column
        raw.execute("ALTER TABLE actions DROP COLUMN event_count")
        raw.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    store = SqliteLedger(path)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 2
        await store.transition(action.id, ("validated",), "dispatching", at=T0 + 2, attempts=1)
        assert [(e.seq, e.to_state) for e in await store.events(action.id)] == [
            (1, "proposed"), (2, "validated"), (3, "dispatching"),
        ]  # fmt: skip
    finally:
        store.close()


@pytest.mark.anyio
async def test_a_ledger_with_rowid_event_and_attempt_tables_reads_and_writes_as_a_new_one(tmp_path: Path) -> None:
    """New files get WITHOUT ROWID events/attempts; a file an older quiver made (rowid tables, same
    columns and keys) must keep working with the same statements, with no migration."""
    from quiver.runtime.ledger_sqlite import _SCHEMA

    old = tmp_path / "old.db"
    with sqlite3.connect(old) as raw:
        for statement in _SCHEMA:
            raw.execute(statement.replace(" WITHOUT ROWID", ""))
        raw.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    new = tmp_path / "new.db"
    histories = []
    for path in (old, new):
        store = SqliteLedger(path)
        try:
            draft = replace(make_action("k", at=T0), id=new_action_id(T0, lambda n: bytes(n)), attempts=1)
            first = Attempt(draft.id, 1, T0, T0, "in_flight")
            action, _ = await store.create_action(draft, then=("validated", "dispatching"), attempt=first)
            ended = Attempt(draft.id, 1, T0, T0 + 1, "ok")
            done = await store.transition(
                action.id, ("dispatching",), "succeeded", at=T0 + 1, attempt=ended, result="{}"
            )
            assert done == await store.get(action.id)
            histories.append((done, await store.events(action.id), await store.attempts(action.id)))
        finally:
            store.close()
        with sqlite3.connect(path) as raw:
            tables = dict(raw.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
        assert ("WITHOUT ROWID" in tables["events"], "WITHOUT ROWID" in tables["attempts"]) == ((path == new),) * 2
    assert histories[0] == histories[1]
    assert [(e.seq, e.to_state) for e in histories[0][1]][-1] == (4, "succeeded")
    assert [a.outcome for a in histories[0][2]] == ["ok"]


@pytest.mark.anyio
async def test_a_new_action_can_move_on_to_dispatching_in_its_creating_write(store: SqliteLedger) -> None:
    draft = replace(make_action(), attempts=1)
    first = Attempt(draft.id, 1, T0, T0, "in_flight")
    action, created = await store.create_action(draft, then=("validated", "dispatching"), attempt=first)
    assert created and (action.state, action.attempts) == ("dispatching", 1)
    assert (await store.get(action.id)).state == "dispatching"
    events = [(e.seq, e.from_state, e.to_state) for e in await store.events(action.id)]
    assert events == [(1, None, "proposed"), (2, "proposed", "validated"), (3, "validated", "dispatching")]
    assert await store.attempts(action.id) == [first]
    again, created = await store.create_action(replace(draft, id="other"), then=("validated",))
    assert (created, again.state) == (False, "dispatching")  # the key's action, untouched
    with pytest.raises(InvalidTransition):
        await store.create_action(replace(make_action(), idempotency_key="k2"), then=("dispatching",))


def test_action_ids_are_26_crockford_characters_that_sort_by_time() -> None:
    ids = [new_action_id(T0 + i * 0.001) for i in range(50)]
    assert all(len(i) == 26 and set(i) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ") for i in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_canonical_json_sorts_keys_and_keeps_unicode() -> None:
    assert canonical_json({"b": 1, "a": {"y": [1, "é"], "x": None}}) == '{"a":{"x":null,"y":[1,"é"]},"b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_eight_connections_opening_a_new_file_and_racing_for_one_key_create_exactly_one_action(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"  # created by the racers themselves: the schema set-up races too
    results: list[tuple[str, bool]] = []
    barrier = threading.Barrier(8)
    lock = threading.Lock()

    def claim(n: int) -> None:
        barrier.wait(timeout=10)
        ledger = SqliteLedger(path)
        try:
            action, created = anyio.run(ledger.create_action, make_action("shared", arguments={"n": n}))
            with lock:
                results.append((action.id, created))
        finally:
            ledger.close()

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 8
    assert sum(created for _, created in results) == 1
    assert len({action_id for action_id, _ in results}) == 1


@pytest.mark.anyio
async def test_recovery_settles_only_the_orphans_of_dead_executors(store: SqliteLedger) -> None:
    write, _ = await store.create_action(make_action(at=T0))
    write = await walk(store, write, "validated", "dispatching")
    read, _ = await store.create_action(make_action(tool="add", side_effect="read_only", at=T0 + 1))
    read = await walk(store, read, "validated", "dispatching")
    retrying, _ = await store.create_action(make_action(at=T0 + 2))
    retrying = await walk(store, retrying, "validated", "dispatching", "failed_retryable")
    fresh, _ = await store.create_action(make_action(at=T0 + 3))
    approved, _ = await store.create_action(make_action(at=T0 + 4))
    approved = await walk(store, approved, "validated", "awaiting_approval")
    approved = await store.transition(approved.id, ("awaiting_approval",), "validated", at=T0, approval="approved")
    waiting, _ = await store.create_action(make_action(at=T0 + 5))
    waiting = await walk(store, waiting, "validated", "awaiting_approval")
    alive, _ = await store.create_action(make_action(at=T0 + 6))
    alive = await walk(store, alive, "validated", "dispatching")

    recovered = await store.recover_dispatching(T0 + 100, is_orphan=lambda action: action.id != alive.id)

    moved = {r.action.id: (r.from_state, r.action.state) for r in recovered}
    assert moved == {
        write.id: ("dispatching", "unknown_outcome"),
        read.id: ("dispatching", "failed_final"),
        retrying.id: ("failed_retryable", "unknown_outcome"),
        fresh.id: ("proposed", "failed_final"),
    }
    assert (await store.get(write.id)).error_type == "gateway_stopped"
    for untouched, state in ((approved, "validated"), (waiting, "awaiting_approval"), (alive, "dispatching")):
        assert (await store.get(untouched.id)).state == state


@pytest.mark.anyio
async def test_the_wal_is_checkpointed_by_a_background_thread_not_by_the_writes(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    ledger = SqliteLedger(path)
    try:
        empty = path.stat().st_size  # the writing connection's own checkpoint is off: its pages stay in the WAL
        keys = [f"k{n}" for n in range(2 * CHECKPOINT_EVERY + 1)]
        for key in keys:
            await ledger.create_action(make_action(key))
        threads = [t for t in threading.enumerate() if t.name == "quiver-ledger-checkpoint"]
        assert threads, "no checkpoint thread after CHECKPOINT_EVERY commits"
        with anyio.fail_after(60):  # a bound for a stuck thread, not a speed requirement
            while path.stat().st_size <= empty:  # the checkpoint copies the WAL's pages into the file
                await anyio.sleep(0.05)
        with sqlite3.connect(path) as raw:
            assert raw.execute("SELECT COUNT(*) FROM actions").fetchone() == (len(keys),)
    finally:
        ledger.close()
    assert not any(t.is_alive() for t in threads), "close() leaves the checkpoint thread running"
    with sqlite3.connect(path) as raw:  # and the last close checkpointed everything: nothing lost
        assert raw.execute("SELECT COUNT(*) FROM actions").fetchone() == (len(keys),)


@pytest.mark.anyio
async def test_the_wal_restarts_under_steady_writes_instead_of_growing_with_every_call(tmp_path: Path) -> None:
    """Back-to-back calls overlap every background checkpoint; the WAL must still restart (not keep
    every frame ever written until the gateway stops)."""
    path = tmp_path / "ledger.db"
    wal = path.with_name("ledger.db-wal")
    ledger = SqliteLedger(path)
    batches = 40  # about 28,000 frames: several times RESTART_FRAMES

    async def one_call(n: int) -> None:
        created, _ = await ledger.create_action(make_action(f"k{n}"), then=("validated", "dispatching"))
        await ledger.transition(created.id, ("dispatching",), "succeeded", at=T0 + 1, result='{"content":[]}')

    try:
        for n in range(CHECKPOINT_EVERY // 2 - 1):  # one batch of commits, before any checkpoint is asked for
            await one_call(n)
        frames_per_batch = (wal.stat().st_size - 32) / (1024 + 24)  # WAL header, then (frame header + page)s
        for n in range(CHECKPOINT_EVERY // 2 - 1, batches * CHECKPOINT_EVERY // 2):
            await one_call(n)
        with sqlite3.connect(path) as raw, anyio.fail_after(60):  # a bound for a stuck thread, not a speed goal
            while True:  # the frames since the WAL last restarted (-1 while the thread is checkpointing)
                _, frames, _ = raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if frames >= 0:
                    break
                await anyio.sleep(0.01)
    finally:
        ledger.close()
    assert frames < batches / 3 * frames_per_batch, (
        f"{frames} WAL frames after {batches} batches of {frames_per_batch:.0f}: the WAL never restarted"
    )


def test_action_ids_are_48_bits_of_milliseconds_then_80_random_bits_in_crockford_base32() -> None:
    import random

    from quiver.runtime.ledger import _CROCKFORD, new_action_id

    def one_char_at_a_time(now: float, random_bits: bytes) -> str:
        value = (int(now * 1000) & ((1 << 48) - 1)) << 80 | int.from_bytes(random_bits, "big")
        chars = []
        for _ in range(26):
            chars.append(_CROCKFORD[value & 31])
            value >>= 5
        return "".join(reversed(chars))

    rng = random.Random(7)
    for _ in range(2000):
        bits = bytes(rng.getrandbits(8) for _ in range(10))
        now = rng.uniform(0, 2**48 / 1000)
        assert new_action_id(now, lambda n, b=bits: b[:n]) == one_char_at_a_time(now, bits)
    early, late = new_action_id(1.0), new_action_id(2.0)
    assert len(early) == 26 and early < late  # ids sort by time


def test_a_commit_that_fails_leaves_no_open_transaction_and_releases_the_lock(tmp_path: Path) -> None:
    """A COMMIT can fail (I/O error, full disk); the next write must not find a transaction still open."""
    from quiver.runtime.ledger import LedgerUnavailable
    from quiver.runtime.ledger_sqlite import _WriteTransaction

    real = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    real.execute("CREATE TABLE t (x INTEGER)")

    class FailingCommitOnce:
        failed = False

        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
            if sql == "COMMIT" and not self.failed:
                self.failed = True
                raise sqlite3.OperationalError("disk I/O error")
            return real.execute(sql, *args)

        @property
        def in_transaction(self) -> bool:
            return real.in_transaction

    lock = threading.Lock()
    write = _WriteTransaction(FailingCommitOnce(), lock, None, tmp_path / "t.db")  # type: ignore[arg-type]
    with pytest.raises(LedgerUnavailable, match="disk I/O"), write as db:  # nothing recorded: try again
        db.execute("INSERT INTO t VALUES (1)")
    assert not real.in_transaction and not lock.locked()
    with write as db:
        db.execute("INSERT INTO t VALUES (2)")
    assert real.execute("SELECT x FROM t").fetchall() == [(2,)]
    real.close()
