from __future__ import annotations

from pathlib import Path

from report_cases import AGENT, MCP, NOT_SNAPSHOTTED, UNKNOWN_TOOL, context, diff_findings, lint_findings

from quiver.model import Location
from quiver.report.github import command, escape_data, escape_property
from quiver.report.render import render

EXPECTED = """\
::error file=.github/agents/triage.agent.md,line=3,col=9,endLine=3,endColumn=30,title=AGT008 unknown-tool-reference::\
`github/serch_issues` matches no built-in tool and no tool of any visible server (did you mean `github/search_issues`?)
::notice file=.github/agents/triage.agent.md,line=3,col=44,endLine=3,endColumn=54,title=AGT012 duplicate-tool-entry::\
`time/now` is listed twice in `tools` (remove the second entry)
::warning file=.mcp.json,line=3,col=5,title=MCP012 server-not-snapshotted::\
server `notion` has no catalog in the lock file; its tools are unknown (run `quiver snapshot --server notion`)
"""


def test_github_writes_one_workflow_command_per_finding(project: Path) -> None:
    assert render(lint_findings(), "github", context(project)) == EXPECTED


def test_github_writes_nothing_for_no_findings(project: Path) -> None:
    assert render([], "github", context(project)) == ""


def test_github_escapes_message_data_and_property_values() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("dir:a,b%\n") == "dir%3Aa%2Cb%25%0A"
    finding = UNKNOWN_TOOL.finding(location=Location("agents/a,b:c.agent.md", 2, 1), ref="50%\nbad", guess="x::y")
    assert command(finding) == (
        "::error file=agents/a%2Cb%3Ac.agent.md,line=2,col=1,title=AGT008 unknown-tool-reference::"
        "`50%25%0Abad` matches no built-in tool and no tool of any visible server (did you mean `x::y`?)"
    )


def test_github_omits_the_properties_a_finding_does_not_have() -> None:
    no_place = NOT_SNAPSHOTTED.finding(location=None, server="notion")
    file_only = NOT_SNAPSHOTTED.finding(location=Location(MCP), server="notion")
    assert command(no_place).startswith("::warning title=MCP012 server-not-snapshotted::server")
    assert command(file_only).startswith("::warning file=.mcp.json,title=MCP012")
    contract = diff_findings()[1]
    assert command(contract).startswith("::notice file=quiver.lock.json,title=CTR004 tool-description-changed::")


def test_github_changed_only_keeps_findings_on_changed_lines(project: Path) -> None:
    findings = lint_findings()
    file_level = NOT_SNAPSHOTTED.finding(location=Location(MCP, 0), server="notion")
    nowhere = NOT_SNAPSHOTTED.finding(location=None, server="notion")
    spanning = UNKNOWN_TOOL.finding(location=Location(AGENT, 1, 1, 4, 1), ref="x", guess="y")
    everything = [*findings, file_level, nowhere, spanning]

    def shown(changed: dict[str, frozenset[int]]) -> list[str]:
        out = render(everything, "github", context(project, changed_lines=changed))
        return [line.split("title=")[0] for line in out.splitlines()]

    assert shown({AGENT: frozenset({3})}) == [
        f"::error file={AGENT},line=3,col=9,endLine=3,endColumn=30,",
        f"::notice file={AGENT},line=3,col=44,endLine=3,endColumn=54,",
        f"::error file={AGENT},line=1,col=1,endLine=4,endColumn=1,",
    ]
    assert shown({AGENT: frozenset({2})}) == [f"::error file={AGENT},line=1,col=1,endLine=4,endColumn=1,"]
    # a deletion-only change: the file changed, no line of it did; file-level findings still show
    assert shown({MCP: frozenset()}) == ["::warning file=.mcp.json,"]
    assert shown({}) == []


def test_github_says_how_many_findings_the_annotation_cap_drops(project: Path) -> None:
    many = [UNKNOWN_TOOL.finding(location=Location(AGENT, n), ref=f"r{n}", guess="y") for n in range(1, 14)]
    notes = [NOT_SNAPSHOTTED.finding(location=Location(MCP, n), server=f"s{n}") for n in range(1, 4)]
    lines = render(many + notes, "github", context(project)).splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 13
    assert lines[-1].startswith("quiver: 3 errors not annotated: GitHub shows at most 10 annotations of each kind")
    assert not any(line.startswith("quiver:") for line in render(notes, "github", context(project)).splitlines())
