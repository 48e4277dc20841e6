from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from report_cases import UNKNOWN_TOOL, context, diff_findings, lint_findings

from quiver.model import Location
from quiver.report.render import render

EXPECTED = """\
## quiver lint

**1 error, 1 warning, 1 info** (1 fixable with --fix; 4 suppressed)

| severity | rule | location | message |
| --- | --- | --- | --- |
| error | `AGT008` unknown-tool-reference | `.github/agents/triage.agent.md:3:9` | \
`github/serch_issues` matches no built-in tool and no tool of any visible server<br>hint: did you mean \
`github/search_issues`? |
| info | `AGT012` duplicate-tool-entry | `.github/agents/triage.agent.md:3:44` | \
`time/now` is listed twice in `tools`<br>hint: remove the second entry |
| warning | `MCP012` server-not-snapshotted | `.mcp.json:3:5` | \
server `notion` has no catalog in the lock file; its tools are unknown<br>hint: run `quiver snapshot --server notion` |
"""


def test_markdown_lint_report_has_title_counts_and_one_table(project: Path) -> None:
    ctx = context(project, summary={"suppressed": 4, "baselined": 0})
    assert render(lint_findings(), "markdown", ctx) == EXPECTED


def test_markdown_says_so_when_there_is_nothing_to_report(project: Path) -> None:
    assert render([], "markdown", context(project)) == "## quiver lint\n\nNo findings.\n"
    ctx = context(project, tool="diff", summary={"baselined": 2})
    assert render([], "markdown", ctx) == "## quiver diff\n\nNo findings (2 in baseline).\n"


def test_markdown_diff_report_lists_each_change_once_and_collapses_the_details(project: Path) -> None:
    out = render(diff_findings(), "markdown", context(project, tool="diff"))
    top, details = out.split("<details><summary>Every finding by tool", 1)
    assert top == (
        "## quiver diff\n\n**2 errors, 1 info** in 2 tools\n\n"
        "| severity | rule | change | tools |\n| --- | --- | --- | --- |\n"
        "| error | `CTR020` input-required-property-added | new required property `issue_number`<br>hint: old "
        "callers never send `issue_number`: make it optional or give it a default | `github/issue_read` |\n"
        "| error | `CTR020` input-required-property-added | new required property `query`<br>hint: old callers "
        "never send `query`: make it optional or give it a default | `notion/search` |\n"
        "| info | | 1 informational finding: `CTR004` tool-description-changed x1 | see the details |\n\n"
    )
    assert details.count("| severity | rule | location | message |") == 2
    github, notion = details.split("### `notion/search`")
    assert github.count("| `CTR0") == 2 and notion.count("| `CTR0") == 1
    assert (
        "<details><summary>witness for CTR020 input-required-property-added</summary>\n\n"
        '```json\n{\n  "arguments": {\n    "issueNumber": 1,\n    "owner": "a"\n  }\n}\n```\n\n</details>\n'
    ) in github
    assert '```json\n{\n  "arguments": {}\n}\n```' in notion
    assert out.endswith("</details>\n")


def test_the_same_change_in_several_tools_is_one_row(project: Path) -> None:
    from report_cases import REQUIRED_ADDED

    lock = Location("quiver.lock.json", 3)
    same = [
        REQUIRED_ADDED.finding(location=lock, server="github", tool=name, path=path)
        for name, path in (("a", "fields[].owner"), ("b", "owner"), ("c", "items[].owner"))
    ]
    out = render(same, "markdown", context(project, tool="diff"))
    rows = [line for line in out.split("<details>")[0].splitlines() if line.startswith("| error")]
    assert rows == [
        "| error | `CTR020` input-required-property-added | new required property `owner` | "
        "`github/a` (at `fields[].owner`), `github/b`, `github/c` (at `items[].owner`) |"
    ]


def test_markdown_escapes_pipes_and_newlines_in_cells(project: Path) -> None:
    finding = UNKNOWN_TOOL.finding(location=Location("a|b.md", 1, 1), ref="x | y\nz", guess="w")
    row = render([finding], "markdown", context(project)).splitlines()[-1]
    assert row == (
        "| error | `AGT008` unknown-tool-reference | `a\\|b.md:1:1` | "
        "`x \\| y<br>z` matches no built-in tool and no tool of any visible server<br>hint: did you mean `w`? |"
    )


def test_markdown_fences_a_witness_that_contains_backticks(project: Path) -> None:
    finding = diff_findings()[0]
    tricky = replace(finding, witness={"arguments": {"q": "```"}})
    out = render([tricky], "markdown", context(project, tool="diff"))
    assert '````json\n{\n  "arguments": {\n    "q": "```"\n  }\n}\n````' in out
