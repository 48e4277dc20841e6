"""The composite GitHub Action's shell steps, run locally in a temp git repo with GitHub's variables set.

Steps that use other actions (setup-python, upload-sarif) cannot run here: their wiring is checked instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from projects import agent_text, make_project, stdio, tool
from quiver import __version__

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def run_action(repo: Path, tmp: Path, inputs: dict[str, str]) -> subprocess.CompletedProcess[str]:
    defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values = {**defaults, **inputs}
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"), "GITHUB_ACTION_PATH": str(ROOT),
           "GITHUB_OUTPUT": str(tmp / "outputs.txt"), "RUNNER_TEMP": str(tmp / "runner"),
           "GITHUB_WORKSPACE": str(repo), "GITHUB_BASE_REF": "", "CI": "true",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    (tmp / "runner").mkdir(exist_ok=True)
    proc = None
    for step in ACTION["runs"]["steps"]:
        if "uses" in step:
            continue
        condition = step.get("if", "")
        if "inputs.install != ''" in condition and not values["install"]:
            continue
        step_env = {k: re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], v)
                    for k, v in step.get("env", {}).items()}  # fmt: skip
        proc = subprocess.run(["bash", "-c", step["run"]], cwd=repo, env={**env, **step_env},
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        if proc.returncode:
            break
    assert proc is not None
    return proc


def outputs(tmp: Path) -> dict[str, str]:
    lines = (tmp / "outputs.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def repo_with(tmp_path: Path, agents: dict[str, str], catalog: list[Any]) -> Path:
    repo = tmp_path / "repo"
    catalogs = {"s": catalog} if catalog else {}  # no tools: no lock file
    make_project(repo, agents=agents, mcp={"mcpServers": {"s": stdio()}}, catalogs=catalogs)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "dev")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    return repo


AGENT = {".github/agents/a.agent.md": agent_text("description: Triage issues.\ntools: ['s/*']")}


def test_action_annotates_changed_lines_writes_the_summary_and_fails_on_a_breaking_change(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, AGENT, [tool("get_issue"), tool("close_issue")])
    make_project(repo, catalogs={"s": [tool("get_issue")]})  # close_issue removed: breaks callers
    git(repo, "commit", "-qam", "drop close_issue")

    proc = run_action(repo, tmp_path, {"install": "", "base": "main"})
    assert proc.returncode == 1, proc.stderr
    assert "::error file=quiver.lock.json" in proc.stdout and "CTR001" in proc.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "## quiver lint" in summary and "## quiver diff" in summary
    assert "close_issue" in summary
    out = outputs(tmp_path)
    assert int(out["findings"]) >= 1
    assert Path(out["report"]).read_text() == summary
    sarif = Path(out["sarif"])
    runs = [json.loads((sarif / n).read_text())["runs"][0] for n in ("lint.sarif", "diff.sarif")]
    ids = {run["automationDetails"]["id"] for run in runs}
    assert ids == {"quiver/lint/", "quiver/diff/"}
    diff_results = json.loads((sarif / "diff.sarif").read_text())["runs"][0]["results"]
    assert "CTR001" in {r["ruleId"] for r in diff_results}


def test_action_passes_when_nothing_breaks(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, AGENT, [tool("get_issue")])
    proc = run_action(repo, tmp_path, {"install": "", "base": "main", "fail-on": "error"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "## quiver diff" in (tmp_path / "summary.md").read_text()
    counts = [
        len(json.loads(subprocess.run([sys.executable, "-m", "quiver", *cmd, "--format", "json"], cwd=repo,
                                      capture_output=True, text=True, check=False).stdout))
        for cmd in (["lint"], ["diff", "main"])
    ]  # fmt: skip
    assert outputs(tmp_path)["findings"] == str(sum(counts))


def test_the_exit_code_follows_changed_lines_unless_asked_to_fail_on_unchanged(tmp_path: Path) -> None:
    broken = {".github/agents/old.agent.md": agent_text("description: Old.\ntools: ['s/nope']")}  # AGT008
    repo = repo_with(tmp_path, {**AGENT, **broken}, [tool("get_issue")])
    make_project(repo, agents={".github/agents/b.agent.md": agent_text("description: New.\ntools: ['s/get_issue']")})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add b")
    proc = run_action(repo, tmp_path, {"install": "", "base": "main"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "::error" not in proc.stdout  # the error is on a line this branch did not touch
    assert int(outputs(tmp_path)["findings"]) >= 1  # but it is counted and reported
    assert "AGT008" in (tmp_path / "summary.md").read_text()
    strict = tmp_path / "strict"
    strict.mkdir()
    proc = run_action(repo, strict, {"install": "", "base": "main", "fail-on-unchanged": "true"})
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_a_summary_line_reports_annotations_over_githubs_cap(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, AGENT, [tool("get_issue")])
    for n in range(13):
        text = agent_text(f"description: N{n}.\ntools: ['s/x{n}']")  # AGT008 on a new file: a changed line
        make_project(repo, agents={f".github/agents/n{n:02d}.agent.md": text})
    proc = run_action(repo, tmp_path, {"install": "", "base": "main"})
    assert proc.returncode == 1
    assert proc.stdout.count("::error ") == 13
    note = "quiver: 3 errors not annotated: GitHub shows at most 10 annotations of each kind per step"
    assert note in proc.stdout
    assert "**Note:** 3 errors not annotated" in (tmp_path / "summary.md").read_text()


def test_the_install_defaults_to_the_actions_own_copy_and_pinned_names_its_version() -> None:
    def requirement(value: str | None) -> str:
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        env = {k: v for k, v in os.environ.items() if k != "QUIVER_INSTALL"}
        env |= {"PATH": path, **({"QUIVER_INSTALL": value} if value is not None else {})}
        proc = subprocess.run(["bash", str(ROOT / "action" / "install.sh"), "--requirement"], env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        return proc.stdout.strip()

    assert ACTION["inputs"]["install"]["default"] == "source"  # no package index has agent-quiver yet
    assert requirement(None) == requirement("source") == str(ROOT)
    assert requirement("pinned") == f"agent-quiver=={__version__}"
    assert requirement("agent-quiver>=0.1") == "agent-quiver>=0.1"


def test_python_is_set_up_and_sarif_upload_is_optional_and_wired_to_the_output() -> None:
    steps = {step.get("uses", step.get("name")): step for step in ACTION["runs"]["steps"]}
    setup = steps["actions/setup-python@v6"]
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"
    assert ACTION["inputs"]["python-version"]["default"] >= "3.11"
    upload = steps["github/codeql-action/upload-sarif@v4"]
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    assert upload["with"]["sarif_file"] == "${{ steps.quiver.outputs.sarif }}"
    assert ACTION["inputs"]["upload-sarif"]["default"] == "false"
    assert set(ACTION["outputs"]) == {"findings", "report", "sarif"}
    assert all("steps.quiver.outputs." in spec["value"] for spec in ACTION["outputs"].values())


def test_the_readme_uses_the_action_from_a_path_and_names_the_published_form_as_a_release_tag() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    uses = re.findall(r"uses: (\S+)", readme)
    ours = [u for u in uses if not u.startswith(("actions/", "github/"))]
    assert ours == ["./.github/actions/quiver", f"OWNER/quiver@v{__version__}`"], ours  # the second is prose
    assert "@main" not in readme and "<owner>" not in readme and "<this repository>" not in readme


def test_the_pull_request_that_adds_the_lock_passes_and_reports_every_tool_as_added(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, AGENT, [])  # no lock on main
    assert not (repo / "quiver.lock.json").exists()
    make_project(repo, catalogs={"s": [tool("get_issue"), tool("close_issue")]})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add the lock")
    proc = run_action(repo, tmp_path, {"install": "", "base": "main"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("::notice file=quiver.lock.json") >= 2 and "CTR003" in proc.stdout
    assert "`s/close_issue`" in (tmp_path / "summary.md").read_text()


def test_a_lock_under_another_name_or_removed_is_still_diffed_and_no_lock_anywhere_is_a_note(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, AGENT, [tool("get_issue")])
    (repo / "quiver.lock.json").unlink()  # the pull request deletes the lock: every tool is removed
    git(repo, "commit", "-qam", "drop the lock")
    proc = run_action(repo, tmp_path, {"install": "", "base": "main"})
    assert proc.returncode == 1 and "CTR001" in proc.stdout, proc.stdout + proc.stderr
    bare = tmp_path / "bare"
    bare.mkdir()
    repo = repo_with(bare, AGENT, [])
    proc = run_action(repo, bare, {"install": "", "base": "main"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = (bare / "summary.md").read_text()
    assert "## quiver diff" in summary and "nothing to compare" in summary
    assert json.loads((bare / "runner" / "quiver" / "sarif" / "diff.sarif").read_text())["runs"][0]["results"] == []


def test_the_action_diffs_a_servers_snapshot_folder_named_in_catalogs(tmp_path: Path) -> None:
    repo = tmp_path / "server"
    snaps = repo / "pkg" / "github" / "__toolsnaps__"
    snaps.mkdir(parents=True)
    for name in ("get_issue", "close_issue"):
        (snaps / f"{name}.snap").write_text(json.dumps(tool(name), indent=2, sort_keys=True) + "\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "dev")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (snaps / "close_issue.snap").unlink()
    git(repo, "commit", "-qam", "drop close_issue")
    proc = run_action(repo, tmp_path, {"install": "", "base": "main", "catalogs": "pkg/github/__toolsnaps__\n"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "CTR001" in proc.stdout and "nothing to compare" not in proc.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "close_issue" in summary and "| error | `CTR001` tool-removed |" in summary
    results = json.loads((Path(outputs(tmp_path)["sarif"]) / "diff.sarif").read_text())["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["CTR001"]
