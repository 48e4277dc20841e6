"""Lint shares its uncached whole-project checks with forked workers (lint/parallel.py), and the report
stays the one a single process writes: real forks, real pipes, the real demo project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from quiver.lint import parallel
from quiver.lint.engine import LintContext
from quiver.lint.support.cache import ProjectCheck
from quiver.model import Finding
from quiver.project import load_project
from quiver.resolve import resolve_project

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")


def _finding(text: str) -> Finding:
    return Finding(rule="ROUTE006", name="shadowed-tool", severity="warning", message=text)


def _context(tmp_path: Path) -> LintContext:
    (tmp_path / ".github" / "agents").mkdir(parents=True)
    (tmp_path / ".github" / "agents" / "a.agent.md").write_text("---\ndescription: a\n---\nhi\n", encoding="utf-8")
    project = load_project(tmp_path, collect=True)
    return LintContext(project, tuple(resolve_project(project)))


def test_a_worker_takes_a_shared_check_and_its_findings_come_back_in_check_order(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    claimed = tmp_path / "claimed"

    def first(_: LintContext) -> Iterator[Finding]:
        claimed.write_text(str(os.getpid()), encoding="utf-8")
        yield _finding(f"first in {os.getpid()}")

    def second(_: LintContext) -> Iterator[Finding]:
        yield _finding(f"second in {os.getpid()}")

    def local(_: LintContext) -> Iterator[Finding]:
        deadline = time.monotonic() + 30
        while not claimed.exists() and time.monotonic() < deadline:  # until a worker has claimed `first`
            time.sleep(0.01)
        yield _finding("local")

    shared = [ProjectCheck("route-shadowed", first), ProjectCheck("route-pairs", second)]
    checks = [shared[1], local, shared[0]]
    done = parallel._share(ctx, checks, shared, workers=1)
    found = [f.message for check in checks for f in done[id(check)]]
    assert found[1] == "local"
    assert found[2] == f"first in {claimed.read_text(encoding='utf-8')}"
    assert claimed.read_text(encoding="utf-8") != str(os.getpid())  # computed by the worker
    assert found[0].startswith("second in ")


def test_a_check_whose_worker_fails_is_computed_here(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    me = os.getpid()
    claimed = tmp_path / "claimed"

    def fragile(_: LintContext) -> Iterator[Finding]:
        if os.getpid() != me:
            claimed.write_text(str(os.getpid()), encoding="utf-8")
            raise RuntimeError("the worker breaks")
        yield _finding("computed here")

    def local(_: LintContext) -> Iterator[Finding]:
        deadline = time.monotonic() + 30
        while not claimed.exists() and time.monotonic() < deadline:  # until the worker has claimed it
            time.sleep(0.01)
        return iter(())

    shared = [ProjectCheck("route-shadowed", fragile)]
    done = parallel._share(ctx, [local, shared[0]], shared, workers=1)
    assert claimed.read_text(encoding="utf-8") != str(me)  # the worker took it, and failed
    assert [f.message for f in done[id(shared[0])]] == ["computed here"]


def _lint(project: Path, jobs: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "QUIVER_NO_CACHE"} | {"QUIVER_JOBS": jobs}
    shutil.rmtree(project / ".quiver", ignore_errors=True)
    argv = [sys.executable, "-m", "quiver", "lint", "--fail-on", "never", "--format", "json", "--project", str(project)]
    return subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout


def test_the_demo_report_is_byte_identical_with_and_without_workers(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "examples" / "demo", project, ignore=shutil.ignore_patterns("build", ".quiver"))
    one = _lint(project, "1")
    shared = _lint(project, "4")
    assert shared == one
    assert any(f["rule"] in ("ROUTE001", "ROUTE007") for f in json.loads(one))  # a shared check reported
    cached = json.loads((project / ".quiver" / "cache" / "project-checks.json").read_text(encoding="utf-8"))
    assert any(key.startswith("route-shadowed:") for key in cached)  # stored once, by the lint process
    env = {k: v for k, v in os.environ.items() if k != "QUIVER_NO_CACHE"} | {"QUIVER_JOBS": "4"}
    argv = [sys.executable, "-m", "quiver", "lint", "--fail-on", "never", "--format", "json", "--project", str(project)]
    warm = subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout
    assert warm == one


def test_jobs_follow_quiver_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIVER_JOBS", "1")
    assert parallel.jobs() == 1
    monkeypatch.setenv("QUIVER_JOBS", "not a number")  # ignored: every CPU this process may use
    assert parallel.jobs() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("QUIVER_JOBS", "10000")  # a cap, never more processes than CPUs
    assert parallel.jobs() == len(os.sched_getaffinity(0))
