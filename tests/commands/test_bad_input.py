"""Bad input: one line naming file:line:col and what to do, exit 2, nothing half-written, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from projects import agent_text, make_project, stdio, tools
from quiver.cli import cli as main


def run(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--project", str(root)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr


def good(root: Path) -> Path:
    return make_project(
        root,
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['s/*']")},
        mcp={"mcpServers": {"s": stdio()}},
        catalogs={"s": tools("t", 3)},
    )


def test_malformed_yaml_names_file_line_and_column(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / ".github/agents/b.agent.md").write_text("---\ndescription: d\ntools: [a, b\n---\nbody\n")
    code, err = run(root, "compile")
    assert code == 2
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert line.startswith("error: .github/agents/b.agent.md:4:1: invalid YAML")
    assert (root / "build/quiver/a.json").is_file()  # the healthy agent still compiles
    assert not (root / "build/quiver/b.json").exists()


def test_malformed_json_config_writes_nothing(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / ".mcp.json").write_text('{"mcpServers": {"s": {"command": "x",}}}')
    code, err = run(root, "compile")
    assert code == 2
    assert err.strip().splitlines() == ["error: .mcp.json:1:38: trailing comma before `}` (remove the comma)"]
    assert not (root / "build").exists()


def test_duplicate_json_key_is_an_error(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / ".mcp.json").write_text('{"mcpServers": {"s": {"command": "a"},\n "s": {"command": "b"}}}')
    code, err = run(root, "compile")
    assert code == 2 and ".mcp.json:2:2: duplicate key `s` (first at line 1)" in err


def test_unknown_dialect(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / ".mcp.json").write_text(json.dumps({"servers_list": []}))
    code, err = run(root, "compile")
    assert code == 2 and "unknown MCP config dialect" in err and ".mcp.json:1:1" in err


def test_missing_import_file(tmp_path: Path) -> None:
    root = good(tmp_path)
    code, err = run(root, "snapshot", "--import", str(tmp_path / "nope.json"), "--server", "s")
    assert code == 2 and "nope.json: file not found" in err


def test_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    root = good(tmp_path)
    levels = ["a: &a [x,x,x,x,x,x,x,x,x,x]"]
    for i, name in enumerate("bcdefgh"):
        prev = "abcdefgh"[i]
        levels.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 10) + "]")
    (root / ".github/agents/bomb.agent.md").write_text("---\ndescription: d\n" + "\n".join(levels) + "\n---\n")
    code, err = run(root, "compile")
    assert code == 2 and "bomb.agent.md:" in err and "alias bomb" in err


def test_file_over_5_mb_is_refused(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / ".github/agents/huge.agent.md").write_text("---\ndescription: d\n---\n" + "x" * (5 * 1024 * 1024 + 1))
    code, err = run(root, "compile")
    assert code == 2 and "huge.agent.md: file is 5.0 MB, over the 5 MB limit" in err


def test_malformed_lock_file_is_refused_and_nothing_written(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / "quiver.lock.json").write_text('{"servers": {"s": {"tools": [}}}')
    code, err = run(root, "compile")
    assert code == 2 and "quiver.lock.json:1:" in err
    assert not (root / "build").exists()


def test_bad_config_value(tmp_path: Path) -> None:
    root = good(tmp_path)
    (root / "quiver.toml").write_text('tool_search = "sometimes"\n')
    code, err = run(root, "compile")
    assert code == 2 and 'quiver.toml:1:1: `tool_search` must be "auto", "always" or "never"' in err


def test_existing_manifests_survive_a_failed_run_whole(tmp_path: Path) -> None:
    root = good(tmp_path)
    assert run(root, "compile")[0] == 0
    before = (root / "build/quiver/a.json").read_bytes()
    (root / ".mcp.json").write_text("{")
    assert run(root, "compile")[0] == 2
    assert (root / "build/quiver/a.json").read_bytes() == before
    assert not [p for p in (root / "build/quiver").iterdir() if p.name.endswith(".tmp")]
