"""A throw-away PostgreSQL server for the ledger tests, started by the test suite itself.

`initdb` + `postgres` from /usr/lib/postgresql/*/bin (the newest), in a temp directory owned by the
`postgres` system user when running as root (PostgreSQL refuses to run as root), listening on a free
127.0.0.1 port and on a unix socket in that directory, with fsync off (`durable=True`, for
bench/ledger.py, keeps PostgreSQL's defaults). Readiness is polled (bounded); teardown is an immediate
shutdown and rmtree. One server per test session, whichever test module asks first
(`PgServer.shared()`); each test gets a fresh schema of one test database (`pg_url`: its URL sets the
`search_path`), or a database of its own (`create_database`). Missing binaries fail the test, naming
the package to install; nothing is skipped.

Test modules declare their fixtures with the bodies here (`session_server`, `fresh_database`), so one
server serves every module of the session.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

READY_TIMEOUT_S = 30.0
BINARIES = "/usr/lib/postgresql/*/bin"
INSTALL_HINT = "install the PostgreSQL server binaries: `apt-get install postgresql` (Debian/Ubuntu)"


def find_bin_dir() -> Path:
    """The newest /usr/lib/postgresql/N/bin holding initdb and postgres; pytest.fail when there is none."""
    candidates = [
        Path(d) for d in glob.glob(BINARIES) if (Path(d) / "initdb").is_file() and (Path(d) / "postgres").is_file()
    ]
    if not candidates:
        pytest.fail(f"no PostgreSQL server binaries in {BINARIES}: {INSTALL_HINT}", pytrace=False)

    def version(path: Path) -> tuple[int, ...]:
        digits = path.parent.name.split(".")
        return tuple(int(d) for d in digits if d.isdigit())

    return max(candidates, key=version)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PgServer:
    """One postgres process; `url(db)` for TCP, `socket_url(db)` for the unix socket."""

    _shared: PgServer | None = None

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable  # fsync and synchronous commits as in production (benchmarks); else off (tests)
        self.bin_dir = find_bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="quiver-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "postgres"
        self.proc: subprocess.Popen[bytes] | None = None
        self._demote: Callable[[], None] | None = None
        self._counter = itertools.count(1)
        self._test_db: str | None = None
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError:
                pytest.fail(
                    f"running as root and there is no `postgres` system user to run the server as: {INSTALL_HINT}",
                    pytrace=False,
                )
            uid, gid = account.pw_uid, account.pw_gid
            os.chown(self.root, uid, gid)

            def demote() -> None:  # in the child, before exec: PostgreSQL refuses to run as root
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)

            self._demote = demote
        os.chmod(self.root, 0o700)

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def start(self) -> None:
        initdb = subprocess.run(
            [str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust", "--encoding=UTF8",
             "--locale=C", "--no-sync", "--no-instructions"],
            preexec_fn=self._demote, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed ({initdb.returncode}): {initdb.stderr or initdb.stdout}")
        settings = {
            "listen_addresses": "127.0.0.1", "port": str(self.port), "unix_socket_directories": str(self.root),
            "max_connections": "200", "shared_buffers": "128MB" if self.durable else "32MB",
            "log_min_messages": "warning",
        }  # fmt: skip
        if not self.durable:
            settings.update(fsync="off", synchronous_commit="off", full_page_writes="off")
        args = [str(self.bin_dir / "postgres"), "-D", str(self.data)]
        for name, value in settings.items():
            args += ["-c", f"{name}={value}"]
        self._args = args
        atexit.register(self.stop)  # a crashed or interrupted session still stops its server
        self.resume()

    def resume(self) -> None:
        """Start the postmaster (again) on the same data directory and port, and wait until it answers."""
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                self._args, preexec_fn=self._demote, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,
            )  # fmt: skip
        self._wait_ready()

    def halt(self) -> None:
        """Stop the postmaster as a crash or an operator's immediate restart does (SIGQUIT), keeping its data."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            self.proc.wait(timeout=30)

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        delay = 0.01
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"postgres not ready within {READY_TIMEOUT_S:g}s") from None
            time.sleep(delay)  # polling interval, not a fixed wait
            delay = min(delay * 2, 0.2)

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str) -> str:
        return f"postgresql://{self.user}@/{database}?host={self.root}&port={self.port}"

    def create_database(self) -> str:
        """A fresh, empty database; returns its name."""
        name = f"quiver_test_{next(self._counter)}"
        with psycopg.connect(self.socket_url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return name

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.socket_url("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())

    def create_schema(self) -> str:
        """A URL whose connections work in a fresh, empty schema of the shared test database (its
        `search_path`, set by the URL's `options`): far cheaper than a database per test."""
        if self._test_db is None:
            self._test_db = self.create_database()
        name = f"t{next(self._counter)}"
        with psycopg.connect(self.socket_url(self._test_db), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}".encode())
        return f"{self.socket_url(self._test_db)}&options=-csearch_path%3D{name}"

    def drop_schema(self, url: str) -> None:
        assert self._test_db is not None
        name = url.rpartition("%3D")[2]
        with psycopg.connect(self.socket_url(self._test_db), autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE".encode())

    def stop(self) -> None:
        """Immediate shutdown (SIGQUIT to the postmaster), then remove the directory. Idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
        shutil.rmtree(self.root, ignore_errors=True)
        if PgServer._shared is self:
            PgServer._shared = None

    @classmethod
    def shared(cls) -> PgServer:
        """The session's server, started on first use (a port taken meanwhile by someone else: try another)."""
        for attempt in range(3):
            if cls._shared is not None:
                break
            server = cls()
            try:
                server.start()
            except RuntimeError:
                server.stop()
                if attempt == 2:
                    raise
                continue
            cls._shared = server
        assert cls._shared is not None
        return cls._shared


def session_server() -> Iterator[PgServer]:
    """Body of a session-scoped `pg_server` fixture: the shared server, stopped at the end of the session.

    @pytest.fixture(scope="session")
    def pg_server() -> Iterator[PgServer]:
        yield from session_server()
    """
    server = PgServer.shared()
    yield server
    server.stop()


def fresh_database(server: PgServer) -> Iterator[str]:
    """Body of a `pg_url` fixture: the URL of a fresh, empty schema on `server` (unix socket), dropped afterwards."""
    url = server.create_schema()
    yield url
    server.drop_schema(url)
