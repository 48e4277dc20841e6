from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QUIVER_NO_CACHE", "1")  # tests never leave caches in the source tree
os.environ.setdefault("QUIVER_CHECK_OUTPUT", "1")  # every compile in the tests checks its output's schemas
# The CLI and gateway processes the tests start write bytecode (an editable install where this is set would
# compile every quiver module again in each of them).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

ROOT = Path(__file__).resolve().parents[1]
# The public corpus (real agents, tool snapshots, catalogs): QUIVER_CORPUS, else ../shared/corpus.
# Rebuild it anywhere with `scripts/fetch-corpus.sh DIR`. CI sets QUIVER_REQUIRE_CORPUS=1 (.ci/run),
# so a missing corpus fails there instead of skipping the tests that need it.
CORPUS = Path(os.environ.get("QUIVER_CORPUS", Path(os.environ.get("QUIVER_SHARED", ROOT.parent / "shared")) / "corpus"))
REQUIRE_CORPUS = os.environ.get("QUIVER_REQUIRE_CORPUS") == "1"
CORPUS_MISSING = f"public corpus not found at {CORPUS} (set QUIVER_CORPUS, or run scripts/fetch-corpus.sh)"
DEMO = ROOT / "examples" / "demo"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A fresh copy of the demo repository (agents, configs, lock) without build outputs."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("build", ".quiver"))
    return target


@pytest.fixture
def corpus() -> Path:
    """The corpus directory; the test is skipped (one reason for all) when it is absent, failed under CI."""
    if not CORPUS.is_dir():
        if REQUIRE_CORPUS:
            pytest.fail(f"{CORPUS_MISSING}; QUIVER_REQUIRE_CORPUS=1 makes that a failure", pytrace=False)
        pytest.skip(CORPUS_MISSING)
    return CORPUS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line for every test the missing corpus skipped, rather than one per test."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if CORPUS_MISSING in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} test(s) skipped: {CORPUS_MISSING}")


@pytest.fixture(autouse=True)
def _pattern_workers_stopped() -> Iterator[None]:
    """A test that matched a pattern only `re` can take started a worker process (quiver.regex_budget):
    stopped after it, so the tests that count this process's children never see one left by another."""
    yield
    from quiver.regex_budget import close_workers

    close_workers()


# The files that run longest (seconds of one worker, from a junit report of 2026-12-03 on 2 cores), longest first.
# pytest runs `--dist loadfile --no-loadscope-reorder`: xdist hands files out in collection order, so these start
# first and the short files fill in behind them (longest-first scheduling). xdist's own order (most tests first)
# left the two longest single-test files to start last, and one worker idle for 15-20 s at the end of the run.
# A stale list only costs time, never a result.
LONGEST_FIRST = (
    "tests/runtime/test_faults_e2e.py",  # 60 s
    "tests/runtime/test_serve_e2e.py",  # 47
    "tests/runtime/test_serve_eras.py",  # 32
    "tests/runtime/test_advise_e2e.py",  # 28
    "tests/report/test_html_layout.py",  # 25
    "tests/runtime/test_stdio_calls.py",  # 22
    "tests/sources/test_live.py",  # 22
    "tests/test_host_exports.py",  # 19
    "tests/runtime/test_http_hardening.py",  # 19
    "tests/test_action.py",  # 18
    "tests/runtime/test_upstream.py",  # 17
    "tests/runtime/test_serve_project.py",  # 14
    "tests/runtime/test_serve_exit.py",  # 14
    "tests/runtime/test_replicas.py",  # 13
    "tests/commands/test_snapshot.py",  # 13
    "tests/runtime/test_flow_guard_e2e.py",  # 11
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (`LONGEST_FIRST`), then every other file in collection order (a stable sort)."""
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}

    def position(item: pytest.Item) -> int:
        return rank.get(item.path.relative_to(ROOT).as_posix(), len(rank))

    items.sort(key=position)
