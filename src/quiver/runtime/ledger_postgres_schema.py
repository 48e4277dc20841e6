"""The PostgreSQL ledger's schema: the versioned scripts in `MIGRATIONS`, the version kept in
`quiver_meta`, and `migrate_schema` (`quiver ledger migrate`), which applies them under an advisory lock."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import psycopg

from quiver.runtime.ledger import STATES, LedgerError, SchemaVersionError
from quiver.runtime.ledger_postgres_pool import (
    DEFAULT_CONNECT_TIMEOUT_S,
    LedgerUnavailable,
    _first_line,
    connect,
    redact,
)

SCHEMA_VERSION: Final = 1
_MIGRATE_LOCK: Final = 0x71756976_6572  # pg_advisory_xact_lock key: "quiver"


def _literals(states: Sequence[str]) -> str:
    """SQL literals of state names (a closed set of identifiers: nothing to escape)."""
    assert set(states) <= set(STATES)
    return ", ".join(f"'{state}'" for state in states)


_STATE_CHECK = _literals(STATES)

# Ordered schema scripts: MIGRATIONS[n] takes a database from version n to n + 1. Never edit a shipped
# script; append a new one (and bump SCHEMA_VERSION) instead.
MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        f"""CREATE TABLE quiver_actions (
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
            state TEXT NOT NULL CHECK (state IN ({_STATE_CHECK})),
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            approval TEXT CHECK (approval IN ('pending', 'approved', 'declined')),
            approval_ref TEXT,
            result TEXT,
            error_type TEXT,
            error TEXT,
            owner TEXT,
            event_count INTEGER NOT NULL DEFAULT 1,
            lease_s DOUBLE PRECISION NOT NULL,
            backoff_lease_s DOUBLE PRECISION NOT NULL,
            lease_expires_at DOUBLE PRECISION
        )""",
        "CREATE INDEX quiver_actions_created ON quiver_actions (created_at, id)",
        # the few unsettled actions (recovery sweeps, `ledger list --state unknown_outcome`); the settled
        # majority is not indexed by state
        "CREATE INDEX quiver_actions_open ON quiver_actions (state, created_at)"
        " WHERE state NOT IN ('succeeded', 'failed_final')",
        """CREATE TABLE quiver_events (
            action_id TEXT NOT NULL REFERENCES quiver_actions (id),
            seq INTEGER NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            from_state TEXT,
            to_state TEXT NOT NULL,
            detail TEXT,
            PRIMARY KEY (action_id, seq)
        )""",
        """CREATE TABLE quiver_attempts (
            action_id TEXT NOT NULL REFERENCES quiver_actions (id),
            number INTEGER NOT NULL,
            started_at DOUBLE PRECISION NOT NULL,
            ended_at DOUBLE PRECISION NOT NULL,
            outcome TEXT NOT NULL,
            error_type TEXT,
            error TEXT,
            PRIMARY KEY (action_id, number)
        )""",
    ),
)
assert len(MIGRATIONS) == SCHEMA_VERSION


class LedgerNotMigrated(LedgerError):
    """The database has no ledger schema yet, or an older one: run `quiver ledger migrate`."""


def schema_version_of(conn: psycopg.Connection[tuple[Any, ...]]) -> int:
    """The database's ledger schema version; 0 when it has none."""
    exists = conn.execute("SELECT to_regclass('quiver_meta') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT value FROM quiver_meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate_schema(url: str, *, connect_timeout_s: int = DEFAULT_CONNECT_TIMEOUT_S) -> tuple[int, int]:
    """Create or upgrade the ledger schema; returns (version before, version after). Idempotent, and safe
    when several replicas run it at once (an advisory lock serialises them; DDL is transactional).
    Raises SchemaVersionError when the database is newer than this quiver."""
    with connect(url, connect_timeout_s=connect_timeout_s) as conn:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS quiver_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                before = schema_version_of(conn)
                if before > SCHEMA_VERSION:
                    raise SchemaVersionError(
                        f"ledger database {redact(url)} has schema version {before}; "
                        f"this quiver reads up to {SCHEMA_VERSION}"
                    )
                for script in MIGRATIONS[before:]:
                    for statement in script:
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO quiver_meta (key, value) VALUES ('schema_version', %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (str(SCHEMA_VERSION),),
                )
        except psycopg.OperationalError as exc:
            raise LedgerUnavailable(f"ledger database {redact(url)}: {_first_line(exc)}") from None
    return before, SCHEMA_VERSION
