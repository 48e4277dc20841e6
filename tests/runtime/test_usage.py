"""The usage recorder: one JSON line per event, appended safely by concurrent gateways."""

from __future__ import annotations

import inspect
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from quiver.runtime.usage import NullRecorder, UsageRecorder, project_root_of, read_usage, usage_path


class Ticks:
    def __init__(self) -> None:
        self.now = 99.5

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


def test_each_event_is_one_json_line_stamped_with_the_clock_and_the_sessions_agent(tmp_path: Path) -> None:
    path = usage_path(tmp_path, "researcher")
    with UsageRecorder(path, clock=Ticks()) as rec:
        rec.session_started("s1", "researcher", 1547, preloaded_tools=3)
        rec.discovery("s1", "search")
        rec.tool_loaded("s1", "github", "get_me", via="search", tokens=40)
        rec.discovery("s1", "describe", tokens=40)
        rec.call("s1", "github", "get_me", outcome="ok", preloaded=False)
        rec.call("s1", "github", "delete_repo", outcome="refused", preloaded=False)
        rec.session_ended("s1")
    assert path == tmp_path / ".quiver" / "usage" / "researcher.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == (
        '{"agent":"researcher","event":"session_started","initial_tokens":1547,"preloaded_tools":3,'
        '"session":"s1","ts":100.0,"v":1}'
    )
    assert [json.loads(line) for line in lines[1:]] == [
        {"v": 1, "ts": 100.5, "event": "discovery", "session": "s1", "agent": "researcher", "kind": "search",
         "tokens": None},
        {"v": 1, "ts": 101.0, "event": "tool_loaded", "session": "s1", "agent": "researcher", "server": "github",
         "tool": "get_me", "via": "search", "tokens": 40},
        {"v": 1, "ts": 101.5, "event": "discovery", "session": "s1", "agent": "researcher", "kind": "describe",
         "tokens": 40},
        {"v": 1, "ts": 102.0, "event": "call", "session": "s1", "agent": "researcher", "server": "github",
         "tool": "get_me", "outcome": "ok", "preloaded": False},
        {"v": 1, "ts": 102.5, "event": "call", "session": "s1", "agent": "researcher", "server": "github",
         "tool": "delete_repo", "outcome": "refused", "preloaded": False},
        {"v": 1, "ts": 103.0, "event": "session_ended", "session": "s1", "agent": "researcher"},
    ]  # fmt: skip


def test_events_of_a_session_whose_start_was_not_seen_carry_the_recorders_agent(tmp_path: Path) -> None:
    path = tmp_path / "u.jsonl"
    with UsageRecorder(path, clock=Ticks(), agent="ops") as rec:
        rec.call("old", "k8s", "get_pods", outcome="ok", preloaded=True)
    assert json.loads(path.read_text())["agent"] == "ops"


def test_a_second_recorder_appends_instead_of_truncating(tmp_path: Path) -> None:
    path = tmp_path / "u.jsonl"
    for session in ("a", "b"):
        with UsageRecorder(path, clock=Ticks()) as rec:
            rec.session_started(session, "x", 10)
    assert [e["session"] for e in read_usage(path).events] == ["a", "b"]


_WRITER = """
import sys
from pathlib import Path
from quiver.runtime.usage import UsageRecorder
worker = sys.argv[2]
with UsageRecorder(Path(sys.argv[1]), clock=lambda: 1.0) as rec:
    for i in range(400):
        rec.session_started(f"{worker}-{i}", "agent-" + "x" * 3000, i)
"""


def test_concurrent_gateways_appending_to_one_file_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "usage" / "shared.jsonl"
    procs = [subprocess.Popen([sys.executable, "-W", "error", "-c", _WRITER, str(path), f"w{n}"]) for n in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    log = read_usage(path.parent)
    assert log.skipped == ()
    assert len(log.events) == 1600
    assert {e["session"] for e in log.events} == {f"w{n}-{i}" for n in range(4) for i in range(400)}


def test_reading_skips_a_cut_short_line_and_says_where(tmp_path: Path) -> None:
    path = tmp_path / "u.jsonl"
    with UsageRecorder(path, clock=Ticks()) as rec:
        rec.session_started("s", "a", 1)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"v":1,"ts":3,"event":"ca')
    log = read_usage(path)
    assert len(log.events) == 1
    assert log.skipped == (f"{path}:2: not a JSON line (a write cut short?)",)


def test_reading_a_missing_usage_directory_gives_no_events(tmp_path: Path) -> None:
    log = read_usage(tmp_path / "nothing")
    assert (log.events, log.skipped, log.files) == ((), (), ())


def test_a_recorder_that_cannot_write_warns_once_and_stops_without_raising(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "blocked").write_text("a file where the directory should be")
    rec = UsageRecorder(tmp_path / "blocked" / "a.jsonl", clock=Ticks())
    with caplog.at_level(logging.WARNING, logger="quiver.runtime.usage"):
        rec.session_started("s", "a", 1)
        rec.call("s", "x", "y", outcome="ok", preloaded=True)
    rec.close()
    assert len(caplog.records) == 1
    assert "usage recording stopped" in caplog.records[0].getMessage()


def test_an_unknown_outcome_is_a_programming_error() -> None:
    rec = UsageRecorder(Path("/nonexistent/never-written.jsonl"), clock=Ticks())
    with pytest.raises(ValueError, match="outcome"):
        rec.call("s", "x", "y", outcome="maybe", preloaded=True)  # type: ignore[arg-type]  # the point of the test


def test_the_null_recorder_offers_the_same_methods_with_the_same_signatures() -> None:
    names = ("session_started", "discovery", "tool_loaded", "call", "session_ended", "close")
    for name in names:
        assert inspect.signature(getattr(NullRecorder, name)) == inspect.signature(getattr(UsageRecorder, name))
    null = NullRecorder()
    null.session_started("s", "a", 1)
    null.call("s", "x", "y", outcome="ok", preloaded=True)
    null.session_ended("s")


def test_a_manifests_usage_goes_to_the_project_it_was_compiled_in(tmp_path: Path) -> None:
    project = tmp_path / "repo" / "examples" / "serve"
    (project / "build" / "quiver").mkdir(parents=True)
    (project / "quiver.toml").write_text("")
    manifest = project / "build" / "quiver" / "assistant.json"
    assert project_root_of(manifest, default=tmp_path) == project
    assert project_root_of(Path("/nonexistent-root-xyz/m.json"), default=tmp_path) == tmp_path
