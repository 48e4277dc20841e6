"""The SKILL rule family and ROUTE008: which skills meet, the fix of SKILL003, hints and the selection prefix."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from quiver.cli import cli
from quiver.lint.fix import apply_fixes
from quiver.lint.registry import rules_of
from quiver.lint.run import run
from quiver.lint.skill.skill_name_invalid import kebab, name_problem, valid_name

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def skill(name: str | None, description: str = "Do one thing. Use when asked to.", extra: str = "") -> str:
    head = f"name: {name}\n" if name is not None else ""
    return f"---\n{head}description: {description}\n{extra}---\nBody.\n"


def codes(root: Path, select: str) -> list[tuple[str, str, int]]:
    found = run(root, select=[select]).findings
    return [(f.rule, f.location.file if f.location else "", f.location.line if f.location else 0) for f in found]


def test_select_skill_runs_the_family_and_only_it() -> None:
    found = run(FIXTURES / "SKILL003" / "bad", select=["SKILL"]).findings
    assert found and {f.rule for f in found} <= {r.code for r in rules_of("SKILL")}
    assert {f.rule for f in found} >= {"SKILL003"}
    assert [r.code for r in rules_of("SKILL")] == ["SKILL001", "SKILL002", "SKILL003", "SKILL004", "SKILL005"]


def test_the_cli_takes_the_skill_prefix_and_a_rule_name(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/pdf-tools/SKILL.md": skill("PDF_Tools")})
    result = CliRunner().invoke(cli, ["lint", "-C", str(tmp_path), "--select", "SKILL,skill-name-invalid"])
    assert result.exit_code == 0, result.output
    assert "SKILL003" in result.output and "rename it to `pdf-tools`" in result.output


def test_the_fix_writes_the_folder_name_over_a_plain_or_quoted_name_and_nothing_else(tmp_path: Path) -> None:
    plain = skill("PDF_Tools", extra="license: MIT\n")
    quoted = skill('"code-review"')
    write(tmp_path, {".claude/skills/pdf-tools/SKILL.md": plain, ".claude/skills/review/SKILL.md": quoted})
    assert apply_fixes(tmp_path, run(tmp_path, select=["SKILL003"]).findings) == 2
    assert (tmp_path / ".claude/skills/pdf-tools/SKILL.md").read_text() == plain.replace("PDF_Tools", "pdf-tools")
    assert (tmp_path / ".claude/skills/review/SKILL.md").read_text() == quoted.replace('"code-review"', "review")
    assert run(tmp_path, select=["SKILL003"]).findings == ()


def test_no_fix_in_a_plugin_after_a_comment_for_an_invalid_folder_or_a_name_an_agent_uses(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "plugins/acme/.claude-plugin/plugin.json": '{"name": "acme"}\n',
            "plugins/acme/skills/triage/SKILL.md": skill("issue-triage"),
            ".claude/skills/notes/SKILL.md": skill("Notes  # the old name"),
            ".github/skills/Data_Export/SKILL.md": skill("Data_Export"),
            ".claude/skills/review/SKILL.md": skill("code-review"),
            ".claude/agents/reviewer.md": "---\ndescription: Reviews.\nskills: [code-review]\n---\nReview.\n",
        },
    )
    found = run(tmp_path, select=["SKILL003"]).findings
    assert len(found) == 4 and all(f.fixes == () for f in found)


def test_a_fix_that_would_read_back_as_a_number_or_a_keyword_is_quoted(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/2024/SKILL.md": skill("Year-2024"), ".claude/skills/null/SKILL.md": skill("x")})
    apply_fixes(tmp_path, run(tmp_path, select=["SKILL003"]).findings)
    assert 'name: "2024"\n' in (tmp_path / ".claude/skills/2024/SKILL.md").read_text()
    assert 'name: "null"\n' in (tmp_path / ".claude/skills/null/SKILL.md").read_text()


def test_name_rules_follow_the_agent_skills_specification() -> None:
    assert all(valid_name(n) for n in ("pdf-tools", "1password", "a", "x" * 64))
    assert not any(valid_name(n) for n in ("PDF", "-pdf", "pdf-", "pdf--tools", "pdf_tools", "x" * 65, "", "pdé"))
    assert name_problem("PDF_Tools") == "has capital letters and has `_`"
    assert name_problem("my skill") == "has a space"
    assert kebab("PdfTools") == "pdf-tools" and kebab("Data_Export") == "data-export" and kebab("--") == ""


def test_skills_of_two_plugins_never_collide_but_a_plugin_meets_the_project_skills(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "plugins/a/.claude-plugin/plugin.json": '{"name": "a"}\n',
            "plugins/a/skills/format/SKILL.md": skill("format"),
            "plugins/b/.claude-plugin/plugin.json": '{"name": "b"}\n',
            "plugins/b/skills/format/SKILL.md": skill("format"),
        },
    )
    assert codes(tmp_path, "SKILL004") == []
    write(tmp_path, {".claude/skills/format/SKILL.md": skill("format")})
    assert codes(tmp_path, "SKILL004") == [
        ("SKILL004", "plugins/a/skills/format/SKILL.md", 2),
        ("SKILL004", "plugins/b/skills/format/SKILL.md", 2),
    ]


def test_a_claude_code_only_project_does_not_meet_github_skills(tmp_path: Path) -> None:
    files = {".github/skills/notes/SKILL.md": skill("notes"), ".claude/skills/notes/SKILL.md": skill("notes")}
    write(tmp_path, files)
    assert [c for c, _, _ in codes(tmp_path, "SKILL004")] == ["SKILL004"]
    write(tmp_path, {"quiver.toml": 'host = "claude-code"\n'})
    assert codes(tmp_path, "SKILL004") == []


def test_an_unknown_skill_names_the_file_the_host_does_not_read(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".github/skills/release-notes/SKILL.md": skill("release-notes"),
            ".claude/agents/writer.md": "---\ndescription: Writes.\nskills: release-notes\n---\nWrite.\n",
        },
    )
    (found,) = run(tmp_path, select=["SKILL005"]).findings
    assert found.location is not None and (found.location.line, found.location.column) == (3, 9)
    assert found.hint == (
        "`release-notes` is `.github/skills/release-notes/SKILL.md`, which Claude Code does not list for this agent"
    )


def test_near_duplicate_skill_descriptions_need_one_listing(tmp_path: Path) -> None:
    text = "Review Kubernetes manifests for security issues, resource limits and probes. Use before deploying."
    write(
        tmp_path,
        {
            ".claude/skills/k8s-review/SKILL.md": skill("k8s-review", text),
            ".github/skills/k8s-audit/SKILL.md": skill("k8s-audit", text),
        },
    )
    (found,) = run(tmp_path, select=["ROUTE008"]).findings
    assert "listed to Copilot CLI, VS Code and 1 other listing" in found.message  # Claude Code reads one of them
    write(tmp_path, {"quiver.toml": 'host = "claude-code"\n'})
    assert run(tmp_path, select=["ROUTE008"]).findings == ()


def test_a_skill_file_takes_inline_suppressions_and_is_a_path_lint_reads(tmp_path: Path) -> None:
    quiet = "---\n# quiver: ignore[SKILL003]\nname: Notes\ndescription: Keep notes. Use when asked to.\n---\nBody.\n"
    write(tmp_path, {".claude/skills/notes/SKILL.md": quiet, ".claude/skills/todo/SKILL.md": skill("Todo")})
    outcome = run(tmp_path, select=["SKILL003"], paths=[str(tmp_path / ".claude/skills/todo/SKILL.md")])
    assert [f.location.file for f in outcome.findings if f.location] == [".claude/skills/todo/SKILL.md"]
    assert outcome.outside == ()
    assert run(tmp_path, select=["SKILL003"]).suppressed == 1


def test_a_project_of_skills_only_is_checked_not_empty(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/notes/SKILL.md": skill("notes")})
    result = CliRunner().invoke(cli, ["lint", "-C", str(tmp_path)])
    assert result.exit_code == 0 and "All checks passed" in result.output, result.output
