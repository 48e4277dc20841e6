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
