"""The warm-compile state (`.quiver/cache/compile.json`): what the last `quiver compile` wrote, from which
inputs, so that a compile of the same inputs need not build the manifests again (quiver.commands._warm).

It holds the digest of the project's inputs, each agent's key and index.json entry, what the run reported,
and a `Stamp` of every output file. Its one reader and writer; git-ignored; a state that is missing, of
another format or not what this module writes is no state (the compile builds everything).
`QUIVER_NO_CACHE=1` stops its use altogether.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from quiver.model import JSON
from quiver.sources.files import write_cache

STATE_FILE = ".quiver/cache/compile.json"
FORMAT = 1
# A file's times tell a later edit apart only once the clock has moved past the time they record: a file
# stamped less than this before the state was recorded is checked by its sha256 as well ("racy git").
# Filesystems that keep whole seconds (ext3, HFS+, FAT's two) get the wider margin.
RACY_NS = 100_000_000
RACY_COARSE_NS = 3_000_000_000
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Stamp:
    """An output file as the last compile left it: `os.stat`'s size, times, inode and device, and the sha256
    of its bytes when its times were too recent to tell a later edit (see RACY_NS)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    dev: int
    sha256: str | None = None

    def to_json(self) -> list[JSON]:
        return [self.size, self.mtime_ns, self.ctime_ns, self.ino, self.dev, self.sha256]


def stamp_file(path: Path, now_ns: int) -> Stamp | None:
    """The file's stamp as of `now_ns` (`time.time_ns()` once the outputs are written), None when missing."""
    try:
        info = os.stat(path)
        stamp = Stamp(info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
        return dataclasses.replace(stamp, sha256=_sha256(path)) if _racy(stamp, now_ns) else stamp
    except OSError:
        return None


def _racy(stamp: Stamp, now_ns: int) -> bool:
    coarse = stamp.mtime_ns % 1_000_000_000 == 0 and stamp.ctime_ns % 1_000_000_000 == 0
    return max(stamp.mtime_ns, stamp.ctime_ns) >= now_ns - (RACY_COARSE_NS if coarse else RACY_NS)


def is_current(path: Path, stamp: Stamp) -> bool:
    """Whether the file is still the one `stamp` describes: same size, times, inode and device (any write,
    rename or `touch` changes the change time), and the same sha256 where the stamp has one."""
    try:
        info = os.stat(path)
        same = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev) == (
            stamp.size,
            stamp.mtime_ns,
            stamp.ctime_ns,
            stamp.ino,
            stamp.dev,
        )
        return same and (stamp.sha256 is None or _sha256(path) == stamp.sha256)
    except OSError:
        return False


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True, slots=True)
class Report:
    """What the recorded run printed before its last line: its stderr lines, its report (`text`, printed under
    the options `key` names) and whether it found no agent; and its exit code."""

    key: str
    messages: tuple[str, ...]
    text: str
    no_agents: bool
    code: int


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One compiled agent: the key of its inputs and its entry in index.json."""

    key: str
    index: Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class CompileState:
    """The last compile: `project` digests all its inputs; `outputs` stamps every file it left current."""

    project: str
    report: Report
    agents: Mapping[str, AgentEntry]
    outputs: Mapping[str, Stamp]


def read_state(path: Path) -> CompileState | None:
    """The recorded state, or None when there is none this quiver can trust to be its own."""
    try:
        data = _dict(json.loads(path.read_text(encoding="utf-8")))
        return _state(data) if data.get("format") == FORMAT else None
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _state(data: dict[str, JSON]) -> CompileState:
    report = _dict(data["report"])
    return CompileState(
        _str(data["project"]),
        Report(
            _str(report["key"]),
            tuple(_str(line) for line in _list(report["messages"])),
            _str(report["text"]),
            _bool(report["no_agents"]),
            _int(report["code"]),
        ),
        {_str(k): _agent(v) for k, v in _dict(data["agents"]).items()},
        {_str(k): _stamp(v) for k, v in _dict(data["outputs"]).items()},
    )


def _agent(value: JSON) -> AgentEntry:
    entry = _dict(value)
    return AgentEntry(_str(entry["key"]), _dict(entry["index"]))


def _stamp(value: JSON) -> Stamp:
    items = _list(value)
    if len(items) != 6:
        raise TypeError("a stamp has six fields")
    size, mtime, ctime, ino, dev, sha = items
    digest = None if sha is None else _str(sha)
    return Stamp(_int(size), _int(mtime), _int(ctime), _int(ino), _int(dev), digest)


# Each raises TypeError (the state is not one quiver wrote) unless the value is of its type.
def _dict(value: JSON) -> dict[str, JSON]:
    return _typed(value, dict)


def _list(value: JSON) -> list[JSON]:
    return _typed(value, list)


def _str(value: JSON) -> str:
    return _typed(value, str)


def _bool(value: JSON) -> bool:
    return _typed(value, bool)


def _int(value: JSON) -> int:
    if isinstance(value, bool):
        raise TypeError("a bool, not an int")
    return _typed(value, int)


def _typed(value: JSON, kind: type[T]) -> T:
    if not isinstance(value, kind):
        raise TypeError(f"not a {kind.__name__}")
    return value


def write_state(path: Path, state: CompileState) -> None:
    """Record `state` (atomically; a state that cannot be written only costs the next compile its time)."""
    if os.environ.get("QUIVER_NO_CACHE"):
        return
    report = state.report
    data: dict[str, JSON] = {
        "format": FORMAT,
        "project": state.project,
        "report": {
            "key": report.key,
            "messages": list(report.messages),
            "text": report.text,
            "no_agents": report.no_agents,
            "code": report.code,
        },
        "agents": {k: {"key": v.key, "index": dict(v.index)} for k, v in sorted(state.agents.items())},
        "outputs": {k: v.to_json() for k, v in sorted(state.outputs.items())},
    }
    with contextlib.suppress(OSError):
        write_cache(path, json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n")
