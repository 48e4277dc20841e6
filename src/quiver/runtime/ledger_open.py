"""Which ledger store a path or URL names, opening it, and `quiver ledger migrate`.

    .quiver/ledger.db, /var/lib/quiver/ledger.db     SQLite file (relative paths: under the project root)
    sqlite:///relative.db, sqlite:////absolute.db    SQLite, SQLAlchemy style
    postgresql://user:pass@host:5432/db?sslmode=...  PostgreSQL (also postgres://, postgresql+psycopg://);
                                                     any libpq URL parameter works

`run_recovery_sweeps` is what each replica runs in the background on a shared ledger: a dead replica's
actions are settled by the survivors once their lease expires (start-up recovery alone would wait for
a restart).

The value comes from `--ledger`, else `QUIVER_LEDGER_URL`, else `ledger` in the project config
(`resolve_ledger`). A SQLite file is created on first use; a PostgreSQL database gets its schema from
`quiver ledger migrate` (`migrate`), which every replica may run at start: it is idempotent and
serialised by the database.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn

import anyio

from quiver.config import load_config
from quiver.errors import ConfigError, InputError
from quiver.extras import require
from quiver.runtime.ledger import Action, LedgerError, LedgerStore
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.sources.files import ignore_in

if TYPE_CHECKING:
    from quiver.runtime.executor import LedgerExecutor, RecoveryReport
    from quiver.runtime.protocol import Dispatch

logger = logging.getLogger(__name__)

ENV_URL = "QUIVER_LEDGER_URL"
DEFAULT_SWEEP_INTERVAL_S = 5.0
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2")


@dataclass(frozen=True, slots=True)
class LedgerTarget:
    """A resolved ledger location: an absolute SQLite path, or a PostgreSQL URL (normalised)."""

    kind: Literal["sqlite", "postgresql"]
    location: str

    @property
    def path(self) -> Path:
        if self.kind != "sqlite":
            raise ValueError(f"a {self.kind} ledger has no file path")
        return Path(self.location)

    def display(self) -> str:
        """For messages: the path, or the URL without its password."""
        if self.kind == "sqlite":
            return self.location
        from quiver.runtime.ledger_postgres import redact

        return redact(self.location)


def parse_ledger(value: str, root: Path) -> LedgerTarget:
    """A path or URL -> LedgerTarget; relative SQLite paths are under `root`. ConfigError on other schemes."""
    value = value.strip()
    if not value:
        raise ConfigError("the ledger location is empty", hint="a path, sqlite:///path.db or postgresql://...")
    if "://" in value:
        scheme, _, rest = value.partition("://")
        if scheme.lower() in POSTGRES_SCHEMES:
            require("postgres", "a PostgreSQL ledger")  # one line naming the extra, not psycopg's ImportError
            from quiver.runtime.ledger_postgres import normalize_url

            return LedgerTarget("postgresql", normalize_url(value))
        if scheme.lower() != "sqlite":
            raise ConfigError(
                f"ledger URL scheme `{scheme}` is not supported",
                hint="use a path, sqlite:///path.db or postgresql://...",
            )
        value = rest[1:] if rest.startswith("/") else rest  # SQLAlchemy style: sqlite:////abs, sqlite:///rel
    path = Path(value).expanduser()
    return LedgerTarget("sqlite", str(path if path.is_absolute() else root / path))


def resolve_ledger(root: Path, ledger: str | None, environ: Mapping[str, str]) -> LedgerTarget:
    """Where the ledger is: `ledger` (--ledger), else QUIVER_LEDGER_URL, else the config's `ledger`."""
    value = ledger or environ.get(ENV_URL)
    if not value:
        value = load_config(root).ledger
    return parse_ledger(value, root)


