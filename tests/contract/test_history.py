"""Batch diff through a real git history made in a temp dir: each commit that touched the snapshots, against
its parent, in one process (`quiver.contract.history` and `quiver diff --commits`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from quiver.cli import cli
from quiver.contract.history import diff_history

SNAPS = "pkg/__toolsnaps__"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def snapshot(root: Path, message: str, tools: dict[str, Any]) -> None:
    folder = root / SNAPS
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in tools.items():
        (folder / f"{name}.snap").write_text(json.dumps(body, indent=2))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def tool(name: str, required: list[str], **schema: Any) -> dict[str, Any]:
    props = {"owner": {"type": "string"}, "state": {"type": "string"}}
    return {
        "name": name,
        "description": name,
        "inputSchema": {"type": "object", "properties": props, "required": required, **schema},
    }


def history(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "dev")
    snapshot(root, "first", {"a": tool("a", ["owner"]), "b": tool("b", [])})
    (root / "README").write_text("not a snapshot change")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "docs")
    snapshot(root, "state required", {"a": tool("a", ["owner", "state"])})
    snapshot(root, "b broken", {"b": {**tool("b", []), "inputSchema": None}})


def test_each_commit_that_touched_the_snapshots_is_diffed_against_its_parent(tmp_path: Path) -> None:
    history(tmp_path)
    steps = [
        (step.subject, [(f.tool, f.rule) for f in found])
        for step, found in diff_history(tmp_path, "HEAD", SNAPS, server="s")
    ]
    assert steps == [
        ("first", [("a", "CTR003"), ("b", "CTR003")]),  # the root commit: an empty catalog before it
        ("state required", [("a", "CTR021")]),
        ("b broken", [("b", "CTR080")]),
    ]


def test_quiver_diff_commits_reports_every_pair_and_exits_by_the_worst(tmp_path: Path) -> None:
    history(tmp_path)
    first = git(tmp_path, "rev-list", "--max-parents=0", "HEAD").strip()
    result = CliRunner().invoke(
        cli, ["diff", "--commits", f"{first}..HEAD", SNAPS, "--project", str(tmp_path), "--format", "json"]
    )
    assert result.exit_code == 1, result.output
    records = json.loads(result.stdout)
    assert [[f["rule"] for f in r["findings"]] for r in records] == [["CTR021"], ["CTR080"]]
    assert records[0]["base"] == git(tmp_path, "rev-parse", "HEAD~2").strip()
    text = CliRunner().invoke(cli, ["diff", "--commits", f"{first}..HEAD~1", SNAPS, "--project", str(tmp_path)])
    assert text.exit_code == 1 and "error[CTR021] tool `a`: property `state` became required" in text.stdout
    usage = CliRunner().invoke(cli, ["diff", "--commits", "HEAD", SNAPS, "HEAD", "--project", str(tmp_path)])
    assert usage.exit_code == 2 and "--commits A..B PATH" in usage.stderr


def test_the_reader_takes_the_folders_own_snapshot_files_at_each_commit_and_nothing_else(tmp_path: Path) -> None:
    """What `git ls-tree` listed, read from the tree objects: the folder's own `.snap`/`.json` files (a
    subfolder, another file kind and a commit without the folder read as nothing), or the path as one file."""
    from quiver.contract.git import SnapshotReader

    history(tmp_path)
    root_commit = git(tmp_path, "rev-list", "--max-parents=0", "HEAD").strip()
    nested = tmp_path / SNAPS / "old"
    nested.mkdir()
    (nested / "c.snap").write_text(json.dumps(tool("c", [])))
    (tmp_path / SNAPS / "notes.txt").write_text("not a snapshot")
    (tmp_path / SNAPS / "d e.json").write_text(json.dumps(tool("d e", [])))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "extras")
    with SnapshotReader(tmp_path, SNAPS) as reader:
        assert sorted(reader.catalog("HEAD")) == ["a", "b", "d e"]
        assert sorted(reader.catalog(root_commit)) == ["a", "b"]
        docs_commit = git(tmp_path, "rev-list", "--reverse", "HEAD").split()[1]  # README only: the same tree
        assert reader.catalog(docs_commit) is reader.catalog(root_commit)  # one catalog per tree
        assert reader.entries("HEAD~1") and reader.entries("no-such-ref") == []
    with SnapshotReader(tmp_path, f"{SNAPS}/a.snap") as one:
        assert one.entries("HEAD") == [(git(tmp_path, "rev-parse", f"HEAD:{SNAPS}/a.snap").strip(), f"{SNAPS}/a.snap")]
