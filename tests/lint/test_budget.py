"""The budget rule family: per-rule fixture projects, and budgets checked without loading the tokenizer."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from quiver.lint.run import run
from rule_harness import AGENT, FIXTURES, Case, Spec, agent, tool

LAZY = ".github/agents/lazy.agent.md"
LAZY_CONFIG = '[[mcp_servers]]\nname = "lazy"\npreload = false\n'
STDIO: dict[str, Any] = {"type": "stdio", "command": "srv", "tools": ["*"]}
# 30 MCP tools and 2 built-ins: more than Copilot CLI's 30, so it defers them all behind tool_search_tool
LAZY_TOOLS = [tool(f"get_page_{i:02d}") for i in range(30)]


def huge_tool(name: str) -> dict[str, Any]:
    """A tool whose schema alone costs well over 2,000 tokens: a report builder with 80 documented options."""
    properties = {
        f"option_{i:02d}": {
            "type": "string",
            "description": f"Option {i} of the report: which column group to include, how to sort it, how to label "
            "the totals row, and whether to repeat the header on every page of the exported document.",
        }
        for i in range(80)
    }
    return tool(name, inputSchema={"type": "object", "properties": properties})


CASES = (
    Case(
        "BUD001",
        Spec(
            {"srv": [tool("get_issue"), tool("list_issues"), tool("search_issues")], "lazy": LAZY_TOOLS},
            agents={AGENT: agent("['srv/*']"), LAZY: agent("['lazy/*']"), ".github/agents/none.agent.md": agent("[]")},
            config=f"budget_tokens = 50\n{LAZY_CONFIG}",
        ),
        Spec(
            {"srv": [tool("get_issue"), tool("list_issues"), tool("search_issues")], "lazy": LAZY_TOOLS},
            agents={AGENT: agent("['srv/*']"), LAZY: agent("['lazy/*']")},
            config=f"budget_tokens = 100000\n{LAZY_CONFIG}",
        ),
    ),
    Case(
        "BUD002",
        Spec(
            {"gh": [tool("get_me"), tool("search_issues")], "fs": [tool("read_file"), tool("write_file")]},
            servers={"gh": STDIO, "fs": {**STDIO, "deferTools": "never"}},
            agents={AGENT: agent("['gh/*', 'fs/*']")},
            config='threshold = 1\n\n[[mcp_servers]]\nname = "gh"\npreload_tools = ["get_me"]\n',
        ),
        Spec(
            {"gh": [tool("get_me"), tool("search_issues")], "fs": [tool("read_file"), tool("write_file")]},
            servers={"gh": STDIO, "fs": {**STDIO, "deferTools": "never"}},
            agents={
                AGENT: agent("['gh/*', 'fs/*']"),
                ".github/agents/ops.agent.md": agent("['gh/get_me', 'fs/read_file', 'fs/write_file']"),
            },
            config='threshold = 1\n\n[[mcp_servers]]\nname = "gh"\npreload_tools = ["get_me"]\n',
        ),
    ),
    Case(
        "BUD003",
        Spec({"srv": [huge_tool("build_report"), tool("get_report")]}, agents={AGENT: agent("['srv/*']")}),
        Spec(  # run by VS Code, which defers every MCP tool on a model with tool search
            {"srv": [huge_tool("build_report"), tool("get_report")]},
            agents={AGENT: agent("['srv/*']")},
            config='host = "vscode"\n',
        ),
    ),
)
SPECS = {case.code: case for case in CASES}  # tests/findings/test_rules.py checks them


def test_a_deferring_agent_is_measured_with_its_hosts_search_tool() -> None:
    findings = {f.agent: f for f in run(FIXTURES / "lint" / "BUD001" / "bad", select=["BUD001"]).findings}
    assert set(findings) == {"dev", "lazy"}  # `none` carries nothing
    assert "largest preloaded: none" in findings["lazy"].message  # all deferred: tool_search_tool alone passes 50
    assert "216 tokens" in findings["lazy"].message


def test_an_agent_within_budget_is_checked_without_loading_the_tokenizer() -> None:
    root = FIXTURES / "lint" / "BUD001" / "good"  # a deferring agent: its search tool is bounded by its recorded count
    code = (
        "import sys; from pathlib import Path; from quiver.lint.run import run; "
        f"found = run(Path({str(root)!r}), select=['BUD']).findings; "
        "print(len(found), 'tiktoken' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "False"]


def test_a_large_tool_is_reported_once_however_many_agents_preload_it() -> None:
    root = FIXTURES / "lint" / "BUD003" / "bad"
    assert len(run(root, select=["BUD003"]).findings) == 1
