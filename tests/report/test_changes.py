from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from report_cases import AGENT, MCP, context, lint_findings, make_project

from quiver.errors import UsageError
from quiver.report.changes import changed_lines, parse_diff
from quiver.report.render import render


@pytest.fixture
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git that ignores the machine's config and can commit."""
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Quiver Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.invalid")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, git_env: None) -> Path:
    """A git repository on `main` whose one commit holds the report project."""
    root = make_project(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def _edit_agent(root: Path) -> None:
    text = (root / AGENT).read_text().replace('"time/now", "time/now"', '"time/now"')
    (root / AGENT).write_text(text + "Then label them.\n")


def test_changed_lines_are_the_modified_and_added_lines_of_the_working_tree(repo: Path) -> None:
    _edit_agent(repo)  # line 3 modified, line 6 added
    (repo / "notes.md").write_text("one\ntwo\nthree")  # untracked, no final newline
    assert changed_lines(repo, None) == {AGENT: frozenset({3, 6}), "notes.md": frozenset({1, 2, 3})}


def test_changed_lines_against_a_base_include_committed_changes_since_it(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    _edit_agent(repo)
    git(repo, "commit", "-q", "-am", "edit agent")
    (repo / MCP).write_text((repo / MCP).read_text().replace("npx", "uvx"))
    assert changed_lines(repo, "main") == {AGENT: frozenset({3, 6}), MCP: frozenset({3})}
    # the default base is the merge-base with `main` when there is no remote
    assert changed_lines(repo, None) == changed_lines(repo, "main")
    assert changed_lines(repo, "HEAD") == {MCP: frozenset({3})}


def test_changed_lines_of_a_deletion_only_change_name_the_file_with_no_lines(repo: Path) -> None:
    text = (repo / MCP).read_text().splitlines(keepends=True)
    (repo / MCP).write_text("".join(text[:2] + text[3:]))
    (repo / AGENT).unlink()
    assert changed_lines(repo, None) == {MCP: frozenset()}


def test_changed_lines_of_a_subdirectory_project_are_relative_to_it(repo: Path) -> None:
    _edit_agent(repo)
    assert changed_lines(repo / ".github", None) == {"agents/triage.agent.md": frozenset({3, 6})}


def test_a_bad_base_is_a_usage_error_with_a_hint(repo: Path) -> None:
    for base in ("no-such-branch", "--output=/tmp/x"):
        with pytest.raises(UsageError) as info:
            changed_lines(repo, base)
        assert f"`{base}`" in info.value.message
        assert info.value.hint is not None and "--base" in info.value.hint


def test_outside_a_git_repository_changed_only_is_a_usage_error(
    tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    with pytest.raises(UsageError) as info:
        changed_lines(root, None)
    assert "git repository" in info.value.message


def test_a_repository_without_commits_counts_every_file_as_changed(tmp_path: Path, git_env: None) -> None:
    root = make_project(tmp_path)
    git(root, "init", "-q")
    git(root, "add", MCP)
    assert changed_lines(root, None) == {AGENT: frozenset(range(1, 6)), MCP: frozenset(range(1, 6))}


def test_github_changed_only_annotates_only_what_the_commit_touched(repo: Path) -> None:
    _edit_agent(repo)
    ctx = context(repo, changed_lines=changed_lines(repo, None))
    out = render(lint_findings(), "github", ctx)
    assert [line.split(",")[0] for line in out.splitlines()] == [f"::error file={AGENT}", f"::notice file={AGENT}"]


def test_parse_diff_reads_hunk_headers_and_quoted_paths() -> None:
    diff = (
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +2,3 @@\n+a\n+b\n+c\n@@ -9 +12 @@\n-q\n+r\n"
        '--- a/"sp\\303\\251cial\\tname"\n+++ "b/sp\\303\\251cial\\tname"\n@@ -4,2 +3,0 @@\n-gone\n-gone\n'
        "--- a/removed\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    )
    assert parse_diff(diff) == {"x": frozenset({2, 3, 4, 12}), "sp\u00e9cial\tname": frozenset()}
