"""The PostgreSQL ledger against a real server the suite starts itself (see `_pg_server`).

* The store-level suite of test_ledger.py and the executor suites of test_executor.py and
  test_transient.py run again here, unchanged, with their `store` fixture bound to a PostgresLedger:
  every test there that needs only `store` (and `clock`) is collected here under a `test_pg__` name.
* Behaviour both stores must share, parametrized over SQLite and PostgreSQL: the key claim raced by
  eight connections, transitions raced by eight connections, concurrent recovery sweeps, a dead
  executor's action recovered and reconciled.
* PostgreSQL only: leases, migrations, URLs, connection failures, NUL in text.
"""

from __future__ import annotations

import inspect
import itertools
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
import test_executor
import test_ledger
import test_transient
from _pg_server import PgServer, fresh_database, session_server
from test_executor import RECONCILE, WRITE, FakeClock, Upstream, call, ok
from test_ledger import T0, make_action

from quiver.errors import ConfigError, InputError
from quiver.runtime.executor import LedgerExecutor
from quiver.runtime.ledger import (
    Action,
    ActionFilter,
    Attempt,
    LedgerStore,
    SchemaVersionError,
    StateConflict,
    canonical_json,
)
from quiver.runtime.ledger_open import LedgerTarget, migrate, open_ledger, parse_ledger, resolve_ledger
from quiver.runtime.ledger_postgres import (
    DEFAULT_LEASE_MARGIN_S,
    SCHEMA_VERSION,
    LedgerNotMigrated,
    LedgerUnavailable,
    PostgresLedger,
    lease_seconds,
    migrate_schema,
    redact,
)
from quiver.runtime.ledger_sqlite import SCHEMA_VERSION as SQLITE_SCHEMA_VERSION
from quiver.runtime.ledger_sqlite import SqliteLedger

# The reused suites call recover with a fake clock an hour or more past the actions' creation and decide
# orphans with `is_orphan` alone; a long margin keeps leases out of their way (leases are tested below).
REUSED_LEASE_MARGIN_S = 1_000_000.0
SQLITE_ONLY = {
    "test_the_file_is_in_wal_mode_with_a_busy_timeout_and_a_schema_version",  # SQLite pragmas
    # reaches into SQLite's connection to fake a SIGKILL; test_a_dead_executors_write_is_recovered_and_reconciled
    # below is the same test through the store interface, for both stores
    "test_recovery_moves_a_dead_executors_write_to_unknown_and_reconciles_it",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    yield from session_server()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    yield from fresh_database(pg_server)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresLedger]:
    """The reused suites' `store`: a PostgresLedger on a fresh, migrated database.

    Inline (`offload=False`), like SqliteLedger: test_executor's fake clock advances on every sleep, so a
    waiting caller polling while the owner's writes run in worker threads could use up its whole wait
    budget in fake time (the other tests here, and the replicas test, use the default worker threads)."""
    ledger = PostgresLedger(pg_url, migrate=True, lease_margin_s=REUSED_LEASE_MARGIN_S, offload=False)
    yield ledger
    ledger.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh ledger of each kind: a SQLite path, or a migrated PostgreSQL database's URL."""
    if request.param == "sqlite":
        path = tmp_path / "ledger.db"
        SqliteLedger(path).close()  # created up front: racing the creation of a file is test_ledger's business
        return str(path)
    url: str = request.getfixturevalue("pg_url")
    migrate_schema(url)
    return url


@pytest.fixture
def ledger(location: str) -> Iterator[LedgerStore]:
    store = open_ledger(location)
    yield store
    store.close()


def _reused(module: Any) -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for name, function in vars(module).items():
        if not name.startswith("test_") or not inspect.isfunction(function) or name in SQLITE_ONLY:
            continue
        parametrized = {
            arg.strip()
            for mark in getattr(function, "pytestmark", [])
            if mark.name == "parametrize"
            for arg in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
        }
        needs = set(inspect.signature(function).parameters) - parametrized
        if "store" in needs and needs <= {"store", "clock"}:
            found[f"test_pg__{name.removeprefix('test_')}"] = function
    return found


