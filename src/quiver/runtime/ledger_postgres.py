"""The PostgreSQL ledger store: one database shared by several gateway replicas (psycopg 3).

Selected by `ledger = "postgresql://user@host/db"` in the config or `QUIVER_LEDGER_URL` (see
`quiver.runtime.ledger_open`). The schema is created and upgraded by `quiver ledger migrate`
(`migrate_schema`): versioned scripts in `MIGRATIONS`, applied in one transaction under an advisory lock, the
version kept in `quiver_meta`. A store refuses a database whose schema is older (run migrate) or newer
(a newer quiver wrote it) than this code.

Exactly-once per idempotency key is enforced by the database, never by an in-process lock:

* the claim is `INSERT ... ON CONFLICT (idempotency_key) DO NOTHING` on a unique column, in the same
  statement as the creation event; the loser reads the winner's row (READ COMMITTED: after the
  winner commits) and gets `(existing, False)`;
* a transition locks the row (`SELECT ... FOR UPDATE`), checks its state against `from_states`,
  updates it, appends the event numbered from the row's own event counter and, when given, the
  attempt: one statement, so one round trip and one transaction. `validated -> dispatching` is the
  guarded move that makes one replica the sender.

Leases. Every action in flight (`proposed`, `validated`, `dispatching`, `failed_retryable`) carries
`lease_expires_at`, set by each transition to `at` plus a length fixed at creation from the action's
policy, plus the store's `lease_margin_s`: `timeout_ms` and the executor's dispatch grace (the longest a
live executor stays in `dispatching`, and far longer than it stays in `proposed` or `validated`), or,
for `failed_retryable`, the longest backoff wait (`retry.maximum_interval`). So the owner needs no
heartbeat: a live executor always makes its next transition before its lease runs out. A lease that
expires early (a margin shorter than a stall of the gateway) never causes a second dispatch: recovery
only moves a write to `unknown_outcome`, and the owner's late transition then fails with StateConflict.
`recover_dispatching(now)` settles an action when its lease expired before `now` **or** `is_orphan(action)`
says its owner is gone (the executor's default checks the pid on this host), as the SQLite store does
(see `quiver.runtime.ledger.recovery_state`): the orphans are locked with `SELECT ... FOR UPDATE SKIP
LOCKED`, so replicas sweeping at once never wait for each other and settle each action once.
Timestamps come from the executors' clocks, as everywhere in the ledger: replicas' clocks must agree
to well within `lease_margin_s` (NTP does).

Connections: a small pool of autocommit connections; each method runs in a worker thread (`offload`)
so a slow network or a row lock held by another replica never blocks the event loop. Text never holds
NUL (PostgreSQL refuses it): free text has it replaced by U+FFFD, and an id or key containing one is
refused with ValueError. Connection failures raise `LedgerUnavailable`.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import anyio.to_thread
import psycopg

from quiver.model import JSON
from quiver.runtime.ledger import (
    STATES,
    Action,
    ActionFilter,
    Attempt,
    Event,
    Recovered,
    SchemaVersionError,
    State,
    StateConflict,
    UnknownAction,
    check_transition_request,
    creation_events,
    creation_path,
    iso_time,
    recovery_state,
)
from quiver.runtime.ledger_postgres_pool import (
    DEFAULT_CONNECT_TIMEOUT_S,
    LedgerUnavailable,
    _first_line,
    _Pool,
    normalize_url,
    redact,
)
from quiver.runtime.ledger_postgres_schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    LedgerNotMigrated,
    _literals,
    migrate_schema,
    schema_version_of,
)
from quiver.runtime.ledger_postgres_sql import (
    _ACTION_COLUMNS,
    _ATTEMPT_CTE,
    _COLUMNS,
    _INSERT_ATTEMPT,
    _SELECT,
    IN_FLIGHT,
    _action,
    _attempt_params,
    _check_identity,
    _clean,
    _transition_statement,
    lease_seconds,
)

__all__ = [  # with names moved to `ledger_postgres_*`, so they import from here as before
    "DEFAULT_CONNECT_TIMEOUT_S", "DEFAULT_LEASE_MARGIN_S", "DEFAULT_POOL_SIZE", "IN_FLIGHT", "MIGRATIONS",
    "SCHEMA_VERSION", "LedgerNotMigrated", "LedgerUnavailable", "PostgresLedger", "lease_seconds", "migrate_schema",
    "normalize_url", "redact", "schema_version_of",
]  # fmt: skip

DEFAULT_LEASE_MARGIN_S: Final = 30.0
DEFAULT_POOL_SIZE: Final = 8  # connections per gateway: eight calls in flight commit together (bench/gateway.py c=8)
_T = TypeVar("_T")


class PostgresLedger:
    """`LedgerStore` on a PostgreSQL database shared by any number of processes and hosts."""

    def __init__(
        self,
        url: str,
        *,
        lease_margin_s: float = DEFAULT_LEASE_MARGIN_S,
        pool_size: int = DEFAULT_POOL_SIZE,
        offload: bool = True,
        migrate: bool = False,
        connect_timeout_s: int = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> None:
        if lease_margin_s < 0:
            raise ValueError("lease_margin_s must be >= 0")
        if pool_size < 1:
            raise ValueError("pool_size must be >= 1")
        self.url = normalize_url(url)
        self.lease_margin_s = lease_margin_s
        self._offload = offload
        if migrate:
            migrate_schema(self.url, connect_timeout_s=connect_timeout_s)
        self._pool = _Pool(self.url, pool_size, connect_timeout_s)
        try:
            version = self._call(schema_version_of)
            if version > SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"ledger database {redact(self.url)} has schema version {version}; "
                    f"this quiver reads up to {SCHEMA_VERSION}"
                )
            if version < SCHEMA_VERSION:
                have = "no ledger schema" if version == 0 else f"ledger schema version {version}"
                raise LedgerNotMigrated(
                    f"ledger database {redact(self.url)} has {have}; run `quiver ledger migrate` "
                    f"(this quiver needs version {SCHEMA_VERSION})"
                )
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._pool.close()

    def schema_version(self) -> int:
        return self._call(schema_version_of)

    async def lease_expires_at(self, action_id: str) -> float | None:
        """When the action's lease ends (None once it has left the in-flight states); UnknownAction."""

        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> float | None:
            row = conn.execute("SELECT lease_expires_at FROM quiver_actions WHERE id = %s", (action_id,)).fetchone()
            if row is None:
                raise UnknownAction(action_id)
            return None if row[0] is None else float(row[0])

        return await self._run(read, retry=True)

    # --- the LedgerStore protocol -------------------------------------------------------------------

    async def create_action(
        self, action: Action, *, then: Sequence[State] = (), attempt: Attempt | None = None
    ) -> tuple[Action, bool]:
        if action.state != "proposed":
            raise ValueError(f"a new action starts as proposed, not {action.state}")
        _check_identity(action.id, "action id")
        _check_identity(action.idempotency_key, "idempotency key")
        path = creation_path(then)
        stored = dataclasses.replace(action, state=path[-1])
        values = {column: _clean(getattr(stored, column)) for column in _ACTION_COLUMNS}
        lease_s, backoff_lease_s = lease_seconds(action, self.lease_margin_s)
        events = creation_events(path)
        steps = ", ".join(f"({seq}, %(e{seq}_from)s::text, %(e{seq}_to)s::text)" for seq, _ in events)
        statement = (
            f"WITH ins AS (INSERT INTO quiver_actions ({_COLUMNS}, event_count, lease_s, backoff_lease_s,"
            f" lease_expires_at) VALUES ({', '.join(f'%({column})s' for column in _ACTION_COLUMNS)}, {len(path)},"
            " %(lease_s)s, %(backoff_lease_s)s, %(lease_until)s)"
            " ON CONFLICT (idempotency_key) DO NOTHING RETURNING id)"
            f"{_ATTEMPT_CTE.replace('FROM upd', 'FROM ins') if attempt is not None else ''}"
            " INSERT INTO quiver_events (action_id, seq, at, from_state, to_state, detail)"
            f" SELECT ins.id, s.seq, %(created_at)s, s.from_state, s.to_state, NULL FROM ins,"
            f" (VALUES {steps}) AS s (seq, from_state, to_state)"
        )
        params = {
            **values,
            **{f"e{seq}_from": before for seq, (before, _) in events},
            **{f"e{seq}_to": state for seq, (_, state) in events},
            **(_attempt_params(attempt) if attempt is not None else {}),
            "lease_s": lease_s,
            "backoff_lease_s": backoff_lease_s,
            "lease_until": action.created_at + lease_s,
        }

        def claim(conn: psycopg.Connection[tuple[Any, ...]]) -> tuple[Action, bool]:
            while True:
                if conn.execute(statement, params).rowcount:
                    return stored, True
                row = conn.execute(f"{_SELECT} WHERE idempotency_key = %s", (action.idempotency_key,)).fetchone()
                if row is not None:  # READ COMMITTED: the winner's row, committed before our insert gave way
                    return _action(row), False

        return await self._run(claim)

    async def transition(
        self,
        action_id: str,
        from_states: Sequence[State],
        to_state: State,
        *,
        at: float,
        detail: str | None = None,
        attempt: Attempt | None = None,
        **fields: JSON,
    ) -> Action:
        check_transition_request(from_states, to_state, fields)
        statement, params = _transition_statement(
            action_id, from_states, to_state, at=at, detail=detail, attempt=attempt, fields=fields
        )

        def move(conn: psycopg.Connection[tuple[Any, ...]]) -> Action:
            row = conn.execute(statement, params).fetchone()
            if row is None:
                raise UnknownAction(action_id)
            moved, action = bool(row[0]), _action(row[1:])
            if not moved:
                raise StateConflict(action, from_states)
            return action

        return await self._run(move)

    async def record_attempt(self, attempt: Attempt) -> None:
        def insert(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
            conn.execute(_INSERT_ATTEMPT, _attempt_params(attempt))

        await self._run(insert)

    async def get(self, action_id: str) -> Action:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> Action:
            row = conn.execute(f"{_SELECT} WHERE id = %s", (action_id,)).fetchone()
            if row is None:
                raise UnknownAction(action_id)
            return _action(row)

        return await self._run(read, retry=True)

    async def find_by_key(self, idempotency_key: str) -> Action | None:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> Action | None:
            row = conn.execute(f"{_SELECT} WHERE idempotency_key = %s", (idempotency_key,)).fetchone()
            return None if row is None else _action(row)

        return await self._run(read, retry=True)

    async def list(self, filters: ActionFilter | None = None) -> builtins.list[Action]:
        filters = filters or ActionFilter()
        where: builtins.list[str] = []
        params: builtins.list[JSON] = []
        if filters.states:
            if set(filters.states) <= set(STATES):  # literals: the planner can use the partial index
                where.append(f"state IN ({_literals(filters.states)})")
            else:
                where.append("state = ANY(%s)")
                params.append(builtins.list(filters.states))
        if filters.tools:
            where.append("(tool = ANY(%s) OR server || '/' || tool = ANY(%s))")
            params += [builtins.list(filters.tools), builtins.list(filters.tools)]
        if filters.since is not None:
            where.append("created_at >= %s")
            params.append(filters.since)
        statement = _SELECT + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY created_at, id"
        if filters.limit is not None:
            statement += " LIMIT %s"
            params.append(filters.limit)

        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> builtins.list[Action]:
            return [_action(row) for row in conn.execute(statement, params).fetchall()]

        return await self._run(read, retry=True)

    async def events(self, action_id: str) -> builtins.list[Event]:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> builtins.list[Event]:
            rows = conn.execute(
                "SELECT action_id, seq, at, from_state, to_state, detail FROM quiver_events"
                " WHERE action_id = %s ORDER BY seq",
                (action_id,),
            ).fetchall()
            return [Event(*row) for row in rows]

        return await self._run(read, retry=True)

    async def attempts(self, action_id: str) -> builtins.list[Attempt]:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> builtins.list[Attempt]:
            rows = conn.execute(
                "SELECT action_id, number, started_at, ended_at, outcome, error_type, error FROM quiver_attempts"
                " WHERE action_id = %s ORDER BY number",
                (action_id,),
            ).fetchall()
            return [Attempt(*row) for row in rows]

        return await self._run(read, retry=True)

    async def recover_dispatching(self, now: float, *, is_orphan: Callable[[Action], bool]) -> builtins.list[Recovered]:
        """Settle in-flight actions whose lease expired before `now` or whose owner `is_orphan` says is gone.

        Two steps: a plain read picks the candidates, then one transaction locks them with `FOR UPDATE
        SKIP LOCKED` (a row another replica is moving or recovering right now is left to it), checks each
        again on its locked row, and moves it as `recovery_state` says."""

        def orphaned(action: Action, lease_until: float | None) -> str | None:
            if recovery_state(action) == "skip":
                return None
            if lease_until is not None and lease_until < now:
                return f"recovery: the lease of {action.owner or 'its executor'} expired at {iso_time(lease_until)}"
            if is_orphan(action):
                return "recovery: the executor that owned this action stopped"
            return None

        def sweep(conn: psycopg.Connection[tuple[Any, ...]]) -> builtins.list[Recovered]:
            rows = conn.execute(
                f"SELECT {_COLUMNS}, lease_expires_at FROM quiver_actions WHERE state IN ({_literals(IN_FLIGHT)})"
                " ORDER BY created_at, id"
            ).fetchall()
            ids = [row[0] for row in rows if orphaned(_action(row[:-1]), row[-1]) is not None]
            if not ids:
                return []
            recovered: builtins.list[Recovered] = []
            with conn.transaction():
                locked = conn.execute(
                    f"SELECT {_COLUMNS}, lease_expires_at FROM quiver_actions WHERE id = ANY(%s)"
                    f" AND state IN ({_literals(IN_FLIGHT)}) ORDER BY created_at, id FOR UPDATE SKIP LOCKED",
                    (ids,),
                ).fetchall()
                for row in locked:
                    action = _action(row[:-1])
                    detail = orphaned(action, row[-1])
                    if detail is None:  # its executor moved it, or renewed its lease, since the first read
                        continue
                    plan = recovery_state(action)
                    assert plan != "skip"
                    error = (
                        "the gateway stopped while the request was in flight; it may or may not have taken effect"
                        if plan == "unknown_outcome"
                        else "the gateway stopped before the action completed"
                    )
                    statement, params = _transition_statement(
                        action.id, (action.state,), plan, at=now, detail=detail, attempt=None,
                        fields={"error_type": "gateway_stopped", "error": error},
                    )  # fmt: skip
                    moved = conn.execute(statement, params).fetchone()
                    assert moved is not None and moved[0], "a row locked by this transaction changed state"
                    recovered.append(Recovered(_action(moved[1:]), action.state))
            return recovered

        return await self._run(sweep)

    # --- internals ----------------------------------------------------------------------------------

    async def _run(self, work: Callable[[psycopg.Connection[tuple[Any, ...]]], _T], *, retry: bool = False) -> _T:
        if not self._offload:
            return self._call(work, retry=retry)
        return await anyio.to_thread.run_sync(lambda: self._call(work, retry=retry))

    def _call(self, work: Callable[[psycopg.Connection[tuple[Any, ...]]], _T], *, retry: bool = False) -> _T:
        """Run `work` on a pooled connection. A read (`retry`) is tried once more on a fresh connection when
        the first one turns out broken (the server restarted, an idle connection was cut)."""
        for last in (not retry, True):
            try:
                with self._pool.connection() as conn:
                    return work(conn)
            except psycopg.OperationalError as exc:
                if last:
                    raise LedgerUnavailable(f"ledger database {redact(self.url)}: {_first_line(exc)}") from None
        raise AssertionError("unreachable")
