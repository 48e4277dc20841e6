"""Reference findings by what quiver can know: a provable mistake is an error with a did-you-mean; a name
only the user's host can resolve is one info per agent saying what was not checked and how to check it."""

from __future__ import annotations

import shutil
from pathlib import Path

from projects import agent_text, make_project, stdio, tool, tools
from quiver.lint.mcp.server_not_snapshotted import unsnapshotted_findings
from quiver.lint.mcp.unserved_tool_entries import unserved_findings
from quiver.lint.run import run
from quiver.model import Finding
from quiver.project import Project, load_project
from quiver.resolve import ResolvedAgent, resolve_project


def project_findings(project: Project, resolved: list[ResolvedAgent]) -> list[Finding]:
    """What lint and compile report once per server (MCP012, then MCP011 and MCP013)."""
    return [*unsnapshotted_findings(resolved), *unserved_findings(project)]


def lint(root: Path, *codes: str) -> list:  # type: ignore[type-arg]
    return [f for f in run(root).findings if not codes or f.rule in codes]


def test_vscode_tool_sets_and_their_tools_are_built_ins(tmp_path: Path) -> None:
    refs = "['vscode', 'browser', 'edit/createDirectory', 'read/getNotebookSummary', 'vscode/askQuestions', "
    refs += "'web/githubTextSearch', 'execute/runNotebookCell', 'runCommands', 'todos', 'search/usages']"
    make_project(tmp_path, agents={".github/agents/a.agent.md": agent_text(f"description: d\ntools: {refs}")})
    assert lint(tmp_path, "AGT008", "AGT010", "AGT022") == []


def test_what_no_config_of_the_repo_defines_is_one_info_per_agent_naming_each_reference(tmp_path: Path) -> None:
    refs = "['microsoft.docs.mcp', 'microsoft.docs.mcp/*', 'azure-mcp/*', 'mssql_query', 'vscode/brandNewTool']"
    make_project(tmp_path, agents={".github/agents/a.agent.md": agent_text(f"description: d\ntools: {refs}")})
    (note,) = lint(tmp_path, "AGT008", "AGT010", "AGT022")
    assert (note.rule, note.severity, note.location.line) == ("AGT022", "info", 3)
    assert note.message.startswith("quiver cannot check 5 tool reference(s)")
    assert "`microsoft.docs.mcp`, `mssql_query` (no built-in, MCP config or lock here has it)" in note.message
    assert "`azure-mcp/*` (no MCP config here defines server `azure-mcp`)" in note.message
    assert "`microsoft.docs.mcp/*` (an extension tool, or a server no MCP config here defines)" in note.message
    assert "`vscode/brandNewTool` (not a VS Code `vscode` tool quiver knows)" in note.message
    assert note.hint is not None and "`.vscode/mcp.json` or `.mcp.json`" in note.hint and "quiver snapshot" in note.hint


def test_a_provable_mistake_against_a_config_and_lock_stays_an_error_with_a_did_you_mean(tmp_path: Path) -> None:
    make_project(
        tmp_path,
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['notes/lst_0O', 'note/*', 'lst_1']")},
        mcp={"mcpServers": {"notes": stdio()}},
        catalogs={"notes": tools("lst", 3)},
    )
    found = {(f.rule, f.severity, f.hint) for f in lint(tmp_path, "AGT008", "AGT010", "AGT022")}
    assert found == {
        ("AGT008", "error", "did you mean `notes/lst_00`?"),
        ("AGT010", "error", "did you mean `notes`?"),
        ("AGT008", "error", "did you mean `lst_01`?"),
    }


def test_a_tool_the_lock_does_not_list_says_how_to_refresh_the_lock(tmp_path: Path) -> None:
    make_project(
        tmp_path,
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['notes/archive_everything']")},
        mcp={"mcpServers": {"notes": stdio()}},
        catalogs={"notes": tools("lst", 3)},
    )
    (f,) = lint(tmp_path, "AGT008")
    assert f.hint == "the lock lists no such tool of `notes`; run `quiver snapshot --server notes` if it changed"


def test_an_unsnapshotted_server_is_reported_once_listing_its_agents(tmp_path: Path) -> None:
    agents = {f".github/agents/{n}.agent.md": agent_text("description: d\ntools: ['notes/*']") for n in "abc"}
    make_project(tmp_path, agents=agents, mcp={"mcpServers": {"notes": stdio()}})
    (f,) = lint(tmp_path, "MCP012")
    assert f.location is not None and f.location.file == ".mcp.json"
    assert f.message == (
        "server `notes` has no catalog in the lock file; the tools it gives 3 agents: `a`, `b`, `c` are unknown"
    )
    assert f.hint == "run `quiver snapshot --server notes`"
    project = load_project(tmp_path)
    assert [x.rule for x in project_findings(project, resolve_project(project))] == ["MCP012"]


def test_references_to_a_host_server_are_one_info_per_agent(tmp_path: Path) -> None:
    refs = "['github/get_issue', 'github/list_issues', 'github/*']"
    make_project(tmp_path, agents={".github/agents/a.agent.md": agent_text(f"description: d\ntools: {refs}")})
    (f,) = lint(tmp_path, "AGT011")
    assert f.message.endswith("not checked: `github/get_issue`, `github/list_issues`, `github/*`")


def test_awesome_copilot_without_mcp_config_has_no_reference_error_and_keeps_its_real_defects(
    corpus: Path, tmp_path: Path
) -> None:
    shutil.copytree(corpus / "awesome-copilot" / "agents", tmp_path / ".github" / "agents")
    findings = run(tmp_path).findings
    assert not [f for f in findings if f.rule in ("AGT008", "AGT009", "AGT010")]
    per_agent = [f.agent for f in findings if f.rule == "AGT022"]
    assert len(per_agent) == len(set(per_agent)) >= 20 and {f.severity for f in findings if f.rule == "AGT022"} == {
        "info"
    }
    defects = {(f.rule, f.severity, f.location.file.rsplit("/", 1)[-1]) for f in findings if f.location}
    assert ("AGT006", "error", "pimcore-expert.agent.md") in defects  # body over 30,000 characters
    assert ("MCP020", "warning", "cast-imaging-impact-analysis.agent.md") in defects  # `args` on a remote server
    assert ("MCP004", "error", "cast-imaging-impact-analysis.agent.md") in defects  # no `tools` allow-list
    unsnapshotted = [(f.server, f.location.file) for f in findings if f.rule == "MCP012" and f.location]
    assert len(unsnapshotted) == len(set(unsnapshotted))


def test_claude_code_mcp_names_resolve_like_server_slash_tool(tmp_path: Path) -> None:
    refs = "Bash, Read, mcp__fs__read_file, mcp__my__srv, mcp__fs__reed_file"
    make_project(
        tmp_path,
        agents={".claude/agents/cl.md": agent_text(f"description: d\ntools: {refs}")},
        mcp={"mcpServers": {"fs": stdio(), "my__srv": stdio()}},
        catalogs={"fs": [tool("read_file"), tool("write_file")], "my__srv": tools("t", 2)},
    )
    (resolved,) = resolve_project(load_project(tmp_path))
    carried = sorted((t.server, t.tool.name, t.named) for t in resolved.tools)
    assert carried == [("fs", "read_file", True), ("my__srv", "t_00", False), ("my__srv", "t_01", False)]
    (wrong,) = lint(tmp_path, "AGT008", "AGT010", "AGT022")
    assert wrong.rule == "AGT008" and "`mcp__fs__reed_file`" in wrong.message
    assert wrong.hint == "did you mean `mcp__fs__read_file`?"
