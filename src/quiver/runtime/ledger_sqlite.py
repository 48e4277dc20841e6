"""The SQLite ledger store: one file (default `.quiver/ledger.db`) in WAL mode, shared by processes.

Every write is one `BEGIN IMMEDIATE` transaction (the write lock is taken up front, so two writers
never deadlock on a lock upgrade) and waits up to `busy_timeout_ms` for another process's write.
`synchronous=NORMAL` (the default) keeps every committed record through a crash of the process, the
case the ledger exists for (SIGKILL, OOM); `synchronous="FULL"` also keeps it through a power loss at
the price of an fsync per transaction. The methods are `async` for the store protocol but run the
statements inline: each is a short local transaction, and a thread hop would cost more than the write.

The statements stay portable (no AUTOINCREMENT, no SQLite-only functions; `ON CONFLICT DO NOTHING`
and `||` exist in PostgreSQL too); the PostgreSQL store states its own DDL. A new file's `events` and
`attempts` tables are `WITHOUT ROWID` (their rows are small and always reached by their primary key: one
b-tree each instead of two, fewer WAL frames per call); an older file keeps its rowid tables, which the
same statements read and write. Schema changes bump `SCHEMA_VERSION` in the `meta` table; a newer file
than this code understands is refused.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import operator
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Literal

from quiver.model import JSON
from quiver.runtime._sqlite_checkpoint import RESTART_FRAMES, Checkpointer
from quiver.runtime._sqlite_integrity import damage, file_state, foreign, refuse_damaged
from quiver.runtime.ledger import (
    Action,
    ActionFilter,
    Attempt,
    Event,
    LedgerDamaged,
    LedgerUnavailable,
    Recovered,
    SchemaVersionError,
    State,
    StateConflict,
    UnknownAction,
    check_transition_request,
    creation_events,
    creation_path,
    recovery_state,
)

SCHEMA_VERSION = 2  # 2: actions.event_count (the events' next seq without a MAX(seq) subquery)
DEFAULT_BUSY_TIMEOUT_MS = 10_000
CHECKPOINT_EVERY = 100  # commits between two background WAL checkpoints (SQLite's own: every ~1000 pages)

_ACTION_COLUMNS = (
    "id", "idempotency_key", "session_id", "requester", "call_id", "server", "tool", "tool_sha256", "arguments",
    "args_sha256", "side_effect", "policy", "state", "created_at", "updated_at", "attempts", "approval",
    "approval_ref", "result", "error_type", "error", "owner",
)  # fmt: skip
# an attempt written `in_flight` before dispatch gets its ending (the start stays)
_ATTEMPT_ENDING = ", ".join(f"{c} = excluded.{c}" for c in ("ended_at", "outcome", "error_type", "error"))
_SELECT = f"SELECT {', '.join(_ACTION_COLUMNS)} FROM actions"
_INSERT_ACTION = (
    f"INSERT INTO actions ({', '.join(_ACTION_COLUMNS)}, event_count)"
    f" VALUES ({', '.join('?' * (len(_ACTION_COLUMNS) + 1))}) ON CONFLICT (idempotency_key) DO NOTHING"
)
_STATE = _ACTION_COLUMNS.index("state")
_SELECT_BY_ID = f"{_SELECT} WHERE id = ?"
_SELECT_BY_KEY = f"{_SELECT} WHERE idempotency_key = ?"
_INSERT_ATTEMPT = (
    "INSERT INTO attempts (action_id, number, started_at, ended_at, outcome, error_type, error)"
    f" VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (action_id, number) DO UPDATE SET {_ATTEMPT_ENDING}"
)
_columns_of = operator.attrgetter(*_ACTION_COLUMNS)  # Action's fields, in this order (see _action)
_INSERT_EVENTS = "INSERT INTO events (action_id, seq, at, from_state, to_state, detail) VALUES "
_EVENT_VALUES = "(?, ?, ?, ?, ?, ?)"
_MIGRATIONS = {  # from version N to N + 1
    1: (
        "ALTER TABLE actions ADD COLUMN event_count INTEGER NOT NULL DEFAULT 1",
        "UPDATE actions SET event_count = (SELECT COALESCE(MAX(seq), 1) FROM events WHERE action_id = actions.id)",
    ),
}
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE actions (
        id TEXT PRIMARY KEY,
        idempotency_key TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        requester TEXT NOT NULL,
        call_id TEXT,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        tool_sha256 TEXT NOT NULL,
        arguments TEXT NOT NULL,
        args_sha256 TEXT NOT NULL,
        side_effect TEXT NOT NULL,
        policy TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        approval TEXT,
        approval_ref TEXT,
        result TEXT,
        error_type TEXT,
        error TEXT,
        owner TEXT,
        event_count INTEGER NOT NULL DEFAULT 1
    )""",
    "CREATE INDEX actions_state ON actions (state)",
    "CREATE INDEX actions_created ON actions (created_at)",
    """CREATE TABLE events (
        action_id TEXT NOT NULL REFERENCES actions (id),
        seq INTEGER NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        from_state TEXT,
        to_state TEXT NOT NULL,
        detail TEXT,
        PRIMARY KEY (action_id, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE attempts (
        action_id TEXT NOT NULL REFERENCES actions (id),
        number INTEGER NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        ended_at DOUBLE PRECISION NOT NULL,
        outcome TEXT NOT NULL,
        error_type TEXT,
        error TEXT,
        PRIMARY KEY (action_id, number)
    ) WITHOUT ROWID""",
)


