"""Connections to the PostgreSQL ledger: URL handling (normalising, redacting passwords), `connect`, and
the small pool of autocommit connections `PostgresLedger` runs its work on (see `ledger_postgres`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg

from quiver.runtime.ledger import LedgerError, LedgerUnavailable

__all__ = ["DEFAULT_CONNECT_TIMEOUT_S", "LedgerUnavailable", "connect", "normalize_url", "redact"]

DEFAULT_CONNECT_TIMEOUT_S: Final = 10


def normalize_url(url: str) -> str:
    """A libpq URL: `postgresql+psycopg://` (SQLAlchemy style) and `postgres://` become `postgresql://`."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() in ("postgres", "postgresql", "postgresql+psycopg", "postgresql+psycopg2"):
        return f"postgresql://{rest}"
    return url


def redact(url: str) -> str:
    """The URL without its password (in the user part or a `password=` parameter), for messages."""
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return "postgresql://…"
    if parts.password is not None:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if any(name == "password" for name, _ in query):
        shown = [(name, "***" if name == "password" else value) for name, value in query]
        parts = parts._replace(query=urlencode(shown, safe="/*"))
    return urlunsplit(parts)


def connect(url: str, *, connect_timeout_s: int = DEFAULT_CONNECT_TIMEOUT_S) -> psycopg.Connection[tuple[Any, ...]]:
    """An autocommit connection; LedgerUnavailable when the server cannot be reached."""
    try:
        return psycopg.connect(
            normalize_url(url), autocommit=True, connect_timeout=connect_timeout_s, application_name="quiver-ledger"
        )
    except psycopg.OperationalError as exc:
        raise LedgerUnavailable(f"cannot connect to the ledger database {redact(url)}: {_first_line(exc)}") from None


class _Pool:
    """At most `size` autocommit connections, each used by one thread at a time."""

    def __init__(self, url: str, size: int, connect_timeout_s: int) -> None:
        self._url = url
        self._connect_timeout_s = connect_timeout_s
        self._idle: list[psycopg.Connection[tuple[Any, ...]]] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(size)
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        with self._slots:
            with self._lock:
                if self._closed:
                    raise LedgerError("the ledger store is closed")
                conn = self._idle.pop() if self._idle else None
            if conn is None or conn.closed or conn.broken:
                conn = connect(self._url, connect_timeout_s=self._connect_timeout_s)
            try:
                yield conn
            except BaseException:
                if conn.broken or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    conn.close()
                    raise
                self._release(conn)
                raise
            self._release(conn)

    def _release(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        with self._lock:
            if self._closed:
                conn.close()
            else:
                self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
