"""Defects found by using quiver like a user: lint agrees with compile, paths and outputs fail plainly."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from projects import agent_text, make_project, stdio, tools
from quiver.cli import cli as main


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--project", str(root)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def project(root: Path, toml: str = "") -> Path:
    made = make_project(
        root,
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['time/*']")},
        mcp={"mcpServers": {"time": stdio()}},
        catalogs={"time": tools("get_current_time", 1)},
    )
    if toml:
        (made / "quiver.toml").write_text(toml)
    return made


BAD_POLICY = '[servers.time]\ntimeout = 5000\napproval = "sometimes"\n'


def test_lint_reports_what_compile_rejects_in_policy_tables(tmp_path: Path) -> None:
    root = project(tmp_path, BAD_POLICY)
    code, out, _ = run(root, "lint", "--format", "github")
    assert code == 1
    assert (
        "::error file=quiver.toml,line=2,col=1,title=QVR003 unknown-config-key::unknown key `servers.time.timeout`"
        " in the quiver config (did you mean `timeout_ms`?)"
    ) in out
    assert "file=quiver.toml,line=3,col=1,title=QVR004 invalid-execution-policy::`servers.time.approval` must be" in out


def test_compile_names_every_bad_policy_key_and_value_with_its_place(tmp_path: Path) -> None:
    root = project(tmp_path, BAD_POLICY)
    code, _, err = run(root, "compile")
    assert code == 2
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert errors[0].startswith("error: quiver.toml:2:1: unknown policy key `timeout` in `servers.time`")
    assert errors[1].startswith("error: quiver.toml:3:1: `servers.time.approval` must be one of")
    assert not (root / "build").exists()


def test_bad_severity_names_the_rule_at_its_line(tmp_path: Path) -> None:
    root = project(tmp_path, '[severity]\nAGT002 = "error"\nAGT011 = "bogus"\n')
    code, out, _ = run(root, "lint")
    assert code == 2
    assert "quiver.toml:3:1: error[QVR002] `severity.AGT011` must be" in out


def test_lint_of_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, out, err = run(root, "lint", str(root / "nosuch.md"))
    assert code == 2
    assert f"error: {root / 'nosuch.md'}: no such file or directory" in err
    assert "All checks passed" not in out


def test_lint_of_a_path_quiver_does_not_read_says_so(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "README.md").write_text("# hi\n")
    code, _, err = run(root, "lint", str(root / "README.md"))
    assert code == 0
    assert "README.md: not a file quiver reads" in err


def test_broken_agent_outside_path_neither_shown_nor_failing(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".claude/agents").mkdir(parents=True)
    # broken for Claude Code too: no `key: value` line its second try would quote (see claude_frontmatter)
    (root / ".claude/agents/broken.md").write_text('---\ndescription: "unclosed\n---\nbody\n')
    code, out, _ = run(root, "lint", str(root / ".github"))
    assert "broken.md" not in out
    assert code == 0  # the exit code follows what is shown
    code, out, _ = run(root, "lint")
    assert code == 2 and ".claude/agents/broken.md" in out


def test_broken_project_config_is_shown_whatever_the_path(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".mcp.json").write_text("{ nope")
    code, out, _ = run(root, "lint", str(root / ".github"))
    assert code == 2 and ".mcp.json" in out


def test_missing_baseline_is_a_usage_error_naming_the_fix(tmp_path: Path) -> None:
    root = project(tmp_path)
    missing = tmp_path / "missing.json"
    code, _, err = run(root, "lint", "--baseline", str(missing))
    assert code == 2
    assert f"{missing}: no such baseline file" in err and "--update-baseline" in err
    code, _, _ = run(root, "lint", "--baseline", str(missing), "--update-baseline")
    assert code == 0 and missing.is_file()


def test_unwritable_output_paths_are_one_line_exit_2(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    blocker = tmp_path / "f"
    blocker.write_text("a file, not a folder\n")
    assert run(root, "compile")[0] == 0
    for args in (
        ("lint", "--output", str(blocker / "x")),
        ("lint", "--baseline", str(blocker / "b.json"), "--update-baseline"),
        ("compile", "--out", str(blocker / "out")),
        ("budget", "--html", str(blocker / "r.html")),
    ):
        code, _, err = run(root, *args)
        assert code == 2, args
        (line,) = err.strip().splitlines()
        assert line.startswith(f"error: cannot write {blocker}/") and f"{blocker} is not a directory" in line


def test_compile_exits_1_on_an_error_finding_and_still_writes(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".github/agents/b.agent.md").write_text(agent_text("description: d\ntools: ['time/nosuch']"))
    code, _, err = run(root, "compile")
    assert "error[AGT008]" in err
    assert code == 1
    assert (root / "build/quiver/b.json").is_file()


def test_compile_sorts_rows_and_findings_by_name(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        agents={
            ".github/agents/abe.agent.md": agent_text("description: d\ntools: ['early/*']"),
            ".claude/agents/zed.md": agent_text("description: d\ntools: mcp__late"),
        },
        mcp={"mcpServers": {"early": stdio(), "late": stdio()}},
    )
    _, out, err = run(root, "compile")
    rows = [line.split()[0] for line in out.splitlines()[2:]]
    assert rows[:2] == ["abe", "zed"]
    warnings = [line for line in err.splitlines() if "MCP012" in line]
    assert len(warnings) == 2
    assert "server `early`" in warnings[0] and "server `late`" in warnings[1]  # file order, not agent order


def test_check_without_emit_leaves_host_exports_alone(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert run(root, "compile", "--emit", "openai")[0] == 0
    export = root / "build/quiver/a.openai.json"
    assert export.is_file()
    code, _, err = run(root, "compile", "--check")
    assert code == 0, err  # a pre-commit `quiver compile --check` does not fail on another host's export
    assert run(root, "compile")[0] == 0
    assert export.is_file()  # and `quiver compile` does not delete it
    assert run(root, "compile", "--check", "--emit", "openai")[0] == 0
    (root / ".github/agents/a.agent.md").unlink()
    assert run(root, "compile")[0] == 0
    assert not export.exists()  # an agent that is gone takes its exports with it


def test_a_misspelt_built_in_is_an_error_with_a_did_you_mean(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".github/agents/b.agent.md").write_text(agent_text("description: d\ntools: [serch, Reed, todo]"))
    code, out, _ = run(root, "lint", "--select", "AGT008,AGT022", "--format", "github")
    assert code == 1
    assert "col=9,title=AGT008 unknown-tool-reference::`serch`" in out and "(did you mean `search`?)" in out
    assert "(did you mean `read`?)" in out and "AGT022" not in out


def test_explain_suggests_tools_and_agent_ids_for_display_names(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".github/agents/janitor.agent.md").write_text(agent_text("name: C#/.NET Janitor\ndescription: d"))
    code, _, err = run(root, "explain", "a", "time/get_current_tim")
    assert code == 2 and "(did you mean `time/get_current_time_00`?)" in err
    code, _, err = run(root, "explain", "C#/.NET Janitor")
    assert code == 2 and "did you mean `janitor`? an agent goes by its id" in err


def test_tool010_is_one_note_per_server(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['one/*', 'many/*']")},
        mcp={"mcpServers": {"one": stdio(), "many": stdio()}},
        catalogs={"one": tools("get", 1), "many": tools("op", 7)},
    )
    _, out, _ = run(root, "lint", "--select", "TOOL010", "--format", "github")
    notes = out.strip().splitlines()
    assert len(notes) == 2
    assert "7 tools of server `many` set neither" in notes[0] and "`op_04` and 2 more" in notes[0]
    assert "`one/get_00` sets neither" in notes[1] and '[tool.quiver.tools."one/get_00"]' in notes[1]


def test_diff_output_to_an_unwritable_path_is_one_line(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (tmp_path / "f").write_text("a file\n")
    lock = str(root / "quiver.lock.json")
    code, _, err = run(root, "diff", lock, lock, "--output", str(tmp_path / "f" / "r.txt"))
    assert code == 2 and err.strip().splitlines() == [
        f"error: cannot write {tmp_path}/f/r.txt: {tmp_path}/f is not a directory "
        "(choose a path in a folder you can write to)"
    ]