PAGE_SIZE = 1024  # bytes, for a new ledger file (see __init__)
WAL_FRAME_HEADER = 24  # bytes before each page in the WAL


class SqliteLedger:
    """`LedgerStore` on one SQLite file. Safe across processes, and across threads sharing an instance."""

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        readonly: bool = False,
        check: bool = True,
    ) -> None:
        """Open (or, unless `readonly`, create) the ledger at `path`. A file that is not a SQLite database,
        a database that is someone else's, or one SQLite's `quick_check` finds damaged is refused with
        `LedgerDamaged` before anything runs on it (`check=False`: `quiver ledger doctor` reads what it
        can). `readonly` never writes: no schema is created (an empty file is refused), none migrated."""
        self.path = Path(path)
        memory = str(path) == ":memory:"
        state = "absent" if memory else file_state(self.path)
        if readonly and state in ("absent", "empty"):
            raise LedgerDamaged(
                f"ledger {self.path} is {'missing' if state == 'absent' else 'an empty file'}: no action was ever "
                "recorded in it (quiver serve creates the ledger on the first call)"
            )
        if not memory and not readonly:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._checkpoints: Checkpointer | None = None
        target = f"file:{self.path.absolute().as_posix()}?mode=ro" if readonly else str(path)
        try:
            self._conn = sqlite3.connect(
                target, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False, uri=readonly
            )
        except sqlite3.Error as exc:
            raise LedgerUnavailable(f"cannot open ledger {self.path}: {exc}") from None
        try:
            self._open(state, busy_timeout_ms, synchronous, readonly=readonly, check=check)
        except BaseException:
            self._conn.close()
            raise

    def _open(self, state: str, busy_timeout_ms: int, synchronous: str, *, readonly: bool, check: bool) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        self.upgraded_from: int | None = None  # the schema version `_migrate` upgraded in place, if it did
        if state == "sqlite":
            problem = damage(conn, self.path) if check else None
            if problem is not None:
                raise refuse_damaged(self.path, problem)
            try:
                other = foreign(conn, self.path)
            except sqlite3.DatabaseError as exc:
                if check:
                    raise refuse_damaged(self.path, str(exc)) from None
                other = None
            if other is not None:
                raise other
        if readonly:
            self._write = _WriteTransaction(conn, self._lock, None, self.path)
            self._check_version()
            return
        try:
            # A new file gets 1 KiB pages: a call rewrites about 15 pages in the WAL, and smaller ones cut the
            # store's time per call by about 15 %; an existing file keeps its page size (SQLite ignores this).
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            self._use_wal(busy_timeout_ms / 1000)
            conn.execute(f"PRAGMA synchronous = {synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise LedgerUnavailable(f"cannot open ledger {self.path}: {exc}") from None
        if str(self.path) != ":memory:":
            self._checkpoints = Checkpointer(str(self.path), busy_timeout_ms, self._lock)
        if self._checkpoints is not None:  # checkpoints (and their fsyncs) move off the write path
            conn.execute("PRAGMA wal_autocheckpoint = 0")
        # a WAL that a burst grew (or an older quiver's, which never restarted under load) is cut back
        # when it restarts, to twice what it holds at a restart (so the steady size is never cut)
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        conn.execute(f"PRAGMA journal_size_limit = {2 * RESTART_FRAMES * (page + WAL_FRAME_HEADER)}")
        self._write = _WriteTransaction(conn, self._lock, self._checkpoints, self.path)
        self._migrate()

    def _check_version(self) -> None:
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"ledger {self.path} has schema version {version}; this quiver reads up to {SCHEMA_VERSION}"
            )

    def _use_wal(self, budget_s: float) -> None:
        """Switch to WAL once. Several processes opening a brand-new file at once can find it locked: the
        busy handler does not cover a journal-mode change, so retry briefly until one of them has switched."""

        deadline = time.monotonic() + budget_s
        delay = 0.005
        while True:
            try:
                mode = str(self._conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
                if mode != "wal":
                    self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.1)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """A read under the connection's lock; SQLite's I/O and lock errors are LedgerUnavailable."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise unavailable(self.path, exc) from None

    def close(self) -> None:
        if self._checkpoints is not None:
            self._checkpoints.stop()
        with self._lock:
            self._conn.close()

    @property
    def journal_mode(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])

    def schema_version(self) -> int:
        with self._reading():
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0])

    # --- the LedgerStore protocol -------------------------------------------------------------------

    async def create_action(
        self, action: Action, *, then: Sequence[State] = (), attempt: Attempt | None = None
    ) -> tuple[Action, bool]:
        if action.state != "proposed":
            raise ValueError(f"a new action starts as proposed, not {action.state}")
        insert_events, steps = _creation(tuple(then))
        columns = _columns_of(action)
        row = (*columns[:_STATE], steps[-1][1][1], *columns[_STATE + 1 :])
        with self._write as db:
            if db.execute(_INSERT_ACTION, (*row, len(steps))).rowcount:
                at = action.created_at
                db.execute(insert_events, [v for seq, (a, b) in steps for v in (action.id, seq, at, a, b, None)])
                if attempt is not None:
                    self._insert_attempt(db, attempt)
                return _action(row), True
            return _action(db.execute(_SELECT_BY_KEY, (action.idempotency_key,)).fetchone()), False

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
        with self._write as db:
            return self._transition(
                db, action_id, from_states, to_state, at=at, detail=detail, fields=fields, attempt=attempt
            )

    async def record_attempt(self, attempt: Attempt) -> None:
        with self._write as db:
            self._insert_attempt(db, attempt)

    async def get(self, action_id: str) -> Action:
        with self._reading():
            row = self._conn.execute(f"{_SELECT} WHERE id = ?", (action_id,)).fetchone()
        if row is None:
            raise UnknownAction(action_id)
        return _action(row)

    async def find_by_key(self, idempotency_key: str) -> Action | None:
        with self._reading():
            row = self._conn.execute(_SELECT_BY_KEY, (idempotency_key,)).fetchone()
        return None if row is None else _action(row)

    async def list(self, filters: ActionFilter | None = None) -> builtins.list[Action]:
        filters = filters or ActionFilter()
        where: builtins.list[str] = []
        params: builtins.list[JSON] = []
        if filters.states:
            where.append(f"state IN ({', '.join('?' * len(filters.states))})")
            params += filters.states
        if filters.tools:
            where.append("(" + " OR ".join("tool = ? OR server || '/' || tool = ?" for _ in filters.tools) + ")")
            params += [value for tool in filters.tools for value in (tool, tool)]
        if filters.since is not None:
            where.append("created_at >= ?")
            params.append(filters.since)
        sql = _SELECT + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY created_at, id"
        if filters.limit is not None:
            sql += " LIMIT ?"
            params.append(filters.limit)
        with self._reading():
            rows = self._conn.execute(sql, params).fetchall()
        return [_action(row) for row in rows]

    async def events(self, action_id: str) -> builtins.list[Event]:
        with self._reading():
            rows = self._conn.execute(
                "SELECT action_id, seq, at, from_state, to_state, detail FROM events WHERE action_id = ? ORDER BY seq",
                (action_id,),
            ).fetchall()
        return [Event(*row) for row in rows]

    async def attempts(self, action_id: str) -> builtins.list[Attempt]:
        with self._reading():
            rows = self._conn.execute(
                "SELECT action_id, number, started_at, ended_at, outcome, error_type, error FROM attempts"
                " WHERE action_id = ? ORDER BY number",
                (action_id,),
            ).fetchall()
        return [Attempt(*row) for row in rows]

    async def recover_dispatching(self, now: float, *, is_orphan: Callable[[Action], bool]) -> builtins.list[Recovered]:
        candidates = await self.list(ActionFilter(states=("proposed", "validated", "dispatching", "failed_retryable")))
        recovered: builtins.list[Recovered] = []
        for action in candidates:
            plan = recovery_state(action)
            if plan == "skip" or not is_orphan(action):
                continue
            detail = "recovery: the executor that owned this action stopped"
            error = (
                "the gateway stopped while the request was in flight; it may or may not have taken effect"
                if plan == "unknown_outcome"
                else "the gateway stopped before the action completed"
            )
            try:
                with self._write as db:
                    moved = self._transition(
                        db, action.id, (action.state,), plan, at=now, detail=detail,
                        fields={"error_type": "gateway_stopped", "error": error},
                    )  # fmt: skip
            except StateConflict:
                continue  # its executor (or another recovery) moved it meanwhile
            recovered.append(Recovered(moved, action.state))
        return recovered

    # --- internals ----------------------------------------------------------------------------------

    def _transition(
        self,
        db: sqlite3.Connection,
        action_id: str,
        from_states: Sequence[State],
        to_state: State,
        *,
        at: float,
        detail: str | None,
        fields: Mapping[str, JSON],
        attempt: Attempt | None = None,
    ) -> Action:
        # Under the write lock (BEGIN IMMEDIATE): the event is written from the row itself, only when its state
        # is one of `from_states` (its seq and from_state are the row's), then the row moves and comes back.
        if not db.execute(_move_event_sql(len(from_states)), (at, to_state, detail, action_id, *from_states)).rowcount:
            row = db.execute(_SELECT_BY_ID, (action_id,)).fetchone()
            if row is None:
                raise UnknownAction(action_id)
            raise StateConflict(_action(row), from_states)
        names = tuple(sorted(fields))
        moved = db.execute(_update_sql(names), (to_state, at, *(fields[name] for name in names), action_id)).fetchone()
        if attempt is not None:
            self._insert_attempt(db, attempt)
        return _action(moved)

    @staticmethod
    def _insert_attempt(db: sqlite3.Connection, attempt: Attempt) -> None:
        db.execute(
            _INSERT_ATTEMPT,
            (attempt.action_id, attempt.number, attempt.started_at, attempt.ended_at, attempt.outcome,
             attempt.error_type, attempt.error),
        )  # fmt: skip

    def _migrate(self) -> None:
        with self._write as db:
            exists = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
            if exists is None:
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                return
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"ledger {self.path} has schema version {version}; this quiver reads up to {SCHEMA_VERSION}"
                )
            if version < SCHEMA_VERSION:  # in the same write transaction: all or nothing
                for step in range(version, SCHEMA_VERSION):
                    for statement in _MIGRATIONS[step]:
                        db.execute(statement)
                db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
                self.upgraded_from = version


def unavailable(path: Path, exc: sqlite3.Error) -> LedgerUnavailable:
    """The ledger error for an SQLite failure of one operation (disk full, I/O, locked): nothing was recorded."""
    return LedgerUnavailable(f"ledger {path}: {exc}")


def _action(row: Sequence[JSON]) -> Action:
    """The action of a row of `_ACTION_COLUMNS`, which are Action's fields in their order."""
    return Action(*row)


