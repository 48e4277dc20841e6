from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from report_cases import AGENT, UNKNOWN_TOOL, context, diff_findings, lint_findings

from quiver.model import Location
from quiver.report import text
from quiver.report.render import render

ANSI = re.compile(r"\x1b\[[0-9;]*m")

EXPECTED = """\
.github/agents/triage.agent.md:3:9: error[AGT008] `github/serch_issues` matches no built-in tool and no tool of any \
visible server
  3 | tools: ["github/serch_issues", "time/now", "time/now"]
    |         ^~~~~~~~~~~~~~~~~~~~~
  hint: did you mean `github/search_issues`?

.github/agents/triage.agent.md:3:44: info[AGT012] `time/now` is listed twice in `tools`
  3 | tools: ["github/serch_issues", "time/now", "time/now"]
    |                                            ^~~~~~~~~~
  hint: remove the second entry

.mcp.json:3:5: warning[MCP012] server `notion` has no catalog in the lock file; its tools are unknown
  3 |     "notion": {"command": "npx", "args": ["-y", "@notionhq/notion-mcp-server"]}
    |     ^
  hint: run `quiver snapshot --server notion`

Found 1 error, 1 warning, 1 info (1 fixable with --fix; 2 suppressed; 1 in baseline)
"""


def test_text_quotes_each_source_line_with_a_caret_and_ends_with_the_counts(project: Path) -> None:
    ctx = context(project, summary={"suppressed": 2, "baselined": 1})
    assert render(lint_findings(), "text", ctx) == EXPECTED


def test_text_is_plain_without_color_and_the_same_text_under_ansi_with_color(project: Path) -> None:
    plain = render(lint_findings(), "text", context(project))
    colored = render(lint_findings(), "text", context(project, color=True))
    assert "\x1b[" not in plain
    assert "\x1b[31m" in colored  # errors in red
    assert ANSI.sub("", colored) == plain


def test_text_says_all_checks_passed_and_still_counts_what_was_left_out(project: Path) -> None:
    assert render([], "text", context(project)) == "All checks passed.\n"
    ctx = context(project, summary={"suppressed": 0, "baselined": 3})
    assert render([], "text", ctx) == "All checks passed (3 in baseline).\n"


def test_text_keeps_the_order_given_while_grouping_by_file(project: Path) -> None:
    first, second, third = lint_findings()
    out = render([first, third, second], "text", context(project))
    heads = [line.split(": ", 1)[0] for line in out.splitlines() if line.startswith((".github", ".mcp"))]
    assert heads == [f"{AGENT}:3:9", f"{AGENT}:3:44", ".mcp.json:3:5"]


def test_text_prints_the_witness_compactly_under_diff_findings_only(project: Path) -> None:
    out = render(diff_findings(), "text", context(project, tool="diff"))
    assert out.splitlines()[:3] == [
        "quiver.lock.json: error[CTR020] tool `issue_read`: new required property `issue_number`",
        "  hint: old callers never send `issue_number`: make it optional or give it a default",
        '  witness (arguments): {"issueNumber": 1, "owner": "a"}',
    ]
    assert out.endswith("\n\nFound 2 errors, 1 info\n")
    assert "--fix" not in out
    assert "witness" not in render(diff_findings(), "text", context(project, tool="lint"))


def test_text_reads_each_source_file_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    real = text._SourceCache._read

    def counting(self: text._SourceCache, rel: str) -> list[str] | None:
        reads.append(rel)
        return real(self, rel)

    monkeypatch.setattr(text._SourceCache, "_read", counting)
    render(lint_findings() * 3, "text", context(project))
    assert reads == [AGENT, ".mcp.json"]


def test_text_omits_the_snippet_when_the_line_cannot_be_quoted(project: Path) -> None:
    gone = UNKNOWN_TOOL.finding(location=Location("missing.agent.md", 2, 1), ref="x", guess="y")
    past_end = replace(gone, location=Location(AGENT, 99, 1))
    line_only = replace(gone, location=Location(AGENT, 0))
    out = render([gone, past_end, line_only], "text", context(project))
    assert " | " not in out
    assert out.startswith("missing.agent.md:2:1: error[AGT008]")
    assert f"\n{AGENT}: error[AGT008]" in out


def test_text_caret_follows_tabs_and_marks_one_column_for_a_multiline_span(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\n\tkey: value\x1b[2J\n")
    finding = UNKNOWN_TOOL.finding(location=Location("a.md", 2, 3, 4, 1), ref="x", guess="y")
    lines = render([finding], "text", context(tmp_path)).splitlines()
    assert lines[1:3] == ["  2 | \tkey: value?[2J", "    | \t ^"]


def _cells(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def test_text_caret_stays_under_its_column_on_a_line_wider_than_the_terminal(tmp_path: Path) -> None:
    target = "github/serch_issues"
    long_line = "tools: [" + ", ".join(f'"srv/tool_{i:03d}"' for i in range(20)) + f', "{target}"]'
    column = long_line.index(target) + 1
    (tmp_path / "a.md").write_text(f"x\n{long_line}\n")
    finding = UNKNOWN_TOOL.finding(location=Location("a.md", 2, column, 2, column + len(target)), ref="x", guess="y")
    for width in (60, 80, 100):
        lines = render([finding], "text", context(tmp_path, width=width)).splitlines()
        source, caret = lines[1], lines[2]
        assert max(len(source), len(caret)) <= width  # nothing for the terminal to wrap
        start = caret.index("^")
        assert source[start : start + len(target)] == target, (source, caret)
        assert caret[start:] == "^" + "~" * (len(target) - 1)
        assert "..." in source
    # without a width (not a terminal) the line is quoted whole
    assert long_line in render([finding], "text", context(tmp_path)).splitlines()[1]


def test_text_caret_counts_wide_characters_as_two_cells(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\n名前: 値 srv/tool\n")
    finding = UNKNOWN_TOOL.finding(location=Location("a.md", 2, 7, 2, 15), ref="x", guess="y")
    source, caret = render([finding], "text", context(tmp_path)).splitlines()[1:3]
    prefix = source[: source.index("srv/tool")]
    assert _cells(caret[: caret.index("^")]) == _cells(prefix)
    assert caret.endswith("^" + "~" * 7)