REUSED = {**_reused(test_ledger), **_reused(test_executor), **_reused(test_transient)}
globals().update(REUSED)


def test_the_reused_suites_are_collected() -> None:
    assert len(_reused(test_ledger)) >= 9
    assert len(_reused(test_executor)) >= 30


# --- behaviour shared by both stores ------------------------------------------------------------------


def _in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run work(0..count-1) in threads released together; re-raise the first failure."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    failures: list[BaseException] = []

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[n] = work(n)
        except BaseException as exc:  # reported from the test thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if failures:
        raise failures[0]
    return results


def test_eight_connections_racing_for_one_key_create_exactly_one_action(location: str) -> None:
    def claim(n: int) -> tuple[str, bool]:
        store = open_ledger(location)
        try:
            action, created = anyio.run(store.create_action, make_action("shared", arguments={"n": n}))
            return action.id, created
        finally:
            store.close()

    results = _in_threads(8, claim)
    assert sum(created for _, created in results) == 1
    assert len({action_id for action_id, _ in results}) == 1
    store = open_ledger(location)
    try:
        [action] = anyio.run(store.list)
        assert [e.to_state for e in anyio.run(store.events, action.id)] == ["proposed"]
    finally:
        store.close()


def test_eight_connections_racing_one_transition_move_it_once(location: str) -> None:
    store = open_ledger(location)
    action, _ = anyio.run(store.create_action, make_action("k"))
    anyio.run(walk_at, store, action, T0 + 1, "validated")

    def claim(n: int) -> bool:
        mine = open_ledger(location)
        try:
            anyio.run(lambda: mine.transition(action.id, ("validated",), "dispatching", at=T0 + 2, owner=f"o/{n}"))
            return True
        except StateConflict as conflict:
            assert conflict.action.state == "dispatching"
            return False
        finally:
            mine.close()

    try:
        assert sum(_in_threads(8, claim)) == 1
        events = anyio.run(store.events, action.id)
        assert [(e.seq, e.to_state) for e in events] == [(1, "proposed"), (2, "validated"), (3, "dispatching")]
    finally:
        store.close()


def test_transitions_of_one_action_from_many_connections_number_their_events_without_gaps(location: str) -> None:
    """Each connection moves the action between dispatching and failed_retryable whenever it can."""
    store = open_ledger(location)
    action, _ = anyio.run(store.create_action, make_action("k"))
    anyio.run(walk_at, store, action, T0 + 1, "validated", "dispatching")

    def bounce(n: int) -> int:
        mine = open_ledger(location)
        moved = 0
        try:
            for _ in range(25):
                for source, target in (("dispatching", "failed_retryable"), ("failed_retryable", "dispatching")):
                    try:
                        anyio.run(lambda s=source, t=target: mine.transition(action.id, (s,), t, at=T0 + 3))  # type: ignore[misc]
                        moved += 1
                    except StateConflict:
                        pass
            return moved
        finally:
            mine.close()

    try:
        moves = sum(_in_threads(6, bounce))
        events = anyio.run(store.events, action.id)
        assert [e.seq for e in events] == list(range(1, 3 + moves + 1))
        assert all(a.to_state == b.from_state for a, b in itertools.pairwise(events))
    finally:
        store.close()


