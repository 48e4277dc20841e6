"""`quiver lint --fix`: edits touch only their span, overlapping edits wait, counts are findings fixed."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from quiver.cli import cli
from quiver.lint.fix import apply_fixes
from quiver.lint.run import run
from quiver.model import Edit, Finding

AGENT = ".github/agents/a.agent.md"
FRONTMATTER = """\
---
# the owner keeps this comment
name: A
description: Uses the old spelling and a comma string.
tools: read, edit/editFiles, github/*   # keep this comment
user-invokable: false
---
Body line one.
  Indented body line with tools: a, b and user-invokable inside.
"""


def project(tmp_path: Path, text: str = FRONTMATTER, rel: str = AGENT) -> Path:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def lint_and_fix(root: Path, *codes: str) -> int:
    return apply_fixes(root, run(root, select=list(codes)).findings)


def test_fix_renames_user_invokable_and_leaves_every_other_byte_alone(tmp_path: Path) -> None:
    path = project(tmp_path)
    assert lint_and_fix(tmp_path, "AGT005") == 1
    assert path.read_text(encoding="utf-8") == FRONTMATTER.replace(
        "user-invokable: false\n---", "user-invocable: false\n---"
    )


def test_fix_rewrites_a_comma_string_as_a_flow_list_keeping_order_spelling_and_comment(tmp_path: Path) -> None:
    path = project(tmp_path)
    assert lint_and_fix(tmp_path, "AGT013") == 1
    expected = FRONTMATTER.replace(
        "tools: read, edit/editFiles, github/*   #", 'tools: ["read", "edit/editFiles", "github/*"]   #'
    )
    assert path.read_text(encoding="utf-8") == expected


def test_both_fixes_apply_in_one_pass_and_a_second_lint_finds_nothing_to_fix(tmp_path: Path) -> None:
    path = project(tmp_path)
    assert lint_and_fix(tmp_path, "AGT005", "AGT013") == 2
    text = path.read_text(encoding="utf-8")
    assert 'tools: ["read", "edit/editFiles", "github/*"]' in text and "user-invocable: false\n---" in text
    assert "tools: a, b and user-invokable inside." in text  # the body is not frontmatter
    assert run(tmp_path, select=["AGT005", "AGT013"]).findings == ()


def test_quoted_values_and_keys_are_rewritten_without_their_quotes(tmp_path: Path) -> None:
    text = "---\ndescription: Quoted.\ntools: 'read, search'\n\"user-invokable\": true\n---\nBody.\n"
    path = project(tmp_path, text)
    assert lint_and_fix(tmp_path, "AGT005", "AGT013") == 2
    assert path.read_text(encoding="utf-8") == (
        '---\ndescription: Quoted.\ntools: ["read", "search"]\n"user-invocable": true\n---\nBody.\n'
    )


def test_crlf_line_endings_and_a_byte_order_mark_survive_a_fix(tmp_path: Path) -> None:
    original = "\ufeff" + FRONTMATTER.replace("\n", "\r\n")
    path = project(tmp_path, original)
    assert lint_and_fix(tmp_path, "AGT005", "AGT013") == 2
    expected = original.replace("user-invokable: false\r\n---", "user-invocable: false\r\n---").replace(
        "tools: read, edit/editFiles, github/*", 'tools: ["read", "edit/editFiles", "github/*"]'
    )
    assert path.read_bytes() == expected.encode("utf-8")


def test_no_fix_is_offered_when_both_spellings_are_present(tmp_path: Path) -> None:
    text = "---\ndescription: Both.\nuser-invokable: false\nuser-invocable: false\n---\n"
    path = project(tmp_path, text)
    findings = run(tmp_path, select=["AGT005"]).findings
    assert [f.rule for f in findings] == ["AGT005"] and findings[0].fixes == ()
    assert apply_fixes(tmp_path, findings) == 0
    assert path.read_text(encoding="utf-8") == text


def test_a_multi_line_comma_string_is_reported_but_not_rewritten(tmp_path: Path) -> None:
    text = "---\ndescription: Folded.\ntools: read,\n  edit\n---\n"
    project(tmp_path, text)
    findings = run(tmp_path, select=["AGT013"]).findings
    assert [f.rule for f in findings] == ["AGT013"] and findings[0].fixes == ()


def test_claude_agent_comma_strings_are_left_alone(tmp_path: Path) -> None:
    text = "---\nname: c\ndescription: Claude.\ntools: Read, Grep\n---\n"
    path = project(tmp_path, text, ".claude/agents/c.md")
    assert lint_and_fix(tmp_path, "AGT013") == 0
    assert path.read_text(encoding="utf-8") == text


def finding(*edits: Edit) -> Finding:
    return Finding(rule="AGT005", name="n", severity="warning", message="m", fixes=edits)


def test_overlapping_edits_are_skipped_and_not_counted(tmp_path: Path) -> None:
    path = project(tmp_path, "abcdef\nghijkl\n", "f.txt")
    first = finding(Edit("f.txt", 1, 2, 1, 5, "X"))
    overlapping = finding(Edit("f.txt", 1, 4, 1, 6, "Y"))
    disjoint = finding(Edit("f.txt", 2, 1, 2, 3, "Z"))
    assert apply_fixes(tmp_path, [first, overlapping, disjoint]) == 2
    assert path.read_text(encoding="utf-8") == "aXef\nZijkl\n"


def test_a_finding_with_an_edit_outside_the_file_changes_nothing(tmp_path: Path) -> None:
    path = project(tmp_path, "abc\n", "f.txt")
    assert apply_fixes(tmp_path, [finding(Edit("f.txt", 1, 1, 1, 2, "X"), Edit("f.txt", 9, 1, 9, 2, "Y"))]) == 0
    assert apply_fixes(tmp_path, [finding(Edit("f.txt", 1, 3, 1, 9, "X"))]) == 0
    assert path.read_text(encoding="utf-8") == "abc\n"


def test_edits_of_one_finding_apply_together_bottom_up(tmp_path: Path) -> None:
    path = project(tmp_path, "one two\nthree\n", "f.txt")
    both = finding(Edit("f.txt", 1, 1, 1, 4, "1"), Edit("f.txt", 2, 1, 2, 6, "3"), Edit("f.txt", 1, 5, 1, 8, "2"))
    assert apply_fixes(tmp_path, [both]) == 1
    assert path.read_text(encoding="utf-8") == "1 2\n3\n"


def test_lint_fix_through_the_cli_rewrites_the_file_and_reports_what_is_left(tmp_path: Path) -> None:
    path = project(tmp_path)
    result = CliRunner().invoke(cli, ["lint", "--project", str(tmp_path), "--fix", "--select", "AGT005,AGT013"])
    assert "Traceback" not in result.output
    assert result.exit_code == 0, result.output
    assert "fixed 2 finding(s)" in result.stderr
    assert "user-invocable: false" in path.read_text(encoding="utf-8")


def test_columns_on_the_first_line_do_not_count_a_byte_order_mark(tmp_path: Path) -> None:
    path = project(tmp_path, "\ufeffabc\n", "f.txt")
    assert apply_fixes(tmp_path, [finding(Edit("f.txt", 1, 1, 1, 2, "X"))]) == 1
    assert path.read_bytes() == "\ufeffXbc\n".encode()
