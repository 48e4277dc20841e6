from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from quiver.lint.run import run
from quiver.lint.support.cache import CACHE_FILE


def test_warm_lint_reuses_tool_check_results_and_gives_the_same_findings(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    cold = run(demo)
    assert (demo / CACHE_FILE).is_file()
    warm = run(demo)
    assert [f.to_json() for f in warm.findings] == [f.to_json() for f in cold.findings]
    fresh = demo.parent / "fresh"
    shutil.copytree(demo, fresh, ignore=shutil.ignore_patterns(".quiver"))
    assert [f.to_json() for f in run(fresh).findings] == [f.to_json() for f in cold.findings]


def test_no_cache_env_leaves_nothing_behind(demo: Path) -> None:
    run(demo)
    assert not (demo / CACHE_FILE).exists()


def test_routing_findings_are_reused_until_an_input_file_changes(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from quiver.lint.support.cache import PROJECT_CACHE_FILE

    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    cold = [f.to_json() for f in run(demo, select=["ROUTE"]).findings]
    assert cold and (demo / PROJECT_CACHE_FILE).is_file()
    assert [f.to_json() for f in run(demo, select=["ROUTE"]).findings] == cold
    agent = demo / ".github/agents/researcher.agent.md"
    agent.write_text(agent.read_text().replace("description: Researches", "description: Investigates"))
    warm = [f.to_json() for f in run(demo, select=["ROUTE"]).findings]
    fresh = demo.parent / "fresh"
    shutil.copytree(demo, fresh, ignore=shutil.ignore_patterns(".quiver"))
    assert warm == [f.to_json() for f in run(fresh, select=["ROUTE"]).findings]