def test_concurrent_recovery_sweeps_settle_each_orphan_once(location: str) -> None:
    store = open_ledger(location)
    ids = []
    for n in range(20):
        action, _ = anyio.run(store.create_action, make_action(f"k{n}", at=T0 + n))
        ids.append(anyio.run(walk_at, store, action, T0 + 1, "validated", "dispatching").id)

    def sweep(n: int) -> list[str]:
        mine = open_ledger(location)
        try:
            recovered = anyio.run(lambda: mine.recover_dispatching(T0 + 100, is_orphan=lambda a: True))
            return [r.action.id for r in recovered]
        finally:
            mine.close()

    try:
        swept = [action_id for ids_of_one in _in_threads(4, sweep) for action_id in ids_of_one]
        assert sorted(swept) == sorted(ids)
        for action_id in ids:
            assert [e.to_state for e in anyio.run(store.events, action_id)][-1] == "unknown_outcome"
            assert len(anyio.run(store.events, action_id)) == 4
    finally:
        store.close()


@pytest.mark.anyio
async def test_a_dead_executors_write_is_recovered_and_reconciled(ledger: LedgerStore, clock: FakeClock) -> None:
    """test_executor's recovery test through the store interface only: a write left dispatching by a
    dead executor becomes unknown_outcome, the reconcile tool settles it, a re-call replays it."""
    policy = {**WRITE, "reconcile": {**RECONCILE, "equals": True}}
    draft = make_action("w1", side_effect="reversible_write", at=clock.now, arguments={"amount": 1})
    draft = Action(**{**_fields(draft), "policy": canonical_json(policy), "tool_sha256": "ab" * 32})
    action, _ = await ledger.create_action(draft)
    await walk_at(ledger, action, clock.now, "validated", "dispatching")

    probe = Upstream({"structuredContent": {"applied": True}, "isError": False})
    survivor = LedgerExecutor(ledger, clock=clock, sleep=clock.sleep, rng=random.Random(7), owner="test/0/a")
    report = await survivor.recover(probe, is_orphan=lambda a: a.owner == "elsewhere/1/x")
    assert [(r.from_state, r.action.state) for r in report.recovered] == [("dispatching", "unknown_outcome")]
    assert [a.state for a in report.reconciled] == ["succeeded"]
    upstream = Upstream()
    replay = await survivor.execute(call(policy=policy, key="w1"), upstream)
    assert (replay.state, replay.action_id, upstream.calls) == ("succeeded", action.id, [])


@pytest.mark.anyio
async def test_the_executor_runs_unchanged_on_either_store(ledger: LedgerStore, clock: FakeClock) -> None:
    executor = LedgerExecutor(ledger, clock=clock, sleep=clock.sleep, rng=random.Random(7))
    upstream = Upstream(ok("once"))
    first = await executor.execute(call(key="k1", amount=1), upstream)
    again = await executor.execute(call(key="k1", amount=1), upstream)
    other = await executor.execute(call(key="k1", amount=2), upstream)
    assert (first.state, again.state, again.action_id) == ("succeeded", "succeeded", first.action_id)
    assert again.result == ok("once") and len(upstream.calls) == 1
    assert other.state == "failed_final" and "already used" in other.result["content"][0]["text"]
    assert [a.state for a in await ledger.list()] == ["succeeded"]


# --- PostgreSQL only: leases --------------------------------------------------------------------------


def _fields(action: Action) -> dict[str, Any]:
    return {name: getattr(action, name) for name in Action.__dataclass_fields__}


async def walk_at(store: LedgerStore, action: Action, at: float, *states: Any) -> Action:
    for state in states:
        action = await store.transition(action.id, (action.state,), state, at=at)
    return action


def _policy_action(
    key: str, policy: Mapping[str, Any], *, at: float = T0, side_effect: str = "reversible_write"
) -> Action:
    action = make_action(key, side_effect=side_effect, at=at)
    return Action(**{**_fields(action), "policy": canonical_json({**policy, "side_effect": side_effect})})


def test_the_lease_covers_the_dispatch_timeout_or_the_longest_backoff_plus_the_margin() -> None:
    policy = {"timeout_ms": 2000, "retry": {"initial_interval": 0.5, "maximum_interval": 8}}
    assert lease_seconds(_policy_action("k", policy), 5.0) == (2 + 1 + 5.0, 8 + 5.0)
    assert lease_seconds(_policy_action("k", {"timeout_ms": 2000}), 0.0) == (3.0, 100.0)  # Temporal's 100 x 1 s
    assert lease_seconds(_policy_action("k", {"timeout_ms": -1}), 5.0) == (5.0, 5.0)  # malformed: fails at once


