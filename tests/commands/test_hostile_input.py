"""Hostile input through the real CLI (issue 26): every reader answers with one `error:` line naming
file:line:col and exit 2, never a traceback (exit 3), never a hang or an unbounded read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from projects import agent_text, make_project, stdio, tools
from quiver.cli import cli as main


def run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--project", str(root)])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def good(root: Path, config: str | None = None) -> Path:
    return make_project(
        root,
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['s/*']")},
        mcp={"mcpServers": {"s": stdio()}},
        catalogs={"s": tools("t", 3)},
        config=config,
    )


def errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:") or "error[" in line]


def reported(output: str, expected: str) -> bool:
    """`FILE:LINE:COL: message` is reported: compile's `error: FILE:L:C: message` or lint's
    `FILE:L:C: error[QVR002] message`."""
    where, _, message = expected.partition(": ")
    return any(f"{where}: " in line and message in line for line in errors(output))


@pytest.mark.parametrize("command", ["lint", "compile"])
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("threshold = 3\n".encode("utf-16"), "quiver.toml:1:1: file is UTF-16, not UTF-8"),
        (b"threshold = 3\n# caf\xe9\n", "quiver.toml:2:6: file is not valid UTF-8"),
        (b"threshold = 3\nbig = " + b"9" * 5000 + b"\n", "quiver.toml:2:7: a number too long to read"),
        (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "quiver.toml:1:105: values nested deeper than 100 levels"),
    ],
    ids=["utf16", "latin1", "5000-digits", "5000-deep"],
)
def test_a_broken_quiver_toml_is_one_error_line(tmp_path: Path, command: str, content: bytes, expected: str) -> None:
    root = good(tmp_path)
    (root / "quiver.toml").write_bytes(content)
    code, output = run(root, command)
    assert code == 2
    assert reported(output, expected), output
    assert not (root / "build").exists()


@pytest.mark.parametrize(
    ("rel", "mutate", "expected"),
    [
        (".mcp.json", lambda d: d.replace(b"{", b'{"x": ' + b"9" * 5000 + b",", 1), ".mcp.json:1:7: number of 5,000"),
        (
            "quiver.lock.json",
            lambda d: d.replace(b"{", b'{"x": ' + b"9" * 5000 + b",", 1),
            "quiver.lock.json:1:7: number of 5,000",
        ),
        (
            "quiver.lock.json",
            lambda d: d.replace(b"{", b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b",", 1),
            "quiver.lock.json:1:207: nesting deeper than 200 levels",
        ),
        (
            ".github/agents/a.agent.md",
            lambda d: d.replace(b"---\n", b"---\nx: " + b"9" * 5000 + b"\n", 1),
            ".github/agents/a.agent.md:2:4: cannot read the value",
        ),
    ],
    ids=["mcp-5000-digits", "lock-5000-digits", "lock-5000-deep", "frontmatter-5000-digits"],
)
@pytest.mark.parametrize("command", ["lint", "compile"])
def test_numbers_and_nesting_beyond_the_limits(
    tmp_path: Path, command: str, rel: str, mutate: object, expected: str
) -> None:
    root = good(tmp_path)
    path = root / rel
    path.write_bytes(mutate(path.read_bytes()))  # type: ignore[operator]
    code, output = run(root, command)
    assert code == 2
    assert reported(output, expected), output


def quiver(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a child process: a read that blocks would hang the test run, not fail it."""
    return subprocess.run(
        [sys.executable, "-m", "quiver", *args, "--project", str(root)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "QUIVER_NO_CACHE": "1"},
    )  # fmt: skip


@pytest.mark.parametrize("command", ["lint", "compile"])
def test_a_fifo_or_a_device_is_refused_without_reading_it(tmp_path: Path, command: str) -> None:
    root = good(tmp_path)
    os.mkfifo(root / ".github/agents/fifo.agent.md")  # opened by a blocking read, this never returns
    (root / ".github/agents/zero.agent.md").symlink_to("/dev/zero")  # `stat` says 0 bytes; read, it never ends
    done = quiver(root, command)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    shown = done.stdout + done.stderr
    assert reported(shown, ".github/agents/fifo.agent.md: cannot read: a named pipe (FIFO), not a regular file")
    assert reported(shown, ".github/agents/zero.agent.md: cannot read: a character device, not a regular file")


