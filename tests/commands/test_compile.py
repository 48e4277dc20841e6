from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from quiver.cli import cli


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args, "--project", str(root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_compile_writes_a_manifest_per_agent_and_an_index(demo: Path) -> None:
    code, out, err = run(demo, "compile")
    assert code == 0, err
    files = sorted(p.name for p in (demo / "build/quiver").iterdir())
    assert files == ["browser-tester.json", "index.json", "ops.json", "release-notes.json", "researcher.json"]
    assert "total (4 agents)" in out
    index = json.loads((demo / "build/quiver/index.json").read_text())
    assert [a["id"] for a in index["agents"]] == ["browser-tester", "ops", "release-notes", "researcher"]


def test_compile_is_byte_identical_across_runs_and_copies(demo: Path, tmp_path: Path) -> None:
    run(demo, "compile")
    first = {p.name: p.read_bytes() for p in (demo / "build/quiver").iterdir()}
    other = tmp_path / "other"
    shutil.copytree(demo, other, ignore=shutil.ignore_patterns("build", ".quiver"))
    run(other, "compile")
    second = {p.name: p.read_bytes() for p in (other / "build/quiver").iterdir()}
    assert first == second


def test_the_demo_covers_each_host_rule_and_each_gateway_rule(demo: Path) -> None:
    run(demo, "compile")

    def manifest(agent: str) -> dict:
        return json.loads((demo / f"build/quiver/{agent}.json").read_text())

    def codes(m: dict, side: str = "host") -> dict[tuple[str, str], str]:
        return {(t["server"], t["name"]): (t["reason"] if side == "host" else t["gateway"]["reason"])["code"]
                for t in m["tools"]}  # fmt: skip

    researcher = manifest("researcher")  # Copilot CLI, 115 MCP tools: it defers every one
    assert researcher["host"]["id"] == "copilot-cli" and researcher["tool_search"]["active"]
    assert set(codes(researcher).values()) == {"mcp-deferred"}
    assert researcher["host"]["search_tool"] == "tool_search_tool"
    gateway = codes(researcher, "gateway")  # quiver serve: its own rules
    assert gateway[("github", "search_issues")] == "preload-tools"
    assert gateway[("github", "list_commits")] == "deferred"
    assert gateway[("notion", "API-post-search")] == "server-not-preloaded"
    tester = manifest("browser-tester")  # `target: vscode`, gpt-5.4: VS Code defers MCP tools
    assert tester["host"]["id"] == "vscode" and {t["load"] for t in tester["tools"]} == {"deferred"}
    assert tester["agent"]["deferred_tool_loading"] is True
    assert {t["gateway"]["load"] for t in tester["tools"]} == {"deferred"}
    notes = manifest("release-notes")  # Copilot CLI, 5 MCP tools: 9 tools in all, under its 31
    assert not notes["tool_search"]["active"] and {t["load"] for t in notes["tools"]} == {"preloaded"}
    assert [s["name"] for s in notes["skills"] if s["body"] == "up_front"] == ["changelog-style"]
    ops = manifest("ops")  # Claude Code: ToolSearch listed, git `alwaysLoad`
    assert ops["host"]["id"] == "claude-code"
    by = {(t["server"], t["name"]): t["reason"] for t in ops["tools"]}
    assert by[("git", "git_status")]["code"] == "always-load"
    assert by[("git", "git_status")]["source"].startswith(".mcp.json:")
    assert by[("github", "issue_write")]["code"] == "mcp-deferred"
    assert by[("github", "issue_write")]["basis"] == "measured on Claude Code 2.1.332"
    assert "Grep" not in ops["host"]["builtins_up_front"] and "ToolSearch" in ops["host"]["builtins_up_front"]
    budget = ops["budget"]
    assert budget["initial_tokens"] == (
        budget["preloaded_tokens"] + budget["meta_tool_tokens"] + budget["server_index_tokens"] + budget["skill_tokens"]
    )
    assert budget["server_index_tokens"] > 0  # Claude Code lists the deferred tools' names
    assert budget["baseline_tokens"] == (
        budget["preloaded_tokens"]
        + budget["deferred_tokens"]
        + budget["skill_tokens"]
        + budget["skill_deferred_tokens"]
    )
    gateway_budget = researcher["gateway_budget"]
    assert gateway_budget["initial_tokens"] == (
        gateway_budget["preloaded_tokens"] + gateway_budget["meta_tool_tokens"] + gateway_budget["server_index_tokens"]
    )


def test_check_passes_when_current_and_lists_stale_manifests(demo: Path) -> None:
    run(demo, "compile")
    assert run(demo, "compile", "--check")[0] == 0
    agent = demo / ".github/agents/release-notes.agent.md"
    agent.write_text(agent.read_text().replace("Keep a Changelog", "plain"))
    code, _, err = run(demo, "compile", "--check")
    assert code == 1
    assert "stale: build/quiver/release-notes.json" in err
    assert "stale: build/quiver/ops.json" not in err


def test_check_reports_a_manifest_of_a_deleted_agent(demo: Path) -> None:
    run(demo, "compile")
    (demo / ".github/agents/release-notes.agent.md").unlink()
    code, _, err = run(demo, "compile", "--check")
    assert code == 1 and "stale: build/quiver/release-notes.json" in err
    assert run(demo, "compile")[0] == 0
    assert not (demo / "build/quiver/release-notes.json").exists()


def test_emit_writes_host_tools_arrays_with_defer_loading(demo: Path) -> None:
    run(demo, "compile", "--emit", "anthropic", "--emit", "openai")
    anthropic = json.loads((demo / "build/quiver/researcher.anthropic.json").read_text())["tools"]
    assert anthropic[0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    deferred = [t for t in anthropic[1:] if t.get("defer_loading")]
    loaded = [t for t in anthropic[1:] if not t.get("defer_loading")]
    assert len(loaded) == 3 and len(deferred) == 112
    assert all("input_schema" in t for t in anthropic[1:])
    openai = json.loads((demo / "build/quiver/researcher.openai.json").read_text())["tools"]
    assert openai[0] == {"type": "tool_search"}
    assert all(t["type"] == "namespace" for t in openai[1:])
    functions = [f for t in openai[1:] for f in t["tools"]]
    assert len(functions) == 115
    assert all(f["type"] == "function" and "parameters" in f and isinstance(f["strict"], bool) for f in functions)
    notes = json.loads((demo / "build/quiver/release-notes.anthropic.json").read_text())["tools"]
    assert all("defer_loading" not in t and "type" not in t for t in notes)


def test_explain_names_the_host_rule_its_version_and_the_line_that_decided(demo: Path) -> None:
    code, out, _ = run(demo, "explain", "ops", "git/git_status")
    assert code == 0
    assert "claude-code: always-load: server `git` sets `alwaysLoad: true`" in out
    assert ".mcp.json:" in out and "[measured on Claude Code 2.1.332]" in out
    code, out, _ = run(demo, "explain", "researcher", "github/search_issues")
    assert "copilot-cli: mcp-deferred" in out and "[measured on Copilot CLI 1.0.102]" in out
    assert "rule 3: listed in `preload_tools` of server `github` (quiver.toml:" in out  # quiver serve's rule
    code, _, err = run(demo, "explain", "opz")
    assert code == 2 and "did you mean `ops`?" in err


def test_the_committed_demo_manifests_are_up_to_date() -> None:
    demo = Path(__file__).resolve().parents[2] / "examples" / "demo"
    code, _, err = run(demo, "compile", "--check")
    assert code == 0, f"run `quiver compile -C examples/demo` and commit:\n{err}"


def test_a_repeat_compile_checks_only_output_units_with_new_json(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from quiver import __version__
    from quiver.commands import compile as cmd
    from quiver.compile import CheckUnit, CheckUnits
    from quiver.sources.validated import VALIDATED_FILE, read_validated
    from quiver.validation import schemas_sha

    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    checked: list[list[str]] = []
    real = cmd._check_schema

    def spy(units: list[CheckUnit]) -> None:
        checked.append([u.label for u in units])
        real(units)

    monkeypatch.setattr(cmd, "_check_schema", spy)
    first = cmd.build(demo)
    ids = [r.agent.id for r in first.resolved]
    out = first.project.config.out
    checks = CheckUnits()
    for a in ids:
        checks.manifest(a, json.loads(first.outputs[f"{out}/{a}.json"]))
    checks.index(json.loads(first.outputs[f"{out}/index.json"]))
    units = checks.units
    assert [u.label for u in units.values()] == checked[0]
    assert {*ids, "index.json"} <= set(checked[0]) and any("(tool `" in label for label in checked[0])
    key = f"{__version__}:{schemas_sha()}"
    assert read_validated(demo / VALIDATED_FILE, key) == set(units)
    assert read_validated(demo / VALIDATED_FILE, "another quiver") == set()  # another version checks all again
    cmd.build(demo)  # nothing new: nothing checked
    assert len(checked) == 1
    agent = sorted(demo.glob(".github/agents/*.md"))[-1]
    agent.write_text(agent.read_text(encoding="utf-8").replace("description:", "description: Changed.", 1))
    cmd.build(demo)  # only that agent's units are new (the index does not carry descriptions)
    changed = agent.name.removesuffix(".agent.md")
    assert checked[1][0] == changed and all(label.startswith(changed) for label in checked[1])


def test_a_tool_entry_of_a_kind_new_in_the_run_is_checked_and_a_bad_one_reported(demo: Path) -> None:
    from quiver.commands import compile as cmd
    from quiver.compile import CheckUnits

    result = cmd.build(demo)
    out = result.project.config.out
    ids = [r.agent.id for r in result.resolved]
    manifests = {a: json.loads(result.outputs[f"{out}/{a}.json"]) for a in ids}
    last = manifests[ids[-1]]
    last["tools"][-1]["load"] = "sometimes"  # a kind no other entry has: sampled, and it breaks the enum
    checks = CheckUnits()
    for a, manifest in manifests.items():
        checks.manifest(a, manifest)
    with pytest.raises(RuntimeError, match=rf"{ids[-1]} \(tool `[^`]+`\): \$\.tools\[0\]\.load: 'sometimes'"):
        cmd._check_schema(list(checks.units.values()))


def test_a_manifest_checked_out_with_crlf_line_ends_is_current_and_left_alone(demo: Path) -> None:
    assert run(demo, "compile", "-q")[0] == 0
    manifest = sorted((demo / "build" / "quiver").glob("*.json"))[0]
    crlf = manifest.read_bytes().replace(b"\n", b"\r\n")
    manifest.write_bytes(crlf)
    code, _, err = run(demo, "compile", "--check")
    assert code == 0, err
    assert run(demo, "compile", "-q")[0] == 0
    assert manifest.read_bytes() == crlf  # the same text: not rewritten
    manifest.write_bytes(crlf.replace(b'"manifestVersion"', b'"manifestVersionX"'))
    code, _, err = run(demo, "compile", "--check")
    assert code == 1 and f"stale: build/quiver/{manifest.name}" in err