@pytest.mark.anyio
async def test_an_expired_lease_makes_an_action_an_orphan_whatever_is_orphan_says(pg_url: str) -> None:
    store = PostgresLedger(pg_url, migrate=True, lease_margin_s=0.5)
    try:
        policy = {"timeout_ms": 1000, "retry": {"initial_interval": 0.1, "maximum_interval": 2}}
        write, _ = await store.create_action(_policy_action("w", policy))
        write = await walk_at(store, write, T0 + 1, "validated", "dispatching")
        assert await store.lease_expires_at(write.id) == T0 + 1 + 1 + 1 + 0.5
        read, _ = await store.create_action(_policy_action("r", policy, side_effect="read_only", at=T0 + 0.5))
        read = await walk_at(store, read, T0 + 1, "validated", "dispatching", "failed_retryable")
        assert await store.lease_expires_at(read.id) == T0 + 1 + 2 + 0.5  # the backoff lease

        assert await store.recover_dispatching(T0 + 3.4, is_orphan=lambda a: False) == []
        recovered = await store.recover_dispatching(T0 + 3.6, is_orphan=lambda a: False)
        assert [(r.action.id, r.from_state, r.action.state) for r in recovered] == [
            (write.id, "dispatching", "unknown_outcome"),
            (read.id, "failed_retryable", "failed_final"),
        ]
        assert recovered[0].action.error_type == "gateway_stopped"
        assert "lease of elsewhere/1/x expired at" in ((await store.events(write.id))[-1].detail or "")
        assert await store.lease_expires_at(write.id) is None
    finally:
        store.close()


@pytest.mark.anyio
async def test_each_transition_renews_the_lease_and_a_live_owner_is_left_alone(pg_url: str) -> None:
    store = PostgresLedger(pg_url, migrate=True, lease_margin_s=0.0)
    try:
        action, _ = await store.create_action(_policy_action("k", {"timeout_ms": 1000}))
        assert await store.lease_expires_at(action.id) == T0 + 2
        action = await walk_at(store, action, T0 + 10, "validated", "dispatching")
        assert await store.lease_expires_at(action.id) == T0 + 12
        assert await store.recover_dispatching(T0 + 11.9, is_orphan=lambda a: False) == []
        awaiting = await walk_at(store, (await store.create_action(_policy_action("a", {})))[0], T0, "validated")
        await store.transition(awaiting.id, ("validated",), "awaiting_approval", at=T0, approval="pending")
        recovered = await store.recover_dispatching(T0 + 1e6, is_orphan=lambda a: True)
        assert [r.action.id for r in recovered] == [action.id]  # approval waits are never orphans
    finally:
        store.close()


@pytest.mark.anyio
async def test_a_row_another_replica_holds_is_skipped_not_waited_for(pg_url: str) -> None:
    store = PostgresLedger(pg_url, migrate=True, lease_margin_s=0.0)
    try:
        held, _ = await store.create_action(make_action("held", at=T0))
        free, _ = await store.create_action(make_action("free", at=T0 + 1))
        for action in (held, free):
            await walk_at(store, action, T0, "validated", "dispatching")
        with psycopg.connect(pg_url) as other:  # another replica, mid-transaction on `held`
            other.execute("SELECT 1 FROM quiver_actions WHERE id = %s FOR UPDATE", (held.id,))
            with anyio.fail_after(5):
                recovered = await store.recover_dispatching(T0 + 1e6, is_orphan=lambda a: False)
            assert [r.action.id for r in recovered] == [free.id]
        assert [r.action.id for r in await store.recover_dispatching(T0 + 1e6, is_orphan=lambda a: False)] == [held.id]
    finally:
        store.close()


