"""The pre-commit hooks in `.pre-commit-hooks.yaml`: their shape, and real runs.

The run uses the real `pre-commit` package on a temporary git repository holding the demo project, with the
README's `repo: local` / `language: system` config (nothing is downloaded); its hooks are checked to run the
same commands on the same files as the hooks file, so a drift between the two breaks this test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from test_readme_usage import readme_yaml

ROOT = Path(__file__).resolve().parents[1]
HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"
DEMO = ROOT / "examples" / "demo"
BIN = Path(sys.executable).parent
STALE_AGENT = ".github/agents/release-notes.agent.md"


def hooks() -> dict[str, dict[str, Any]]:
    entries = yaml.safe_load(HOOKS_FILE.read_text(encoding="utf-8"))
    return {hook["id"]: hook for hook in entries}


def test_the_hooks_file_declares_lint_compile_and_contract_hooks() -> None:
    found = hooks()
    assert list(found) == ["quiver-lint", "quiver-compile", "quiver-contract"]
    assert found["quiver-lint"]["entry"] == "quiver lint"
    assert found["quiver-compile"]["entry"] == "quiver compile --check"
    assert found["quiver-contract"]["entry"] == "quiver diff --fail-on error"
    for hook in found.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        # once per commit on the whole project: no `files` pattern decides which of quiver's inputs count
        assert hook["always_run"] is True and "files" not in hook
        assert hook["name"] and hook["description"]


def test_the_hooks_file_is_a_valid_pre_commit_manifest() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(HOOKS_FILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _local_config() -> str:
    """The README's `repo: local` config (quiver from PATH), as a user copies it."""
    return readme_yaml("repo: local")


def _readme_hooks() -> dict[str, dict[str, Any]]:
    config = yaml.safe_load(_local_config())
    (repo,) = config["repos"]
    assert repo["repo"] == "local"
    return {hook["id"]: hook for hook in repo["hooks"]}


def test_the_readmes_local_hooks_run_what_the_hooks_file_runs() -> None:
    local, published = _readme_hooks(), hooks()
    assert list(local) == ["quiver-lint", "quiver-compile"]
    for hook_id, hook in local.items():
        assert hook["language"] == "system"  # quiver from the user's environment: nothing to download
        for key in ("name", "entry", "pass_filenames", "always_run"):
            assert hook[key] == published[hook_id][key], (hook_id, key)
        assert "files" not in hook


def _git_env(tmp_path: Path, gitconfig_text: str, drop: tuple[str, ...]) -> dict[str, str]:
    """An environment for git and pre-commit in a temporary repository: its own git config and pre-commit
    home, quiver from this venv first on PATH, no colour, and none of the caller's variables named `drop`."""
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(gitconfig_text)
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(drop)},
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "NO_COLOR": "1",
    }


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120)


def test_pre_commit_passes_on_the_demo_and_fails_when_a_manifest_goes_stale(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo)  # build/ too: compile --check compares against the committed manifests
    (repo / ".pre-commit-config.yaml").write_text(_local_config(), encoding="utf-8")
    env = _git_env(tmp_path, "", ("PRE_COMMIT", "GIT_", "SKIP"))
    assert _run(["git", "init", "-q"], repo, env).returncode == 0
    assert _run(["git", "add", "-A"], repo, env).returncode == 0
    pre_commit = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]

    clean = _run(pre_commit, repo, env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert re.search(r"^quiver lint\.+Passed$", clean.stdout, re.MULTILINE), clean.stdout
    assert re.search(r"^quiver compile --check\.+Passed$", clean.stdout, re.MULTILINE), clean.stdout

    agent = repo / STALE_AGENT
    agent.write_text(agent.read_text(encoding="utf-8") + "Mention breaking changes first.\n", encoding="utf-8")
    assert _run(["git", "add", "-A"], repo, env).returncode == 0

    stale = _run(pre_commit, repo, env)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert re.search(r"^quiver lint\.+Passed$", stale.stdout, re.MULTILINE), stale.stdout
    assert re.search(r"^quiver compile --check\.+Failed$", stale.stdout, re.MULTILINE), stale.stdout
    assert "stale: build/quiver/release-notes.json" in stale.stdout


def test_two_pre_commit_runs_after_git_add_all_never_report_modified_files(tmp_path: Path) -> None:
    """With caches on (as for a user): `.quiver/cache/` carries its own `.gitignore`, so nothing the
    hooks write is ever staged, and no run says "files were modified by this hook"."""
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns(".quiver"))
    (repo / ".pre-commit-config.yaml").write_text(_local_config(), encoding="utf-8")
    env = _git_env(tmp_path, "[user]\n\tname = t\n\temail = t@example.com\n", ("PRE_COMMIT", "GIT_", "SKIP", "QUIVER_"))
    assert _run(["git", "init", "-q"], repo, env).returncode == 0
    pre_commit = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]
    for attempt in range(2):
        assert _run(["git", "add", "-A"], repo, env).returncode == 0
        done = _run(pre_commit, repo, env)
        assert done.returncode == 0, (attempt, done.stdout + done.stderr)
        assert "files were modified by this hook" not in done.stdout, (attempt, done.stdout)
    assert (repo / ".quiver/cache/.gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert any((repo / ".quiver/cache").glob("*.json"))  # the hooks did write their caches
    staged = _run(["git", "status", "--porcelain", "--ignored=no"], repo, env).stdout
    assert ".quiver" not in staged


def test_a_commit_of_only_an_agent_found_through_a_config_glob_runs_the_hooks_and_fails_when_it_is_broken(
    tmp_path: Path,
) -> None:
    """The class behind a broken agent being committed: quiver.toml's `agents` glob (here `[[agents]]`
    with `kind`) finds files no fixed pattern names (a Copilot agent: Claude Code would read this one anyway).
    A plain `pre-commit run` on the staged files runs lint."""
    repo = tmp_path / "repo"
    (repo / "team" / "review").mkdir(parents=True)
    (repo / "quiver.toml").write_text('[[agents]]\npath = "team/**/*.md"\nkind = "copilot"\n', encoding="utf-8")
    (repo / ".pre-commit-config.yaml").write_text(_local_config(), encoding="utf-8")
    env = _git_env(tmp_path, "[user]\n\tname = t\n\temail = t@example.com\n", ("PRE_COMMIT", "GIT_", "SKIP", "QUIVER_"))
    assert _run(["git", "init", "-q"], repo, env).returncode == 0
    assert _run(["git", "add", "-A"], repo, env).returncode == 0
    assert _run(["git", "commit", "-qm", "config", "--no-verify"], repo, env).returncode == 0
    agent = repo / "team" / "review" / "reviewer.md"
    agent.write_text("---\nname: reviewer\ndescription: [unclosed\n---\nReview.\n", encoding="utf-8")
    assert _run(["git", "add", str(agent)], repo, env).returncode == 0
    done = _run([sys.executable, "-m", "pre_commit", "run", "--color", "never"], repo, env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"^quiver lint\.+Failed$", done.stdout, re.MULTILINE), done.stdout
    assert "team/review/reviewer.md:4:1: error[QVR002]" in done.stdout, done.stdout
