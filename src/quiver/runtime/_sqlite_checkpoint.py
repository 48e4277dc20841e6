"""WAL checkpoints of the SQLite ledger in a daemon thread on its own connection, so no call waits for one."""

from __future__ import annotations

import contextlib
import sqlite3
import threading

__all__ = ["RESTART_FRAMES", "Checkpointer"]

RESTART_FRAMES = 4096  # WAL frames (about 4 MiB of 1 KiB pages) after which a checkpoint makes the WAL restart


class Checkpointer:
    """WAL checkpoints in a daemon thread on its own connection, so no call waits for one.

    SQLite's automatic checkpoint runs inside the commit that crosses its threshold: that caller copies
    the WAL into the database and fsyncs both (2-3 ms on this class of machine, every ~60 ledgered calls:
    the gateway's p99). A PASSIVE checkpoint never blocks writers (they go on appending to the WAL), and
    the thread waits in SQLite with the GIL released. Durability is unchanged: a commit is in the WAL
    before it returns, whoever checkpoints it later. The last connection to close checkpoints what is left.

    Frames a writer appends during a pass are left unbackfilled, and SQLite restarts the WAL from its
    start only when a write begins on a fully backfilled one: under steady calls every pass overlapped
    some writes, the WAL never restarted and kept every frame ever written while serving (132 MB after
    6,000 calls: bench/wal.py). So once the WAL holds RESTART_FRAMES frames, a pass is followed by a second one under
    `writer_lock` (held by the writing connection across each of its transactions): it copies only the
    frames the first one missed, no write of this process can start during it, and the next write
    restarts the WAL. A write may wait for that pass (a few frames and their fsyncs), once every few
    hundred calls rather than at every checkpoint. A writer in another process can still overlap it; a
    later pass catches up."""

    def __init__(self, path: str, busy_timeout_ms: int, writer_lock: threading.Lock) -> None:
        self._path, self._busy_timeout_ms, self._writer_lock = path, busy_timeout_ms, writer_lock
        self._wanted = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def request(self) -> bool:
        """Ask for a checkpoint; False when the thread is gone (the caller checkpoints itself)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="quiver-ledger-checkpoint", daemon=True)
            self._thread.start()
        if not self._thread.is_alive() and not self._stopping:
            return False
        self._wanted.set()
        return True

    def stop(self) -> None:
        self._stopping = True
        self._wanted.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, timeout=self._busy_timeout_ms / 1000, isolation_level=None)
        except sqlite3.Error:
            return  # request() sees the thread gone: the writer checkpoints inline
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            while True:
                self._wanted.wait()
                self._wanted.clear()
                if self._stopping:
                    return
                # busy or closing: the next request (or the last connection's close) checkpoints
                with contextlib.suppress(sqlite3.Error):
                    _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if frames >= RESTART_FRAMES:  # -1: another connection was checkpointing
                        with self._writer_lock:
                            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            conn.close()