# --- PostgreSQL only: schema and migrations -----------------------------------------------------------


def test_migrate_creates_the_schema_once_and_is_idempotent(pg_url: str) -> None:
    assert migrate_schema(pg_url) == (0, SCHEMA_VERSION)
    assert migrate_schema(pg_url) == (SCHEMA_VERSION, SCHEMA_VERSION)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT value FROM quiver_meta WHERE key = 'schema_version'").fetchone() == (
            str(SCHEMA_VERSION),
        )
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    assert tables == {"quiver_meta", "quiver_actions", "quiver_events", "quiver_attempts"}


def test_replicas_migrating_at_once_all_succeed(pg_url: str) -> None:
    results = _in_threads(6, lambda n: migrate_schema(pg_url))
    assert sorted(results) == [(0, SCHEMA_VERSION)] + [(SCHEMA_VERSION, SCHEMA_VERSION)] * 5


def test_a_store_refuses_an_unmigrated_database_and_one_from_a_newer_quiver(pg_url: str) -> None:
    with pytest.raises(LedgerNotMigrated, match="quiver ledger migrate"):
        PostgresLedger(pg_url)
    migrate_schema(pg_url)
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE quiver_meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(SchemaVersionError):
        PostgresLedger(pg_url)
    with pytest.raises(SchemaVersionError):
        migrate_schema(pg_url)
    with pytest.raises(InputError, match="schema version 2"):
        migrate(pg_url)


def test_migrate_reports_what_it_did_for_either_kind(pg_url: str, tmp_path: Path) -> None:
    assert migrate(pg_url) == f"created the ledger schema in {pg_url} (schema version {SCHEMA_VERSION})"
    assert migrate(pg_url) == f"ledger {pg_url} is up to date (schema version {SCHEMA_VERSION})"
    created = f"created ledger {tmp_path / 'ledger.db'} (schema version {SQLITE_SCHEMA_VERSION})"
    assert migrate("ledger.db", root=tmp_path) == created
    assert migrate(f"sqlite:///{tmp_path}/ledger.db").startswith(f"ledger {tmp_path / 'ledger.db'} is up to date")


def test_a_store_reached_over_tcp_or_the_socket_sees_the_same_records(pg_server: PgServer) -> None:
    name = pg_server.create_database()
    try:
        tcp, unix = (PostgresLedger(url, migrate=True) for url in (pg_server.url(name), pg_server.socket_url(name)))
        try:
            action, _ = anyio.run(tcp.create_action, make_action("k"))
            assert anyio.run(unix.get, action.id) == action
        finally:
            tcp.close()
            unix.close()
    finally:
        pg_server.drop_database(name)


def test_an_unreachable_server_is_ledger_unavailable_and_the_password_is_not_shown() -> None:
    url = "postgresql://quiver:s3cret@127.0.0.1:1/ledger"
    with pytest.raises(LedgerUnavailable) as caught:
        PostgresLedger(url, connect_timeout_s=2)
    assert "s3cret" not in str(caught.value) and "quiver:***@127.0.0.1:1" in str(caught.value)
    with pytest.raises(InputError, match="cannot connect to the ledger database postgresql://quiver:\\*\\*\\*@"):
        migrate(url)


@pytest.mark.anyio
async def test_a_broken_connection_is_replaced_for_the_next_read(pg_url: str) -> None:
    store = PostgresLedger(pg_url, migrate=True, pool_size=1)
    try:
        action, _ = await store.create_action(make_action("k"))
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'quiver-ledger' AND pid <> pg_backend_pid()"
            )
        assert await store.get(action.id) == action
    finally:
        store.close()


