"""Is this file a sound quiver ledger? Checked when the SQLite store opens it, before anything runs on it.

Three checks, cheapest first: the file's first 16 bytes are SQLite's header (`file_state`); SQLite's
`PRAGMA quick_check` finds no damage (`damage`: it reads every page but skips the index-to-table
cross-checks of `integrity_check`; 20-25 ms for 2 MB on a loaded 2-core machine); the file holds
quiver's `meta` table with a schema version, or nothing at all (`foreign`). Each failure is a
`LedgerDamaged` whose one-line message names the file and says what to do; `quiver ledger check` runs
the full `integrity_check`, and `quiver ledger doctor` exports what can still be read.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from quiver.runtime.ledger import LedgerDamaged, LedgerUnavailable

SQLITE_HEADER = b"SQLite format 3\x00"
_AFTER_DAMAGE = (
    "nothing was run on it; stop every gateway using it, copy it aside, export what can be read with "
    "`quiver ledger doctor --ledger {path}`, then move it away (quiver serve starts a new one)"
)


def file_state(path: Path) -> str:
    """`absent`, `empty` (0 bytes: SQLite's new database) or `sqlite`; LedgerDamaged for anything else."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return "absent"
    except IsADirectoryError:
        raise LedgerDamaged(f"ledger {path} is a directory, not a SQLite file; point --ledger at a file") from None
    except OSError as exc:
        raise LedgerUnavailable(f"cannot read ledger {path}: {exc.strerror or exc}") from None
    if not head:
        return "empty"
    if head != SQLITE_HEADER:
        raise LedgerDamaged(
            f"ledger {path} is not a SQLite database (it does not start with SQLite's header): it is not a quiver "
            "ledger, or it was overwritten; point --ledger / QUIVER_LEDGER_URL at the ledger, or move this file away"
        )
    return "sqlite"


def damage(conn: sqlite3.Connection, path: Path, *, full: bool = False) -> str | None:
    """The first problem SQLite's `quick_check` (`integrity_check` with `full`) reports, else None."""
    pragma = "integrity_check" if full else "quick_check"
    try:
        rows = conn.execute(f"PRAGMA {pragma}(20)").fetchall()
    except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
        return str(exc)
    problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
    return "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "") if problems else None


def refuse_damaged(path: Path, problem: str) -> LedgerDamaged:
    return LedgerDamaged(f"ledger {path} is damaged (SQLite: {problem}): " + _AFTER_DAMAGE.format(path=path))


def foreign(conn: sqlite3.Connection, path: Path) -> LedgerDamaged | None:
    """A database with tables but no quiver `meta` table holding a schema version is someone else's file."""
    tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return None
    version = None
    if "meta" in tables:
        try:
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError:
            version = None
    if version is not None and "actions" in tables:
        return None
    shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    return LedgerDamaged(
        f"ledger {path} is a SQLite database but not a quiver ledger (its tables: {shown}); quiver will not write "
        "into it: point --ledger / QUIVER_LEDGER_URL at the ledger, or choose a new file"
    )
