"""The terminal side: `--format json` for compile's table, budget and explain, and the progress line on
stderr that only a terminal gets."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from projects import agent_text, make_project, stdio, tool
from quiver.cli import cli


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args, "--project", str(root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _manifests(demo: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((demo / "build" / "quiver").glob("*.json")):
        if path.name != "index.json" and path.name.count(".") == 1:
            m = json.loads(path.read_text(encoding="utf-8"))
            out[m["agent"]["id"]] = m
    return out


def test_compile_and_budget_print_the_same_json_table(demo: Path) -> None:
    code, out, err = run(demo, "compile", "--format", "json")
    assert code == 0, err
    compiled = json.loads(out)
    code, out, err = run(demo, "budget", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == compiled
    manifests = _manifests(demo)
    assert [row["agent"] for row in compiled["agents"]] == sorted(manifests)
    for row in compiled["agents"]:
        m = manifests[row["agent"]]
        assert row["budget"] == m["budget"]
        assert row["tool_search"] == {"active": m["tool_search"]["active"], "reason": m["tool_search"]["reason"]}
    total = compiled["total"]
    assert total["agents"] == len(manifests)
    assert total["initial_tokens"] == sum(m["budget"]["initial_tokens"] for m in manifests.values())
    assert total["baseline_tokens"] == sum(m["budget"]["baseline_tokens"] for m in manifests.values())


def test_explain_json_names_each_tools_decision_and_source(demo: Path) -> None:
    run(demo, "compile", "-q")
    code, out, err = run(demo, "explain", "ops", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    manifest = _manifests(demo)["ops"]
    assert doc["agent"] == "ops" and doc["budget"] == manifest["budget"]
    by_tool = {(t["server"], t["tool"]): t for t in doc["tools"]}
    assert set(by_tool) == {(t["server"], t["name"]) for t in manifest["tools"]}
    assert doc["host"]["id"] == "claude-code" and doc["host"]["version"] == "2.1.332"
    status = by_tool[("git", "git_status")]  # `alwaysLoad: true` on git in .mcp.json
    assert status["load"] == "preloaded" and status["host"] == "claude-code" and status["code"] == "always-load"
    assert status["source"] is not None and status["source"].startswith(".mcp.json:")
    issue_write = by_tool[("github", "issue_write")]
    assert issue_write["load"] == "deferred" and issue_write["basis"] == "measured on Claude Code 2.1.332"
    assert issue_write["gateway"]["load"] in ("preloaded", "deferred")
    code, out, _ = run(demo, "explain", "ops", "github/issue_write", "--format", "json")
    assert [t["tool"] for t in json.loads(out)["tools"]] == ["issue_write"]


def _on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run quiver with stderr on a pseudo-terminal (stdout a pipe): exit code, stdout, what the tty got."""
    master, slave = pty.openpty()
    env = {**os.environ, "QUIVER_PROGRESS_DELAY": "0", "TERM": "xterm", "NO_COLOR": "1"}
    out_file = cwd.parent / "stdout.txt"
    with out_file.open("wb") as stdout_sink:  # a file, not a pipe: a full pipe would block the child
        argv = [sys.executable, "-m", "quiver", *args]
        proc = subprocess.Popen(argv, cwd=cwd, stdout=stdout_sink, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, out_file.read_text(encoding="utf-8"), seen.decode("utf-8", "replace")


def test_progress_goes_to_a_terminal_and_is_erased_before_the_result(demo: Path) -> None:
    code, out, tty = _on_a_terminal(["compile", "-C", str(demo)], demo)
    assert code == 0
    assert "compiling agents " in tty and "/4 (" in tty
    assert tty.rstrip().endswith("to build/quiver/")  # the last thing shown is the result, not the bar
    last = tty.rindex("compiling agents")
    assert "\x1b[2K" in tty[last:]  # erased
    assert "compiling" not in out and "\x1b" not in out
    code, _, tty = _on_a_terminal(["lint", "-C", str(demo)], demo)
    assert "linting " in tty


def test_no_progress_off_a_terminal(demo: Path) -> None:
    env = {**os.environ, "QUIVER_PROGRESS_DELAY": "0", "TERM": "xterm"}
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-C", str(demo)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0
    assert "compiling agents" not in proc.stderr and "\x1b" not in proc.stderr


def test_lint_on_a_terminal_counts_what_it_checks(demo: Path) -> None:
    code, _, tty = _on_a_terminal(["lint", "-C", str(demo)], demo)
    assert code in (0, 1)
    assert "linting 4 agents, 2 skills, 2 MCP configs, `quiver.toml`, the lock" in tty, tty
    assert "\x1b[2K" in tty[tty.rindex("linting") :]  # erased before the report


def test_compile_prints_one_line_for_its_info_findings_and_each_other_finding(tmp_path: Path) -> None:
    agents = {
        f".github/agents/{name}.agent.md": agent_text(f"description: {name}.\ntools: ['ms-python.python/{name}']")
        for name in ("a", "b", "c")
    }  # an extension tool only the host can resolve: one AGT022 info per agent
    agents[".github/agents/d.agent.md"] = agent_text("description: d.\ntools: ['s/nope']")  # AGT008, an error
    make_project(tmp_path, agents=agents, mcp={"mcpServers": {"s": stdio()}}, catalogs={"s": [tool("get")]})
    code, _, err = run(tmp_path, "compile", "-q")
    assert code == 1  # the error: an unresolved `tools` entry
    lines = err.splitlines()
    assert [line for line in lines if "info[" in line] == []
    assert sum("error[AGT008]" in line for line in lines) == 1
    assert "note: 3 info findings (AGT022 x3): `quiver lint --select AGT022` shows them" in lines
    code, out, _ = run(tmp_path, "lint", "--select", "AGT022")
    assert out.count("AGT022") >= 3


def test_lint_with_nothing_to_check_says_so_instead_of_all_checks_passed(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# not an agent project\n")
    code, out, _ = run(tmp_path, "lint")
    assert code == 0
    assert "All checks passed" not in out
    assert out.startswith("Nothing to check: no agent file (.github/agents/*.md, ") and "MCP config (" in out
    make_project(tmp_path, agents={".github/agents/a.agent.md": agent_text("description: A.")})
    code, out, _ = run(tmp_path, "lint")
    assert "Nothing to check" not in out
