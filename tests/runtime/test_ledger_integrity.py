"""A damaged, truncated or foreign ledger file is refused at open with one line naming it and what to do
(exit 2), by `quiver serve` and the `quiver ledger` reads alike, and nothing writes to it; `ledger check`
verifies a file and `ledger doctor` exports what a damaged one still holds (issue 26)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from quiver.runtime.ledger import Action, new_action_id
from quiver.runtime.ledger_sqlite import SqliteLedger

ACTIONS = 2000


def quiver(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiver", *args], capture_output=True, text=True, timeout=120, cwd=cwd,
        stdin=subprocess.DEVNULL, env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ledger of ACTIONS actions (about 1.5 MB), closed (its WAL checkpointed into the file)."""
    path = tmp_path_factory.mktemp("ledger") / "sound.db"

    async def fill() -> None:
        store = SqliteLedger(path)
        for i in range(ACTIONS):
            now = 1_800_000_000.0 + i
            aid = new_action_id(now)
            action = Action(
                    id=aid, idempotency_key=f"k-{i}", session_id="s", requester="r", call_id=None, server="calc",
                    tool="add", tool_sha256="0" * 64, arguments=json.dumps({"a": i, "pad": "x" * 400}),
                    args_sha256="0" * 64, side_effect="read_only", policy="{}", state="proposed", created_at=now,
                    updated_at=now,
            )  # fmt: skip
            await store.create_action(action)
        store.close()

    anyio.run(fill)
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    return path


def copy(sound: Path, tmp_path: Path, name: str = "ledger.db") -> Path:
    target = tmp_path / name
    target.write_bytes(sound.read_bytes())
    return target


def damaged(sound: Path, tmp_path: Path) -> Path:
    """4 KiB of garbage over pages in the middle of the file."""
    path = copy(sound, tmp_path)
    with path.open("r+b") as handle:
        handle.seek((path.stat().st_size // 2) // 4096 * 4096)
        handle.write(bytes([0xAB]) * 4096)
    return path


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_damaged_ledger_is_refused_by_serve_and_by_the_reads_and_left_untouched(
    sound: Path, tmp_path: Path, serve_manifest: Path
) -> None:
    path = damaged(sound, tmp_path)
    before = digest(path)
    for args in (["ledger", "list"], ["ledger", "show", "01ABC"], ["ledger", "export"]):
        done = quiver(*args, "--ledger", str(path))
        assert done.returncode == 2
        line = one_error(done)
        assert f"ledger {path} is damaged" in line and f"quiver ledger doctor --ledger {path}" in line
    served = quiver("serve", str(serve_manifest), "--ledger", str(path))  # stdin is empty: it would serve, then leave
    assert served.returncode == 2
    assert f"ledger {path} is damaged" in one_error(served) and "nothing was run on it" in one_error(served)
    assert digest(path) == before
    assert not Path(f"{path}-wal").exists()


@pytest.mark.parametrize("kind", ["truncated", "not-sqlite", "foreign"])
def test_a_truncated_foreign_or_non_database_file_is_refused_at_open(
    sound: Path, tmp_path: Path, serve_manifest: Path, kind: str
) -> None:
    path = tmp_path / "ledger.db"
    if kind == "truncated":
        path.write_bytes(sound.read_bytes()[: sound.stat().st_size // 3])
        expected = "is damaged"
    elif kind == "not-sqlite":
        path.write_text("id,state\n1,succeeded\n")
        expected = "is not a SQLite database"
    else:
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE users (name TEXT)")
        conn.commit()
        conn.close()
        expected = "is a SQLite database but not a quiver ledger (its tables: users)"
    before = digest(path)
    for args in (["ledger", "list"], ["serve", str(serve_manifest)]):
        done = quiver(*args, "--ledger", str(path))
        assert done.returncode == 2, done.stderr  # was 3 with a traceback
        assert expected in one_error(done) and str(path) in one_error(done)
    assert digest(path) == before


def test_reads_never_write_an_empty_file_stays_empty(tmp_path: Path) -> None:
    path = tmp_path / ".quiver" / "ledger.db"
    path.parent.mkdir()
    path.touch()
    done = quiver("ledger", "list", "--ledger", str(path))
    assert done.returncode == 2
    assert "is an empty file: no action was ever recorded in it" in one_error(done)
    assert path.stat().st_size == 0  # was: the schema written into it
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.db"]  # no -wal, -shm, .gitignore


def test_reads_of_a_sound_ledger_write_nothing(sound: Path, tmp_path: Path) -> None:
    path = copy(sound, tmp_path)
    before, mtime = digest(path), path.stat().st_mtime_ns
    listed = quiver("ledger", "list", "--ledger", str(path), "--format", "json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == ACTIONS
    assert digest(path) == before and path.stat().st_mtime_ns == mtime


def test_ledger_check_and_doctor(sound: Path, tmp_path: Path) -> None:
    good = copy(sound, tmp_path, "good.db")
    checked = quiver("ledger", "check", "--ledger", str(good))
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout == f"ledger {good}: ok (integrity_check), schema version 2, {ACTIONS} action(s)\n"

    path = damaged(sound, tmp_path)
    before = digest(path)
    checked = quiver("ledger", "check", "--ledger", str(path))
    assert checked.returncode == 1
    assert checked.stdout.startswith(f"ledger {path} is damaged: SQLite's integrity_check found")
    started = time.monotonic()
    salvaged = quiver("ledger", "doctor", "--ledger", str(path))
    assert salvaged.returncode == 0, salvaged.stderr
    records = [json.loads(line) for line in salvaged.stdout.splitlines()]
    keys = {r["idempotency_key"] for r in records}
    assert ACTIONS * 0.9 < len(records) < ACTIONS  # the rows on the damaged pages are lost, the rest are read
    assert keys <= {f"k-{i}" for i in range(ACTIONS)} and len(keys) == len(records)
    assert f"{len(records)} action(s) read from {path}" in salvaged.stderr
    assert "the file was not changed" in salvaged.stderr and digest(path) == before
    print(f"doctor read {len(records)} actions in {time.monotonic() - started:.2f} s")
