"""The composite GitHub Action's shell steps, run locally in a temp git repo with GitHub's variables set."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from projects import agent_text, make_project, stdio, tool

ROOT = Path(__file__).resolve().parents[1]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def run_action(repo: Path, tmp: Path, inputs: dict[str, str]) -> subprocess.CompletedProcess[str]:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    defaults = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    values = {**defaults, **inputs}
    summary = tmp / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTION_PATH": str(ROOT),
           "GITHUB_WORKSPACE": str(repo), "GITHUB_BASE_REF": "", "CI": "true",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = None
    for step in action["runs"]["steps"]:
        condition = step.get("if", "")
        if "inputs.install != ''" in condition and not values["install"]:
            continue
        step_env = {k: re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], v)
                    for k, v in step.get("env", {}).items()}
        proc = subprocess.run(["bash", "-c", step["run"]], cwd=repo, env={**env, **step_env},
                              capture_output=True, text=True, timeout=120)
        if proc.returncode:
            break
    assert proc is not None
    return proc


def test_action_annotates_changed_lines_writes_the_summary_and_fails_on_a_breaking_change(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_project(repo, agents={".github/agents/a.agent.md": agent_text("description: Triage issues.\ntools: ['s/*']")},
                 mcp={"mcpServers": {"s": stdio()}}, catalogs={"s": [tool("get_issue"), tool("close_issue")]})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "dev")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    make_project(repo, catalogs={"s": [tool("get_issue")]})  # close_issue removed: breaks callers
    git(repo, "commit", "-qam", "drop close_issue")

    proc = run_action(repo, tmp_path, {"install": "", "base": "main"})
    assert proc.returncode == 1, proc.stderr
    assert "::error file=quiver.lock.json" in proc.stdout and "CTR001" in proc.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "## quiver lint" in summary and "## quiver diff" in summary
    assert "close_issue" in summary


def test_action_passes_when_nothing_breaks(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_project(repo, agents={".github/agents/a.agent.md": agent_text("description: Triage issues.\ntools: ['s/*']")},
                 mcp={"mcpServers": {"s": stdio()}}, catalogs={"s": [tool("get_issue")]})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "dev")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    proc = run_action(repo, tmp_path, {"install": "", "base": "main", "fail-on": "error"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "## quiver diff" in (tmp_path / "summary.md").read_text()
