"""`quiver diff` on real git repositories made in temp dirs, and on files."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from projects import agent_text, make_project, stdio, tool, tools
from quiver.cli import cli
from quiver.sources.lock import ServerCatalog, render_lock


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args, "--project", str(root)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def init_repo(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "dev")


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def write_lock(root: Path, catalogs: dict[str, list[dict]]) -> None:
    text = render_lock(ServerCatalog(n, {"name": n}, None, None, tuple(t)) for n, t in catalogs.items())
    (root / "quiver.lock.json").write_text(text)


def test_github_history_breaking_changes_have_confirmed_witnesses(corpus: Path, tmp_path: Path) -> None:
    init_repo(tmp_path)
    snaps = corpus / "github-mcp-server"
    assert run(tmp_path, "snapshot", "--import", str(snaps / "v0.20.0"), "--server", "github")[0] == 0
    commit(tmp_path, "base")
    assert run(tmp_path, "snapshot", "--import", str(snaps / "v0.30.0"), "--server", "github")[0] == 0
    code, out, _ = run(tmp_path, "diff", "HEAD", "--format", "json")
    assert code == 1
    findings = json.loads(out)
    errors = {(f["tool"], f["rule"]) for f in findings if f["severity"] == "error"}
    assert errors == {("assign_copilot_to_issue", "CTR020"), ("dismiss_notification", "CTR021")}
    old = {json.loads(p.read_text())["name"]: json.loads(p.read_text()) for p in (snaps / "v0.20.0").glob("*.snap")}
    new = {json.loads(p.read_text())["name"]: json.loads(p.read_text()) for p in (snaps / "v0.30.0").glob("*.snap")}
    for f in findings:
        if f["severity"] == "error":
            witness = f["witness"]["arguments"]
            assert jsonschema.Draft202012Validator(old[f["tool"]]["inputSchema"]).is_valid(witness)
            assert not jsonschema.Draft202012Validator(new[f["tool"]]["inputSchema"]).is_valid(witness)
    assert sum(f["rule"] == "CTR003" for f in findings) == 38  # 63 -> 101 tools


def test_two_lock_files_and_a_snapshot_directory_can_be_compared(corpus: Path, tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"tools": [tool("a"), tool("b")]}))
    new.write_text(json.dumps({"tools": [tool("a")]}))
    code, out, _ = run(tmp_path, "diff", str(old), str(new), "--server", "s", "--format", "json")
    assert code == 1 and [(f["rule"], f["tool"]) for f in json.loads(out)] == [("CTR001", "b")]
    snaps = corpus / "github-mcp-server"
    code, out, _ = run(tmp_path, "diff", str(snaps / "v0.30.0"), str(snaps / "v0.20.0"), "--format", "json")
    assert code == 1 and sum(f["rule"] == "CTR001" for f in json.loads(out)) == 38


def test_default_base_is_the_merge_base_with_main(tmp_path: Path) -> None:
    init_repo(tmp_path)
    write_lock(tmp_path, {"s": [tool("a"), tool("b")]})
    commit(tmp_path, "base")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    write_lock(tmp_path, {"s": [tool("a")]})
    code, out, _ = run(tmp_path, "diff", "--format", "json")
    assert code == 1 and [f["rule"] for f in json.loads(out)] == ["CTR001"]


def test_agent_that_loses_a_named_tool_and_tools_that_change_load(tmp_path: Path) -> None:
    init_repo(tmp_path)
    agent = agent_text("description: d\ntools: ['s/op_00', 's/*', 'other/*']")
    make_project(
        tmp_path,
        agents={".github/agents/a.agent.md": agent},
        mcp={"mcpServers": {"s": stdio(), "other": stdio()}},
        catalogs={"s": tools("op", 20), "other": tools("x", 5)},
    )
    commit(tmp_path, "base")
    write_lock(tmp_path, {"s": tools("op", 20)[1:], "other": tools("x", 12)})  # op_00 gone; 31 tools now
    code, out, _ = run(tmp_path, "diff", "HEAD", "--format", "json")
    findings = json.loads(out)
    rules = [f["rule"] for f in findings]
    assert code == 1
    lost = [f for f in findings if f["rule"] == "CTR070"]
    assert [(f["agent"], f["server"], f["tool"]) for f in lost] == [("a", "s", "op_00")]
    assert lost[0]["file"] == ".github/agents/a.agent.md"
    moved = [f for f in findings if f["rule"] == "CTR071"]
    assert moved and all(f["severity"] == "info" for f in moved) and "CTR001" in rules


def test_ignore_file_accepts_a_finding_only_with_a_reason(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"tools": [tool("a"), tool("b")]}))
    new.write_text(json.dumps({"tools": [tool("a")]}))
    _, out, _ = run(tmp_path, "diff", str(old), str(new), "--format", "json")
    fingerprint = json.loads(out)[0]["fingerprint"]
    (tmp_path / ".quiver").mkdir()
    ignore = tmp_path / ".quiver" / "contract-ignore.yaml"
    ignore.write_text(f"- fingerprint: {fingerprint}\n  reason: b was never used by any agent\n")
    code, out, _ = run(tmp_path, "diff", str(old), str(new), "--format", "json")
    assert code == 0 and json.loads(out) == []
    ignore.write_text(f"- fingerprint: {fingerprint}\n")
    code, _, err = run(tmp_path, "diff", str(old), str(new))
    assert code == 2 and ".quiver/contract-ignore.yaml:1:3" in err and "reason" in err


def test_bad_input_is_a_one_line_error(tmp_path: Path) -> None:
    init_repo(tmp_path)
    write_lock(tmp_path, {"s": [tool("a")]})
    commit(tmp_path, "base")
    code, _, err = run(tmp_path, "diff", "no-such-ref")
    assert code == 2 and "`no-such-ref` is neither a file, a directory, a git ref nor REF:PATH" in err
    broken = tmp_path / "broken.json"
    broken.write_text('{"tools": [')
    code, _, err = run(tmp_path, "diff", "HEAD", str(broken))
    assert code == 2 and "broken.json:1:" in err and len(err.strip().splitlines()) == 1


def test_a_tool_with_a_broken_schema_is_one_finding_and_the_rest_is_still_diffed(tmp_path: Path) -> None:
    init_repo(tmp_path)
    write_lock(tmp_path, {"s": [tool("a"), tool("b", type="object", properties={"x": {"type": "string"}})]})
    commit(tmp_path, "base")
    bad = tool("a", type="object", properties={"x": {"$ref": "#/$defs/missing"}})
    narrowed = tool("b", type="object", properties={"x": {"type": "string"}}, required=["x"])
    write_lock(tmp_path, {"s": [bad, narrowed]})
    code, out, _ = run(tmp_path, "diff", "HEAD", "--format", "json")
    assert code == 1
    found = {(f["tool"], f["rule"]): f for f in json.loads(out)}
    assert set(found) == {("a", "CTR080"), ("b", "CTR021")}
    assert "`#/$defs/missing` does not resolve" in found[("a", "CTR080")]["message"]


def snapshot_dir(root: Path, name: str, tools: dict[str, object]) -> Path:
    folder = root / name
    folder.mkdir()
    for file, body in tools.items():
        (folder / file).write_text(body if isinstance(body, str) else json.dumps(body))
    return folder


def test_snapshot_folders_empty_null_schema_and_unreadable_files(tmp_path: Path) -> None:
    empty = snapshot_dir(tmp_path, "empty", {})
    dismiss = tool("dismiss", type="object", properties={"state": {"type": "string"}})
    old = snapshot_dir(tmp_path, "old", {"get_me.snap": tool("get_me"), "dismiss.snap": dismiss, "x.snap": tool("x")})
    code, out, _ = run(tmp_path, "diff", str(empty), str(old), "--format", "json")
    assert code == 0 and sorted(f["tool"] for f in json.loads(out)) == ["dismiss", "get_me", "x"]
    new = snapshot_dir(
        tmp_path,
        "new",
        {
            "get_me.snap": {**tool("get_me"), "inputSchema": None},
            "dismiss.snap": {**dismiss, "inputSchema": {**dismiss["inputSchema"], "required": ["state"]}},
            "x.snap": "{not json",
        },
    )
    code, out, _ = run(tmp_path, "diff", str(old), str(new), "--format", "json")
    assert code == 1
    found = {(f["tool"], f["rule"]) for f in json.loads(out)}
    assert found == {("get_me", "CTR080"), ("dismiss", "CTR021"), ("x", "CTR080")}


def test_a_large_snapshot_file_is_read_like_a_large_tools_list(tmp_path: Path) -> None:
    big = {**tool("a"), "description": "x" * (6 * 1024 * 1024)}
    old = snapshot_dir(tmp_path, "old", {"a.snap": big})
    new = snapshot_dir(tmp_path, "new", {"a.snap": {**big, "description": "short"}})
    code, out, _ = run(tmp_path, "diff", str(old), str(new), "--format", "json")
    assert code == 0 and [f["rule"] for f in json.loads(out)] == ["CTR004"]


def test_a_tools_list_side_takes_the_server_name_of_the_other_side(tmp_path: Path) -> None:
    init_repo(tmp_path)
    write_lock(tmp_path, {"github": [tool("a"), tool("b")]})
    listed, lock = tmp_path / "tools.json", str(tmp_path / "quiver.lock.json")
    listed.write_text(json.dumps({"tools": [tool("a")]}))
    code, out, _ = run(tmp_path, "diff", lock, str(listed), "--format", "json")
    assert code == 1 and [(f["rule"], f["server"], f["tool"]) for f in json.loads(out)] == [("CTR001", "github", "b")]
    write_lock(tmp_path, {"github": [tool("a")], "slack": [tool("s")]})
    code, _, err = run(tmp_path, "diff", lock, str(listed))
    assert code == 2 and "`--server NAME`" in err and "`github`, `slack`" in err
    code, out, _ = run(tmp_path, "diff", lock, str(listed), "--server", "github", "--format", "json")
    assert code == 0 and json.loads(out) == []  # only `github` is compared: `slack` is not this side's server


def test_a_diff_without_breaking_candidates_imports_neither_jsonschema_nor_the_lint_catalog(tmp_path: Path) -> None:
    # a changed description is scanned with lint's injection patterns, and that module alone is loaded
    old = snapshot_dir(tmp_path, "old", {"a.snap": tool("a")})
    new = snapshot_dir(tmp_path, "new", {"a.snap": {**tool("a"), "description": "reworded"}, "b.snap": tool("b")})
    script = (
        "import sys\n"
        "from quiver.cli import cli\n"
        f"args = ['diff', {str(old)!r}, {str(new)!r}, '--project', {str(tmp_path)!r}, '--format', 'json']\n"
        "try:\n    cli.main(args, standalone_mode=False)\nfinally:\n"
        "    seen = ('jsonschema', 'quiver.lint', 'quiver.findings')\n"
        "    print('MODULES', sorted(m for m in sys.modules if m.startswith(seen)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded = proc.stdout.splitlines()[-1]
    # the severity pipeline ran (it is the findings layer's since issue 12); the lint catalog was never built
    assert "jsonschema" not in loaded and "'quiver.findings.severity'" in loaded
    assert [m for m in ast.literal_eval(loaded.removeprefix("MODULES ")) if m.startswith("quiver.lint")] == [
        "quiver.lint",
        "quiver.lint.support",
        "quiver.lint.support.injection",
    ]
    assert [f["rule"] for f in json.loads(proc.stdout.split("MODULES")[0])] == ["CTR004", "CTR003"]
