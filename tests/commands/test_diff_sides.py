"""`quiver diff` sides as users meet them: a base without a lock, one server against a lock, snapshot
directories (server names, per-file locations) and agents that reach a tool by server or wildcard."""

from __future__ import annotations

import json
from pathlib import Path

from test_diff import commit, git, init_repo, run, snapshot_dir, write_lock

from projects import agent_text, make_project, stdio, tool, tools


def test_a_base_ref_without_a_lock_is_an_empty_catalog(tmp_path: Path) -> None:
    init_repo(tmp_path)
    make_project(tmp_path, agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['s/*']")})
    commit(tmp_path, "agents, no lock yet")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    write_lock(tmp_path, {"s": [tool("a"), tool("b")]})
    commit(tmp_path, "add the lock")
    code, out, err = run(tmp_path, "diff", "main", "--changed-only", "--format", "github")
    assert code == 0, err
    assert out.count("CTR003") == 2 and "::notice file=quiver.lock.json" in out
    code, out, _ = run(tmp_path, "diff", "main", "--format", "json")
    assert [(f["rule"], f["server"], f["tool"]) for f in json.loads(out)] == [
        ("CTR003", "s", "a"),
        ("CTR003", "s", "b"),
    ]


def test_a_working_tree_without_a_lock_loses_every_tool_and_no_lock_anywhere_says_so(tmp_path: Path) -> None:
    init_repo(tmp_path)
    write_lock(tmp_path, {"s": [tool("a")]})
    commit(tmp_path, "lock")
    (tmp_path / "quiver.lock.json").unlink()
    code, out, _ = run(tmp_path, "diff", "HEAD", "--format", "json")
    assert code == 1 and [(f["rule"], f["tool"]) for f in json.loads(out)] == [("CTR001", "a")]
    bare = tmp_path / "bare"
    bare.mkdir()
    init_repo(bare)
    make_project(bare, agents={".github/agents/a.agent.md": agent_text("description: d")})
    commit(bare, "no lock")
    code, out, err = run(bare, "diff", "HEAD")
    assert code == 0 and "no quiver.lock.json" in err and "nothing to compare" in err


def test_one_server_against_a_lock_compares_only_that_server(tmp_path: Path) -> None:
    write_lock(tmp_path, {"time": [tool("now"), tool("zone")], "echo": tools("echo", 3)})
    one = tmp_path / "one-server.json"
    one.write_text(json.dumps({"tools": [tool("now")]}))
    lock = str(tmp_path / "quiver.lock.json")
    for args in ((str(one), lock), (lock, str(one))):
        code, out, _ = run(tmp_path, "diff", *args, "--server", "time", "--format", "json")
        found = [(f["rule"], f["server"], f["tool"]) for f in json.loads(out)]
        rule = "CTR003" if args[0] == str(one) else "CTR001"
        assert found == [(rule, "time", "zone")] and code == (rule == "CTR001"), found
    _, out, _ = run(tmp_path, "diff", lock, str(one), "--server", "time")
    assert "tool `time/zone` was removed" in out


def test_an_unknown_server_for_a_one_server_side_is_a_usage_error(tmp_path: Path) -> None:
    write_lock(tmp_path, {"time": [tool("now")], "echo": [tool("e")]})
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"tools": [tool("now")]}))
    code, _, err = run(tmp_path, "diff", str(tmp_path / "quiver.lock.json"), str(one), "--server", "tiem")
    assert code == 2 and "`tiem`" in err and "`echo`, `time`" in err
    write_lock(tmp_path, {})  # a lock without servers names none: the server is new, every tool is added
    code, out, _ = run(tmp_path, "diff", str(tmp_path / "quiver.lock.json"), str(one), "--server", "tiem")
    assert code == 0 and "tool `tiem/now` was added" in out


def test_snapshot_directories_name_no_placeholder_server_and_locate_each_tool(tmp_path: Path) -> None:
    old = snapshot_dir(tmp_path, "old", {"a.snap": tool("a"), "gone.snap": tool("gone")})
    new = snapshot_dir(tmp_path, "new", {"a.snap": {**tool("a"), "description": "other"}, "b.snap": tool("b")})
    code, out, _ = run(tmp_path, "diff", str(old), str(new), "--format", "json")
    findings = json.loads(out)
    assert all("server" not in f for f in findings), findings
    where = {f["tool"]: (f["file"], f["line"]) for f in findings}
    assert where == {"a": ("new/a.snap", 1), "b": ("new/b.snap", 1), "gone": ("old/gone.snap", 1)}
    _, out, _ = run(tmp_path, "diff", str(old), str(new), "--format", "markdown")
    assert "### `a`" in out and "server/" not in out
    code, out, _ = run(tmp_path, "diff", str(old), str(new), "--server", "github", "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert code == 1 and results and all(r["properties"]["server"] == "github" for r in results)
    assert all(r["locations"][0]["physicalLocation"]["region"]["startLine"] == 1 for r in results)
    _, out, _ = run(tmp_path, "diff", str(old), str(new), "--server", "github")
    assert "new/a.snap:1:1" in out and "tool `github/a`: description changed" in out


def test_every_sarif_result_has_a_location_also_for_a_tools_list_side(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"tools": [tool("a"), tool("b")]}))
    new.write_text(json.dumps({"tools": [tool("a", "changed")]}))
    code, out, _ = run(tmp_path, "diff", str(old), str(new), "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert code == 1
    places = sorted(
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["locations"][0]["physicalLocation"])
        for r in results
    )
    # the changed tool at its entry of the new file, the removed one at its entry of the old file
    assert [uri for uri, _ in places] == ["new.json", "old.json"]
    assert all(place["region"]["startLine"] == 1 and place["region"]["startColumn"] > 1 for _, place in places)


def test_an_agent_reaching_a_tool_by_server_or_wildcard_loses_it_too(tmp_path: Path) -> None:
    init_repo(tmp_path)
    agents = {
        ".github/agents/clock.agent.md": agent_text("description: d\ntools: ['time/get_current_time']"),
        ".github/agents/helper.agent.md": agent_text("description: d\ntools: ['time', 'edit']"),
        ".github/agents/star.agent.md": agent_text("description: d\ntools: ['time/*']"),
        ".github/agents/every.agent.md": agent_text("description: d\ntools: ['*']"),
    }
    catalog = [tool("get_current_time"), tool("convert_time")]
    make_project(tmp_path, agents=agents, mcp={"mcpServers": {"time": stdio()}}, catalogs={"time": catalog})
    commit(tmp_path, "base")
    write_lock(tmp_path, {"time": [tool("convert_time")]})
    code, out, _ = run(tmp_path, "diff", "HEAD", "--format", "json")
    assert code == 1  # get_current_time removed: CTR001
    lost = {(f["agent"], f["severity"]) for f in json.loads(out) if f["rule"] == "CTR070"}
    assert lost == {("clock", "warning"), ("helper", "warning"), ("star", "warning"), ("every", "info")}
    lost_tools = {(f["server"], f["tool"]) for f in json.loads(out) if f["rule"] == "CTR070"}
    assert lost_tools == {("time", "get_current_time")}
    _, out, _ = run(tmp_path, "diff", "HEAD")
    assert "agent `helper` lost tool `time/get_current_time`" in out
