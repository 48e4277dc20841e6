"""`quiver ledger check` and `quiver ledger doctor` for a SQLite ledger: verify the file, and read what a
damaged one still holds. Neither writes to the file (it is opened read-only).

`check` runs SQLite's full `integrity_check` (every page, every index against its table) besides the
header and the schema. `salvage` reads the actions table row by row in rowid order; a row or a page that
cannot be read is skipped by probing further rowids (doubling the step), so one damaged page costs the
rows on it, not the rest of the file. Each action comes with the attempts and events that can be read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from quiver.model import JSON
from quiver.runtime._sqlite_integrity import damage, file_state, foreign
from quiver.runtime.ledger import Action, Attempt, Event, LedgerDamaged, LedgerUnavailable

_COLUMNS = (
    "id, idempotency_key, session_id, requester, call_id, server, tool, tool_sha256, arguments, args_sha256,"
    " side_effect, policy, state, created_at, updated_at, attempts, approval, approval_ref, result, error_type,"
    " error, owner"
)
MAX_SKIP = 1 << 40
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class CheckReport:
    path: Path
    problems: tuple[str, ...]  # empty: sound
    schema_version: int | None
    actions: int | None


def _connect(path: Path) -> sqlite3.Connection:
    state = file_state(path)
    if state != "sqlite":
        raise LedgerDamaged(f"ledger {path} is {'missing' if state == 'absent' else 'an empty file'}: nothing to check")
    try:
        return sqlite3.connect(f"file:{path.absolute().as_posix()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise LedgerUnavailable(f"cannot open ledger {path}: {exc}") from None


def check(path: Path) -> CheckReport:
    """The full integrity check of the ledger file at `path` (LedgerDamaged: not a SQLite file or not ours)."""
    conn = _connect(path)
    try:
        problem = damage(conn, path, full=True)
        if problem is None:
            other = foreign(conn, path)
            if other is not None:
                raise other
        version = _scalar(conn, "SELECT value FROM meta WHERE key = 'schema_version'")
        count = _scalar(conn, "SELECT COUNT(*) FROM actions")
        problems = tuple(p.strip() for p in problem.split(";") if p.strip()) if problem else ()
        return CheckReport(
            path, problems, int(version) if version is not None else None, int(count) if count is not None else None
        )
    finally:
        conn.close()


def _scalar(conn: sqlite3.Connection, sql: str) -> JSON:
    try:
        row = conn.execute(sql).fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if row is None else row[0]


@dataclass(slots=True)
class Salvage:
    """What `salvage` read: counts, filled in as the records are yielded."""

    actions: int = 0
    skipped: int = 0  # read errors stepped over (rows, pages, or an action's attempts/events)


def salvage(path: Path, tally: Salvage) -> Iterator[tuple[Action, list[Attempt] | None, list[Event] | None]]:
    """Every action that can still be read, oldest rowid first, with its attempts and events (None where they
    could not be read)."""
    conn = _connect(path)
    try:
        last, step = 0, 1
        while True:
            try:
                row = conn.execute(
                    f"SELECT rowid, {_COLUMNS} FROM actions WHERE rowid >= ? ORDER BY rowid LIMIT 1", (last + step,)
                ).fetchone()
            except sqlite3.DatabaseError:
                tally.skipped += 1
                step *= 2
                if step > MAX_SKIP:
                    return
                continue
            if row is None:
                return
            last, step = int(row[0]), 1
            try:
                action = Action(*row[1:])
            except (TypeError, ValueError):
                tally.skipped += 1
                continue
            tally.actions += 1
            yield (
                action,
                _rows(conn, tally, Attempt, "attempts", action.id),
                _rows(conn, tally, Event, "events", action.id),
            )
    finally:
        conn.close()


def _rows(
    conn: sqlite3.Connection, tally: Salvage, kind: Callable[..., _T], table: str, action_id: str
) -> list[_T] | None:
    columns = (
        "action_id, number, started_at, ended_at, outcome, error_type, error"
        if table == "attempts"
        else "action_id, seq, at, from_state, to_state, detail"
    )
    order = "number" if table == "attempts" else "seq"
    try:
        rows = conn.execute(f"SELECT {columns} FROM {table} WHERE action_id = ? ORDER BY {order}", (action_id,))
        return [kind(*row) for row in rows.fetchall()]
    except sqlite3.DatabaseError:
        tally.skipped += 1
        return None
