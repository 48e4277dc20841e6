"""`quiver.api`: docs/api.md runs as a doctest on a copy of the demo, and the surface is what `__all__` says."""

from __future__ import annotations

import doctest
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import quiver.api as api

ROOT = Path(__file__).resolve().parents[1]


def test_every_example_of_docs_api_md_runs_and_prints_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = tmp_path / "examples" / "demo"
    shutil.copytree(ROOT / "examples" / "demo", demo, ignore=shutil.ignore_patterns(".quiver"))
    monkeypatch.chdir(tmp_path)  # the page's paths are relative to a checkout's root
    failed, attempted = doctest.testfile(str(ROOT / "docs" / "api.md"), module_relative=False, verbose=False)
    assert attempted > 20 and failed == 0
    assert sorted(p.name for p in (demo / "build" / "quiver").glob("*.openai.json")) == []


def test_the_api_names_exactly_what_it_exports_and_each_is_documented() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for name in api.__all__:
        assert getattr(api, name) is not None
    functions = [n for n in api.__all__ if n[0].islower()]
    assert functions == ["compile_project", "diff", "explain", "lint", "load_project", "search"]
    assert all(f"api.{n}(" in page for n in functions)
    assert all((getattr(api, n).__doc__ or "").strip() for n in api.__all__)


def test_importing_the_api_loads_no_command_module_and_no_jsonschema() -> None:
    code = "import sys, quiver.api; sys.exit(any(m.startswith(('quiver.commands', 'jsonschema')) for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_a_users_mistake_is_a_quiver_error_with_a_one_line_message(tmp_path: Path) -> None:
    with pytest.raises(api.QuiverError) as raised:
        api.search("   ", root=tmp_path)
    assert "the query is empty" in raised.value.one_line()


def test_the_readmes_python_example_prints_what_its_comments_say(tmp_path: Path) -> None:
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    shutil.copytree(
        ROOT / "examples" / "demo", tmp_path / "examples" / "demo", ignore=shutil.ignore_patterns(".quiver")
    )
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, check=True)
    said = [line.split("# ", 1)[1].strip() for line in block.splitlines() if line.startswith("print(")]
    assert done.stdout.splitlines() == said
