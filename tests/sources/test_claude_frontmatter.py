"""Claude Code's second try at frontmatter that is not YAML (2.1.332's reader), and quiver reading a Claude
subagent that way through the real CLI: listed, budgeted, warned about (AGT026), fixed by `--fix`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from quiver.sources.claude_frontmatter import claude_code_repair

BROKEN = "name: privacy\ndescription: Use for reviews. Triggers on: 'GDPR', \"CCPA\".\ntools: Read, Grep\n"


def test_a_value_holding_colon_space_is_quoted_with_its_quotes_escaped() -> None:
    repair = claude_code_repair(BROKEN)
    assert repair is not None
    assert [(q.key, q.line, q.column) for q in repair.quoted] == [("description", 2, 14)]
    assert yaml.safe_load(repair.text)["description"] == "Use for reviews. Triggers on: 'GDPR', \"CCPA\"."
    assert yaml.safe_load(repair.text)["tools"] == "Read, Grep"  # no syntax character: left as written


def test_quoted_values_flow_lists_and_plain_text_are_left_as_written() -> None:
    text = "a: 'x: y'\nb: \"x: y\"\nc: [Read, Grep]\nd: plain words\n  nested: value\n"
    assert claude_code_repair(text) is None


def test_a_bracket_value_that_is_no_list_and_leading_tabs_are_rewritten() -> None:
    repair = claude_code_repair("a: [not: closed\n\tb: 1\n")
    assert repair is not None
    assert repair.text == 'a: "[not: closed"\n  b: 1\n'
    assert [q.key for q in repair.quoted] == ["a"]


def _quiver(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiver", *args, "-C", str(project)], capture_output=True, text=True, check=False
    )


def test_a_claude_subagent_claude_code_repairs_is_compiled_and_warned_a_copilot_agent_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "privacy.md").write_text(f"---\n{BROKEN}---\nReview.\n", encoding="utf-8")
    done = _quiver(tmp_path, "compile")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "build" / "quiver" / "privacy.json").read_text(encoding="utf-8"))
    assert manifest["agent"]["description"].endswith("Triggers on: 'GDPR', \"CCPA\".")
    assert sorted(b["ref"] for b in manifest["builtins"]) == ["Grep", "Read"]
    lint = _quiver(tmp_path, "lint", "--format", "json")
    assert lint.returncode == 0, lint.stdout  # a warning: the agent works where it runs
    (finding,) = [f for f in json.loads(lint.stdout) if f["rule"] == "AGT026"]
    assert (finding["line"], finding["column"], finding["severity"]) == (3, 14, "warning")
    assert _quiver(tmp_path, "lint", "--fix").returncode == 0
    fixed = (tmp_path / ".claude" / "agents" / "privacy.md").read_text(encoding="utf-8")
    assert yaml.safe_load(fixed.split("---")[1])["description"] == manifest["agent"]["description"]
    assert "AGT026" not in _quiver(tmp_path, "lint", "--format", "json").stdout

    (tmp_path / ".github" / "agents").mkdir(parents=True)
    (tmp_path / ".github" / "agents" / "privacy.agent.md").write_text(f"---\n{BROKEN}---\nReview.\n", encoding="utf-8")
    refused = _quiver(tmp_path, "compile")
    assert refused.returncode == 2
    assert ".github/agents/privacy.agent.md:3:" in refused.stderr and "Traceback" not in refused.stderr