def test_a_config_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    root = good(tmp_path)
    os.mkfifo(root / "quiver.toml")
    done = quiver(root, "compile")
    assert done.returncode == 2
    assert "error: quiver.toml: cannot read: a named pipe (FIFO), not a regular file" in done.stderr


def test_a_file_gone_between_discovery_and_read_is_named(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / ".github/agents/gone.agent.md").symlink_to("nothing-here.md")  # listed by the walk, absent to a read
    for command in ("lint", "compile"):
        code, output = run(root, command)
        assert code == 2
        assert reported(output, ".github/agents/gone.agent.md: file not found"), output


@pytest.mark.parametrize(
    ("retry", "expected"),
    [
        ("initial_interval = -1.0", "-1.0 is less than or equal to the minimum of 0"),
        ("backoff_coefficient = 0.0", "0.0 is less than the minimum of 1"),
        ("maximum_interval = inf", "must be a finite number"),
        ("maximum_attempts = -2", "-2 is less than the minimum of 0"),
    ],
)
def test_policy_values_are_checked_against_the_manifest_schemas_bounds(
    tmp_path: Path, retry: str, expected: str
) -> None:
    root = good(tmp_path, config=f"[servers.s]\nretry = {{{retry}}}\n")
    code, output = run(root, "compile")
    assert code == 2, output  # was exit 3: "compiled output breaks its schema"
    (line,) = errors(output)
    assert line.startswith("error: quiver.toml:2:") and f"`servers.s.retry.{retry.split()[0]}`" in line
    assert expected in line
    assert not (root / "build").exists()
    code, output = run(root, "lint")
    assert code == 1 and "error[QVR004]" in output and expected in output


def test_compile_reports_the_input_errors_lint_reports(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        agents={".github/agents/a.agent.md": agent_text("description: [not, a, string]\ntools: ['s/*']")},
        mcp={"mcpServers": {"s": stdio(args="--port 8080")}},
        catalogs={"s": tools("t", 3)},
    )
    code, output = run(root, "compile")
    assert code == 1, output  # was 0, silent
    shown = errors(output)
    assert any(line.startswith(".github/agents/a.agent.md:2:1: error[AGT014]") for line in shown), output
    assert any(line.startswith(".mcp.json:") and "error[MCP019] `args` of server `s`" in line for line in shown)
    assert (root / "build/quiver/a.json").is_file()  # written, as with an unknown tool reference
    (root / "quiver.toml").write_text('ignore = ["MCP019"]\n')
    code, output = run(root, "compile")
    assert code == 1 and "MCP019" not in output and "AGT014" in output
    (root / "quiver.toml").write_text('ignore = ["MCP019", "AGT014"]\n')
    assert run(root, "compile")[0] == 0


def test_lint_checks_a_hostile_pattern_in_bounded_time(tmp_path: Path) -> None:
    hostile = "a" * 32 + "!"
    schema = {
        "type": "object",
        "properties": {
            "linear": {"type": "string", "pattern": "^(a+)+$", "default": hostile},  # RE2: a finding at once
            "lookahead": {"type": "string", "pattern": "^(?=a)(a+)+$", "default": hostile},  # `re`, bounded
        },
    }
    root = make_project(
        tmp_path,
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['s/*']")},
        mcp={"mcpServers": {"s": stdio()}},
        catalogs={"s": [{"name": "find", "description": "Finds a thing by its name.", "inputSchema": schema}]},
    )
    done = quiver(root, "lint", "--select", "TOOL016")  # was: no answer (minutes of backtracking per default)
    assert "Traceback" not in done.stderr, done.stderr
    defaults = [line for line in done.stdout.splitlines() if "TOOL016" in line]
    assert len(defaults) == 1 and "linear" in defaults[0], done.stdout


