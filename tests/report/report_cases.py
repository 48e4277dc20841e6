"""A small real project on disk and hand-built findings about it, shared by the formatter tests.

The rules mirror the shape of quiver's registries (code, kebab name, severity, message and hint templates,
a doc with the fixed headings) but are declared here, so formatter tests do not move with rule wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from quiver.findings.rule import Rule, index_rules
from quiver.model import Edit, Finding, Location
from quiver.report.context import ReportContext


def _doc(what: str) -> str:
    return (
        f"## What it does\n{what} It is a test rule.\n\n## Why is this bad?\nIt costs.\n\n"
        "## Example\n```yaml\ntools: [x]\n```\n\n## Fix\nFollow the hint.\n"
    )


UNKNOWN_TOOL = Rule(
    code="AGT008",
    name="unknown-tool-reference",
    severity="error",
    message="`{ref}` matches no built-in tool and no tool of any visible server",
    hint="did you mean `{guess}`?",
    doc=_doc("Flags a `tools` entry that names no known tool."),
)
DUPLICATE_TOOL = Rule(
    code="AGT012",
    name="duplicate-tool-entry",
    severity="info",
    message="`{ref}` is listed twice in `tools`",
    hint="remove the second entry",
    fix="safe",
    doc=_doc("Flags a `tools` entry listed twice."),
)
NOT_SNAPSHOTTED = Rule(
    code="MCP012",
    name="server-not-snapshotted",
    severity="warning",
    message="server `{server}` has no catalog in the lock file; its tools are unknown",
    hint="run `quiver snapshot --server {server}`",
    doc=_doc("Flags a configured server missing from the lock file."),
)
REQUIRED_ADDED = Rule(
    code="CTR020",
    name="input-required-property-added",
    severity="error",
    message="tool `{tool}`: new required property `{path}`",
    hint="old callers never send `{path}`: make it optional or give it a default",
    direction="input",
    kind="required",
    action="added",
    doc=_doc("Reports a property that the new `inputSchema` requires."),
)
DESCRIPTION_CHANGED = Rule(
    code="CTR004",
    name="tool-description-changed",
    severity="info",
    message="tool `{tool}`: description changed",
    direction="tool",
    kind="description",
    action="changed",
    doc=_doc("Reports a changed tool description."),
)
RULES: Mapping[str, Rule] = index_rules(
    (UNKNOWN_TOOL, DUPLICATE_TOOL, NOT_SNAPSHOTTED, REQUIRED_ADDED, DESCRIPTION_CHANGED)
)

AGENT = ".github/agents/triage.agent.md"
AGENT_TEXT = """\
---
name: Triage
tools: ["github/serch_issues", "time/now", "time/now"]
---
Sort new issues by area.
"""
MCP = ".mcp.json"
MCP_TEXT = """\
{
  "mcpServers": {
    "notion": {"command": "npx", "args": ["-y", "@notionhq/notion-mcp-server"]}
  }
}
"""


def make_project(tmp_path: Path) -> Path:
    """An agent file and an MCP config that the lint findings below point into."""
    root = tmp_path / "project"
    (root / ".github/agents").mkdir(parents=True)
    (root / AGENT).write_text(AGENT_TEXT)
    (root / MCP).write_text(MCP_TEXT)
    return root


def lint_findings() -> list[Finding]:
    """Three findings in two files, in the order lint sorts them (by file, line, column)."""
    return [
        UNKNOWN_TOOL.finding(
            location=Location(AGENT, 3, 9, 3, 30),
            agent="triage",
            ref="github/serch_issues",
            guess="github/search_issues",
        ),
        DUPLICATE_TOOL.finding(
            location=Location(AGENT, 3, 44, 3, 54),
            agent="triage",
            ref="time/now",
            fixes=(Edit(AGENT, 3, 42, 3, 54, ""),),
        ),
        NOT_SNAPSHOTTED.finding(location=Location(MCP, 3, 5), server="notion"),
    ]


def diff_findings() -> list[Finding]:
    """Contract findings between two lock files: one breaking with a witness, one informational."""
    lock = Location("quiver.lock.json", 0)
    return [
        REQUIRED_ADDED.finding(
            location=lock,
            server="github",
            tool="issue_read",
            path="issue_number",
            witness={"arguments": {"issueNumber": 1, "owner": "a"}},
        ),
        DESCRIPTION_CHANGED.finding(location=lock, server="github", tool="issue_read"),
        REQUIRED_ADDED.finding(location=lock, server="notion", tool="search", path="query", witness={"arguments": {}}),
    ]


def context(root: Path, **overrides: Any) -> ReportContext:
    # width 0: quoted lines are never cut to the terminal of whoever runs the tests (a pytest-xdist worker
    # inherits one); a test of fitting sets `width` itself
    values: dict[str, Any] = {"tool": "lint", "rules": RULES, "root": root, "width": 0}
    values.update(overrides)
    return ReportContext(**values)