def open_ledger(
    target: LedgerTarget | str,
    *,
    root: Path | None = None,
    migrate: bool = False,
    lease_margin_s: float | None = None,
    pool_size: int | None = None,
    readonly: bool = False,
) -> LedgerStore:
    """The store for `target` (a LedgerTarget, or a path/URL resolved against `root`, default the cwd).

    SQLite files are created (and their schema set up) on open. A PostgreSQL database must have been
    migrated unless `migrate` is true; LedgerNotMigrated / SchemaVersionError / LedgerUnavailable otherwise.
    `lease_margin_s` and `pool_size` apply to PostgreSQL only. `readonly` (the CLI's reads) opens a SQLite
    file without writing anything: no schema, no migration, no `.gitignore`."""
    if isinstance(target, str):
        target = parse_ledger(target, root or Path.cwd())
    if target.kind == "sqlite":
        store = SqliteLedger(target.location, readonly=readonly)
        if not readonly:
            keep_out_of_git(target.path)
        return store
    from quiver.runtime.ledger_postgres import DEFAULT_LEASE_MARGIN_S, DEFAULT_POOL_SIZE, PostgresLedger

    return PostgresLedger(
        target.location,
        migrate=migrate,
        lease_margin_s=DEFAULT_LEASE_MARGIN_S if lease_margin_s is None else lease_margin_s,
        pool_size=DEFAULT_POOL_SIZE if pool_size is None else pool_size,
    )


def keep_out_of_git(path: Path) -> None:
    """A SQLite ledger in a `.quiver/` folder (the default `.quiver/ledger.db`) holds call arguments: its
    files (the database, `-wal`, `-shm`) are git-ignored there; `.quiver/routes.yaml` stays committable."""

    if path.parent.name == ".quiver":
        ignore_in(path.parent, f"{path.name}*", "the execution ledger (it holds call arguments) stays out of git")


def migrate(target: LedgerTarget | str, *, root: Path | None = None) -> str:
    """Create or upgrade the ledger's schema; returns what was done, one line. Idempotent.

    Raises InputError when the database cannot be reached or was written by a newer quiver."""
    if isinstance(target, str):
        target = parse_ledger(target, root or Path.cwd())
    where = target.display()
    if target.kind == "sqlite":
        existed = target.path.is_file()
        try:
            store = SqliteLedger(target.location)
        except LedgerError as exc:  # its message names the file
            raise InputError(str(exc)) from None
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot migrate ledger {where}: {exc}") from None
        keep_out_of_git(target.path)
        try:
            version, upgraded_from = store.schema_version(), store.upgraded_from
        finally:
            store.close()
        if upgraded_from is not None:
            return f"upgraded ledger {where} from schema version {upgraded_from} to {version}"
        if existed:
            return f"ledger {where} is up to date (schema version {version})"
        return f"created ledger {where} (schema version {version})"
    from quiver.runtime.ledger_postgres import migrate_schema

    try:
        before, after = migrate_schema(target.location)
    except LedgerError as exc:  # its message names the database
        raise InputError(str(exc)) from None
    if before == after:
        return f"ledger {where} is up to date (schema version {after})"
    if before == 0:
        return f"created the ledger schema in {where} (schema version {after})"
    return f"upgraded ledger {where} from schema version {before} to {after}"


async def run_recovery_sweeps(
    executor: LedgerExecutor,
    reconcile_dispatch: Dispatch | None = None,
    *,
    interval_s: float = DEFAULT_SWEEP_INTERVAL_S,
    is_orphan: Callable[[Action], bool] | None = None,
    on_report: Callable[[RecoveryReport], None] | None = None,
) -> NoReturn:
    """Run `executor.recover` every `interval_s` until cancelled: on a shared PostgreSQL ledger, the
    actions of a replica that died are settled by whichever survivor's sweep finds their lease expired
    first (each exactly once). A sweep that fails because the database is unreachable is logged and
    retried at the next interval. `reconcile_dispatch`, when given, also asks each `unknown_outcome`
    action's reconcile tool (at most one probe per such action per interval, less often while its
    answers settle nothing: `LedgerExecutor.recover`'s backoff); only a confirmation settles one here."""
    failing = False  # one log line per outage, not one per sweep
    while True:
        try:
            report = await executor.recover(reconcile_dispatch, is_orphan=is_orphan, settle_negative=False)
        except LedgerError as exc:
            if not failing:
                logger.warning(
                    "recovery sweep failed: %s (retried every %g s; logged again once it works)", exc, interval_s
                )
            failing = True
        else:
            if failing:
                logger.warning("recovery sweeps work again")
            failing = False
            if report.recovered or report.reconciled:
                logger.warning(
                    "recovery sweep: settled %d orphaned action(s), reconciled %d",
                    len(report.recovered),
                    len(report.reconciled),
                )
            if on_report is not None:
                on_report(report)
        await anyio.sleep(interval_s)