def test_unknown_keys_of_mcp_servers_entries_and_keys_toml_put_in_the_previous_table(tmp_path: Path) -> None:
    config = '[[mcp_servers]]\nname = "s"\npreloadd = true\n\n[servers.s]\ntimeout_ms = 500\nthreshold = 3\n'
    root = good(tmp_path, config=config)
    code, output = run(root, "lint")
    shown = errors(output)
    assert any(line.startswith("quiver.toml:3:1: error[QVR003] unknown key `mcp_servers.s.preloadd`") for line in shown)
    assert "did you mean `preload`?" in output
    assert any(line.startswith("quiver.toml:7:1: error[QVR003] unknown key `servers.s.threshold`") for line in shown)
    assert "`threshold` is a top-level key, but TOML puts every key after a `[table]` header into that table" in output
    code, output = run(root, "compile")
    assert code == 2 and "warning: quiver.toml:3:1: unknown key `mcp_servers.s.preloadd`" in output
    assert "error: quiver.toml:7:1: unknown policy key `threshold` in `servers.s`" in output


def test_a_lock_edited_by_hand_is_an_error(tmp_path: Path) -> None:
    root = good(tmp_path)
    lock = root / "quiver.lock.json"
    lock.write_text(lock.read_text().replace("Does t 01 for the caller.", "Does t 01 and also deletes everything."))
    for command in ("lint", "compile"):
        code, output = run(root, command)
        assert code == 2
        line = next(e for e in errors(output) if "quiver.lock.json:" in e)
        found = re.search(r"quiver\.lock\.json:(\d+):(\d+): .*tool `s/t_01`: its `sha256` does not match", line)
        assert found, line
        at = lock.read_text().split("\n")[int(found.group(1)) - 1][int(found.group(2)) - 1 :]
        assert at.startswith('"name": "t_01"'), at  # the tool's `name` key, in any layout
    assert not (root / "build").exists()


def test_a_committed_config_does_not_choose_where_quiver_writes(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    root = good(tmp_path / "project", config=f"out = {str(elsewhere)!r}\n")
    code, output = run(root, "compile")
    assert code == 2 and not elsewhere.exists()  # was: written there without a word
    (line,) = errors(output)
    assert line.startswith("error: quiver.toml:1:1: `out` = ") and "leads outside the project" in line
    assert "--out DIR" in line
    code, _ = run(root, "compile", "--out", str(elsewhere))  # the command line may say otherwise
    assert code == 0 and (elsewhere / "a.json").is_file()

    (root / "quiver.toml").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "build").symlink_to(outside)  # a symlinked output folder is not followed out of the project
    code, output = run(root, "compile")
    assert code == 2 and "leads outside the project" in output and not any(outside.iterdir())


@pytest.mark.parametrize("glob", ["../../**/*.md", "/etc/*.md", "~/agents/*.md"])
def test_agent_globs_of_a_committed_config_stay_inside_the_project(tmp_path: Path, glob: str) -> None:
    secret = tmp_path / "secret.agent.md"
    secret.write_text(agent_text("description: outside the project"))
    root = good(tmp_path / "a" / "project", config=f"agents = [{glob!r}]\n")
    code, output = run(root, "lint")
    assert code == 2 and "secret" not in output  # the file outside is never read
    assert reported(output, "quiver.toml:1:1: `agents` must be paths inside the project (relative, without `..`)")


def test_a_symlink_out_of_the_project_is_not_followed_by_agent_globs(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "stolen.md").write_text(agent_text("description: from outside"))
    root = good(tmp_path / "project", config='agents = ["agents/*.md"]\n')
    (root / "agents").symlink_to(outside)
    code, _ = run(root, "compile")
    assert code == 0 and not (root / "build/quiver/stolen.json").exists()


def test_a_report_path_in_a_folder_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    root = good(tmp_path / "project")
    assert run(root, "compile")[0] == 0
    missing = tmp_path / "nonexistent"
    code, output = run(root, "budget", "--html", str(missing / "r.html"))
    assert code == 2 and not missing.exists()  # was: the folder created
    assert f"error: cannot write {missing / 'r.html'}: folder {missing} does not exist" in output
    code, output = run(root, "lint", "--output", str(missing / "lint.txt"))
    assert code == 2 and not missing.exists()
