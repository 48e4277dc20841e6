"""The warm-compile state file: its stamps tell an edited output apart, and what is not its own is no state."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from quiver.sources.compile_state import (
    RACY_COARSE_NS,
    RACY_NS,
    AgentEntry,
    CompileState,
    Report,
    Stamp,
    _racy,
    is_current,
    read_state,
    stamp_file,
    write_state,
)


def test_a_file_stamped_just_after_it_was_written_carries_its_sha256(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"{}\n")
    info = os.stat(path)
    recent = stamp_file(path, max(info.st_mtime_ns, info.st_ctime_ns) + 1)
    assert recent is not None and recent.sha256 == hashlib.sha256(b"{}\n").hexdigest()
    later = stamp_file(path, max(info.st_mtime_ns, info.st_ctime_ns) + RACY_NS + 1)
    assert later is not None and later.sha256 is None
    assert (later.size, later.mtime_ns, later.ino) == (3, info.st_mtime_ns, info.st_ino)
    assert stamp_file(tmp_path / "missing.json", time.time_ns()) is None


def test_whole_second_times_are_racy_for_longer() -> None:
    coarse = Stamp(1, 5_000_000_000, 5_000_000_000, 1, 1)
    fine = Stamp(1, 5_000_000_001, 5_000_000_001, 1, 1)
    now = 5_000_000_000 + RACY_NS + 10
    assert _racy(coarse, now) and not _racy(fine, now)
    assert not _racy(coarse, 5_000_000_000 + RACY_COARSE_NS + 1)


def test_a_stamp_with_a_sha256_sees_an_edit_its_times_cannot(tmp_path: Path) -> None:
    """An edit within the clock tick of the write keeps size and times: only the bytes tell."""
    path = tmp_path / "a.json"
    path.write_bytes(b'{"a": 1}\n')
    path.write_bytes(b'{"a": 2}\n')  # the same size
    info = os.stat(path)
    now = Stamp(info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
    assert is_current(path, now)  # times alone: the edit is not seen
    assert not is_current(path, dataclasses.replace(now, sha256=hashlib.sha256(b'{"a": 1}\n').hexdigest()))
    assert is_current(path, dataclasses.replace(now, sha256=hashlib.sha256(b'{"a": 2}\n').hexdigest()))
    assert not is_current(path, dataclasses.replace(now, ctime_ns=now.ctime_ns - 1))
    time.sleep(0.05)  # past the clock tick of the write
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # times set back as they were: the change time moves
    assert os.stat(path).st_mtime_ns == now.mtime_ns and not is_current(path, now)
    path.unlink()
    assert not is_current(path, now)


STATE = CompileState(
    "p" * 64,
    Report("quiet=True format=text", ("warning: x",), "", False, 1),
    {"ops": AgentEntry("k" * 64, {"id": "ops", "budget": {"saving_ratio": 0.1234}})},
    {"build/quiver/ops.json": Stamp(10, 2, 3, 4, 5), "build/quiver/index.json": Stamp(1, 2, 3, 4, 5, "s" * 64)},
)


def test_the_state_reads_back_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    path = tmp_path / ".quiver/cache/compile.json"
    write_state(path, STATE)
    assert read_state(path) == STATE
    assert (tmp_path / ".quiver/cache/.gitignore").is_file()


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(format=0),
        lambda d: d.update(project=1),
        lambda d: d["report"].update(code=True),
        lambda d: d["report"].update(messages="one"),
        lambda d: d["agents"]["ops"].pop("key"),
        lambda d: d["outputs"]["build/quiver/ops.json"].pop(),
        lambda d: d["outputs"]["build/quiver/ops.json"].__setitem__(0, "10"),
        lambda d: d.pop("outputs"),
    ],
)
def test_a_state_quiver_did_not_write_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: object) -> None:
    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    path = tmp_path / "compile.json"
    write_state(path, STATE)
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))
    assert read_state(path) is None
    path.write_text("{not json")
    assert read_state(path) is None


def test_no_cache_writes_no_state(tmp_path: Path) -> None:
    assert os.environ.get("QUIVER_NO_CACHE")  # the suite's default
    write_state(tmp_path / "compile.json", STATE)
    assert not (tmp_path / "compile.json").exists()