class _WriteTransaction:
    """`with ledger._write as db:` one `BEGIN IMMEDIATE` transaction under the ledger's lock, committed
    on a normal exit and rolled back on an exception; every CHECKPOINT_EVERY commits a WAL checkpoint is
    asked of the checkpoint thread (or run here when there is none). A class, not a generator: it runs
    twice per call on the gateway's path."""

    __slots__ = ("_checkpoints", "_commits", "_conn", "_lock", "_path")

    def __init__(
        self, conn: sqlite3.Connection, lock: threading.Lock, checkpoints: Checkpointer | None, path: Path
    ) -> None:
        self._conn, self._lock, self._checkpoints, self._path = conn, lock, checkpoints, path
        self._commits = 0

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:  # the file is locked past the busy timeout, the disk cannot be read
            self._lock.release()
            raise unavailable(self._path, exc) from None
        except BaseException:
            self._lock.release()
            raise
        return self._conn

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if exc_type is not None:
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError | sqlite3.DatabaseError) and not isinstance(
                    exc, sqlite3.IntegrityError | sqlite3.ProgrammingError
                ):
                    raise unavailable(self._path, exc) from None  # a full disk, an I/O error: nothing was recorded
                return
            try:
                self._conn.execute("COMMIT")
            except BaseException as failure:  # an I/O error or a full disk: leave no half-open transaction behind
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                if isinstance(failure, sqlite3.Error):
                    raise unavailable(self._path, failure) from None
                raise
            self._commits += 1
            if self._commits % CHECKPOINT_EVERY == 0 and self._checkpoints and not self._checkpoints.request():
                with contextlib.suppress(sqlite3.Error):  # no checkpoint thread: as SQLite's own would
                    self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            self._lock.release()


@functools.cache
def _creation(then: tuple[State, ...]) -> tuple[str, tuple[tuple[int, tuple[State | None, State]], ...]]:
    """The events insert of a creation along `then` (one statement for all its rows), and its steps."""
    steps = tuple(creation_events(creation_path(then)))
    return _INSERT_EVENTS + ", ".join([_EVENT_VALUES] * len(steps)), steps


@functools.cache
def _update_sql(names: tuple[str, ...]) -> str:
    """The UPDATE of a move that also sets `names` (checked against MUTABLE_FIELDS by the caller), returning
    the moved row."""
    sets = ", ".join(["state = ?", "updated_at = ?", "event_count = event_count + 1", *(f"{n} = ?" for n in names)])
    return f"UPDATE actions SET {sets} WHERE id = ? RETURNING {', '.join(_ACTION_COLUMNS)}"


@functools.cache
def _move_event_sql(from_states: int) -> str:
    """The event of a move, inserted from the action's row when its state is one of `from_states` (count)."""
    return (
        "INSERT INTO events (action_id, seq, at, from_state, to_state, detail)"
        " SELECT id, event_count + 1, ?, state, ?, ? FROM actions"
        f" WHERE id = ? AND state IN ({', '.join('?' * from_states)})"
    )