@pytest.mark.anyio
async def test_nul_characters_never_reach_postgresql_text(pg_url: str) -> None:
    store = PostgresLedger(pg_url, migrate=True)
    try:
        action, _ = await store.create_action(make_action("k"))
        action = await walk_at(store, action, T0, "validated", "dispatching")
        attempt = Attempt(action.id, 1, T0, T0 + 1, "error", "Boom", "bad\x00byte")
        moved = await store.transition(
            action.id, ("dispatching",), "failed_final", at=T0 + 1, attempt=attempt, error="bad\x00byte"
        )
        assert (await store.get(action.id)).error == "bad\ufffdbyte" and moved.state == "failed_final"
        assert (await store.attempts(action.id))[0].error == "bad\ufffdbyte"
        with pytest.raises(ValueError, match="NUL"):
            await store.create_action(make_action("key\x00"))
    finally:
        store.close()


@pytest.mark.anyio
async def test_list_filters_combine(ledger: LedgerStore) -> None:
    a, _ = await ledger.create_action(make_action(tool="add", at=T0))
    b, _ = await ledger.create_action(make_action(tool="echo", at=T0 + 1))
    await ledger.create_action(make_action(tool="add", at=T0 + 2))
    both = ActionFilter(states=("proposed",), tools=("calc/add", "echo"), since=T0, limit=2)
    assert [x.id for x in await ledger.list(both)] == [a.id, b.id]


# --- URLs and the factory ------------------------------------------------------------------------------


def test_ledger_locations_parse_to_sqlite_paths_or_postgresql_urls(tmp_path: Path) -> None:
    assert parse_ledger(".quiver/ledger.db", tmp_path) == LedgerTarget("sqlite", str(tmp_path / ".quiver/ledger.db"))
    assert parse_ledger("sqlite:///rel.db", tmp_path).path == tmp_path / "rel.db"
    assert parse_ledger("sqlite:////abs/x.db", tmp_path).path == Path("/abs/x.db")
    for url in ("postgresql://u@h/db", "postgres://u@h/db", "postgresql+psycopg://u@h/db"):
        assert parse_ledger(url, tmp_path) == LedgerTarget("postgresql", "postgresql://u@h/db")
    assert parse_ledger("postgresql://u:pw@h:5/db?sslmode=require", tmp_path).display() == (
        "postgresql://u:***@h:5/db?sslmode=require"
    )
    with pytest.raises(ConfigError, match="mysql"):
        parse_ledger("mysql://h/db", tmp_path)


def test_the_flag_wins_over_the_environment_which_wins_over_the_config(tmp_path: Path) -> None:
    (tmp_path / "quiver.toml").write_text('ledger = "postgresql://cfg@h/db"\n')
    env = {"QUIVER_LEDGER_URL": "postgresql://env@h/db"}
    assert resolve_ledger(tmp_path, "flag.db", env).location == str(tmp_path / "flag.db")
    assert resolve_ledger(tmp_path, None, env).location == "postgresql://env@h/db"
    assert resolve_ledger(tmp_path, None, {}).location == "postgresql://cfg@h/db"


def test_open_ledger_picks_the_store_by_kind(tmp_path: Path, pg_url: str) -> None:
    sqlite = open_ledger("ledger.db", root=tmp_path)
    postgres = open_ledger(pg_url, migrate=True, lease_margin_s=1.0, pool_size=2)
    try:
        assert isinstance(sqlite, SqliteLedger) and (tmp_path / "ledger.db").is_file()
        assert isinstance(postgres, PostgresLedger) and postgres.lease_margin_s == 1.0
        default = PostgresLedger(pg_url)
        assert default.lease_margin_s == DEFAULT_LEASE_MARGIN_S
        default.close()
    finally:
        sqlite.close()
        postgres.close()


def test_redact_leaves_urls_without_a_password_alone() -> None:
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"
    assert redact("postgresql://u:p@h/db") == "postgresql://u:***@h/db"
    assert (
        redact("postgresql://u@h/db?password=p&sslmode=require") == "postgresql://u@h/db?password=***&sslmode=require"
    )
    assert redact("postgresql://u@/db?host=/tmp/x&port=5") == "postgresql://u@/db?host=/tmp/x&port=5"
