"""Preload advice: the rule, the config patch, the workload acceptance, and --shadow agreeing with the gateway."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from fixtures.usage.workload import PlannedCall, SessionPlan, TickClock, plan_workload, play
from quiver.advise import (
    AgentManifest,
    AgentTool,
    ConfigChange,
    ServerEdit,
    ServerLoading,
    ShadowCall,
    advise,
    manifest_view,
    render_patch,
    shadow_events,
)
from quiver.commands import advise as advise_command
from quiver.commands import compile as compile_command
from quiver.commands.advise import AdviseOptions
from quiver.runtime.usage import UsageRecorder, read_usage, usage_path
from quiver.stats import UsageStats, summarize

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "examples" / "serve"
SHADOW_LOG = ROOT / "tests" / "fixtures" / "usage" / "shadow.jsonl"


def tool(name: str, tokens: int, load: str, reason: str = "deferred", *, named: bool = False) -> AgentTool:
    return AgentTool("s", name, tokens, load, reason, named, None)  # type: ignore[arg-type]  # Literal from a str


def agent(*tools: AgentTool, meta: int = 300, index: int = 50) -> AgentManifest:
    return AgentManifest("a", ".github/agents/a.agent.md", False, meta, index, tuple(tools))


def sessions_using(uses: dict[str, int], total: int) -> list[ShadowCall]:
    """`total` sessions; tool `k` is called in the first `uses[k]` of them (one call each)."""
    calls = []
    for n in range(total):
        calls.append(ShadowCall(f"s{n:03d}", "s/noise", n * 100.0))  # every session calls something
        calls += [ShadowCall(f"s{n:03d}", f"s/{k}", n * 100.0 + 1) for k, used in sorted(uses.items()) if n < used]
    return calls


def usage_of(calls: list[ShadowCall], manifest: AgentManifest) -> UsageStats:
    return summarize(shadow_events(calls, manifest))


# ------------------------------------------------------------------------------------------- the rule


def test_a_small_schema_used_in_most_sessions_is_preloaded_and_a_large_rare_one_deferred() -> None:
    m = agent(
        tool("small", 40, "deferred"),
        tool("big", 2000, "preloaded", "preload-tools"),
        tool("unused", 100, "deferred"),
        tool("noise", 10, "preloaded", "preload-tools"),
    )
    servers = {"s": ServerLoading("s", preload_tools=("big", "noise"))}
    advice = advise(usage_of(sessions_using({"small": 16, "big": 2}, 20), m), [m], servers)
    (a,) = advice.agents
    assert (a.to_preload, a.to_defer) == (("s/small",), ("s/big",))
    models = {t.tool: t.model for t in a.tools}
    # measured: a deferred first use took one search (200) and one describe (the schema, 40)
    assert models["s/small"].cost("deferred") == 0.8 * (40 + 240)
    # never seen deferred: one search answer plus the schema assumed, 2 steps
    assert models["s/big"].cost("deferred") == pytest.approx(0.1 * (2000 + 200 + 2000))
    assert (models["s/big"].steps_deferred, models["s/big"].measured_deferred) == (2.0, False)
    assert a.current_tokens == pytest.approx(0.8 * 280 + 2000 + 0 + 10 + 350)
    assert a.advised_tokens == pytest.approx(40 + 0.1 * 4200 + 0 + 10 + 350)
    assert a.token_change == pytest.approx(-1764.0)
    assert a.current_steps == pytest.approx(1.6)
    assert a.advised_steps == pytest.approx(0.2)
    assert advice.change == ConfigChange(servers=(ServerEdit("s", preload_tools=("noise", "small")),))


@pytest.mark.parametrize(("uses", "load"), [(5, "deferred"), (6, "preloaded")])
def test_a_tool_is_preloaded_only_when_its_discovery_outweighs_carrying_it(uses: int, load: str) -> None:
    # T = 100, never preloaded, discovery per use D = 200 + 100: preload iff 100 * (1 - u) < u * 300
    # u = 5/20: 75 < 75 is false; u = 6/20: 70 < 90
    m = agent(tool("t", 100, "deferred"), tool("noise", 10, "preloaded", "preload-tools"), meta=0, index=0)
    advice = advise(
        usage_of(sessions_using({"t": uses}, 20), m), [m], {"s": ServerLoading("s", preload_tools=("noise",))}
    )
    assert {t.tool: t.advised for t in advice.agents[0].tools}["s/t"] == load


def test_when_preloading_the_rest_costs_less_than_the_meta_tools_everything_is_preloaded() -> None:
    # per tool: t1 pays for itself preloaded, t2 not (30 * 0.9 > 0.1 * 230); but deferring t2 alone keeps the
    # 350 tokens of meta-tools and server index in every session, so both are preloaded
    m = agent(tool("t1", 30, "deferred"), tool("t2", 30, "deferred"), tool("noise", 10, "deferred"))
    calls = [
        c for c in sessions_using({"t1": 10, "t2": 2, "noise": 20}, 20) if c.tool != "s/noise" or c.timestamp % 100
    ]
    (a,) = advise(usage_of(calls, m), [m], {"s": ServerLoading("s")}).agents
    assert a.defer == ()
    assert (a.initial_tokens_before, a.initial_tokens_after) == (350, 70)


def test_an_agent_with_too_few_sessions_gets_a_note_instead_of_advice() -> None:
    m = agent(tool("t", 100, "deferred"), tool("noise", 10, "preloaded", "preload-tools"))
    advice = advise(usage_of(sessions_using({"t": 5}, 9), m), [m], {"s": ServerLoading("s")})
    assert advice.agents == ()
    assert not advice.change
    assert advice.notes == ("`a`: 9 recorded session(s), fewer than 10: no advice",)


def test_deferring_a_named_tool_sets_deferred_tool_loading_and_lists_the_named_tools_that_stay() -> None:
    m = agent(
        tool("hot", 50, "preloaded", "named", named=True),
        tool("cold", 500, "preloaded", "named", named=True),
        tool("noise", 10, "preloaded", "named", named=True),
    )
    advice = advise(usage_of(sessions_using({"hot": 18}, 20), m), [m], {"s": ServerLoading("s")})
    assert advice.agents[0].to_defer == ("s/cold",)
    assert advice.change == ConfigChange(
        servers=(ServerEdit("s", preload_tools=("hot", "noise")),),
        deferred_loading=(("a", ".github/agents/a.agent.md"),),
    )


def test_a_shared_servers_change_is_reported_for_agents_without_usage() -> None:
    m = agent(tool("hot", 50, "deferred"), tool("noise", 10, "preloaded", "preload-tools"))
    other = AgentManifest("b", ".github/agents/b.agent.md", False, 300, 50, m.tools)
    servers = {"s": ServerLoading("s", preload_tools=("noise",))}
    advice = advise(usage_of(sessions_using({"hot": 18}, 20), m), [m, other], servers)
    assert [a.agent for a in advice.agents] == ["a"]
    (impact,) = advice.affected
    assert (impact.agent, impact.to_preload, impact.to_defer) == ("b", ("s/hot",), ())
    assert (impact.initial_tokens_before, impact.initial_tokens_after) == (
        360,
        60,
    )  # nothing deferred any more: no meta-tools
    assert advise(usage_of(sessions_using({"hot": 18}, 20), m), [m, other], servers, only=["b"]).agents == ()


def test_tools_whose_load_the_config_cannot_change_keep_it() -> None:
    fixed = AgentTool("s", "big", 5000, "preloaded", "tool-search-inactive", False, "tool search is inactive")
    m = agent(fixed, tool("noise", 10, "preloaded", "preload-tools"))
    (a,) = advise(usage_of(sessions_using({}, 20), m), [m], {"s": ServerLoading("s", preload_tools=("noise",))}).agents
    assert {t.tool: (t.advised, t.fixed) for t in a.tools}["s/big"] == ("preloaded", "tool search is inactive")


# ------------------------------------------------------------------------------------------ the patch


def git_apply(root: Path, patch: str) -> None:
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "advice.patch").write_text(patch, encoding="utf-8", newline="")
    for args in (["--check"], []):
        result = subprocess.run(["git", "apply", *args, "advice.patch"], cwd=root, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr + patch
    (root / "advice.patch").unlink()


def test_the_patch_rewrites_a_multi_line_preload_tools_array_in_place(tmp_path: Path) -> None:
    text = (
        '# project config\nthreshold = 10\n\n[[mcp_servers]]\nname = "github"\npreload_tools = [\n'
        '  "search_issues",  # most used\n  "get_me",\n]\n# trailing comment\n\n[[mcp_servers]]\nname = "notion"\n'
        "preload = false\n"
    )
    (tmp_path / "quiver.toml").write_text(text, encoding="utf-8")
    change = ConfigChange(
        servers=(ServerEdit("github", preload_tools=("get_me", "list_issues")), ServerEdit("notion", preload=False))
    )
    git_apply(tmp_path, render_patch(change, config_file="quiver.toml", config_text=text, agent_texts={}))
    after = (tmp_path / "quiver.toml").read_text(encoding="utf-8")
    assert '[[mcp_servers]]\nname = "github"\npreload_tools = ["get_me", "list_issues"]\n# trailing comment\n' in after
    assert tomllib.loads(after)["mcp_servers"] == [
        {"name": "github", "preload_tools": ["get_me", "list_issues"]},
        {"name": "notion", "preload": False},
    ]


def test_the_patch_adds_entries_to_pyproject_and_turns_server_wide_preloads_off(tmp_path: Path) -> None:
    text = '[project]\nname = "x"\n\n[tool.quiver]\nthreshold = 5\n\n[[tool.quiver.mcp_servers]]\n'
    text += 'name = "k8s"\npreload = true'
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")  # no final newline
    change = ConfigChange(
        servers=(
            ServerEdit("k8s", preload_tools=("get_pods",), preload=False),
            ServerEdit("web", preload_tools=("fetch",), defer_tools="auto"),
        )
    )
    git_apply(tmp_path, render_patch(change, config_file="pyproject.toml", config_text=text, agent_texts={}))
    data = tomllib.loads((tmp_path / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["tool"]["quiver"]["mcp_servers"] == [
        {"name": "k8s", "preload": False, "preload_tools": ["get_pods"]},
        {"name": "web", "deferTools": "auto", "preload_tools": ["fetch"]},
    ]


def test_the_patch_creates_quiver_toml_when_there_is_no_config_and_edits_a_crlf_agent_file(tmp_path: Path) -> None:
    agent_file = ".github/agents/a.agent.md"
    agent_text = '---\r\nname: A\r\ndescription: d\r\ntools: ["s/x"]\r\n---\r\nBody.\r\n'
    (tmp_path / ".github" / "agents").mkdir(parents=True)
    (tmp_path / agent_file).write_bytes(agent_text.encode())
    change = ConfigChange(servers=(ServerEdit("s", preload_tools=()),), deferred_loading=(("a", agent_file),))
    patch = render_patch(change, config_file="quiver.toml", config_text=None, agent_texts={agent_file: agent_text})
    git_apply(tmp_path, patch)
    assert tomllib.loads((tmp_path / "quiver.toml").read_text()) == {
        "mcp_servers": [{"name": "s", "preload_tools": []}]
    }
    assert (tmp_path / agent_file).read_bytes().decode() == agent_text.replace(
        "---\r\nBody", "deferred-tool-loading: true\r\n---\r\nBody"
    )


# ---------------------------------------------------------------------- acceptance: the scripted workload


def serve_copy(tmp_path: Path) -> Path:
    root = tmp_path / "serve"
    shutil.copytree(SERVE, root, ignore=shutil.ignore_patterns(".quiver"))
    return root


def load_manifest(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "build" / "quiver" / "assistant.json").read_text(encoding="utf-8"))
    return data


def record(root: Path, manifest: dict[str, Any], plans: list[SessionPlan], usage_dir: Path | None = None) -> UsageStats:
    path = usage_path(root, "assistant") if usage_dir is None else usage_dir / "assistant.jsonl"
    with UsageRecorder(path, clock=TickClock()) as rec:
        play(rec, manifest, plans)
    return summarize(read_usage(path).events)


def test_applied_advice_lowers_tokens_per_session_and_discovery_steps_do_not_rise(tmp_path: Path) -> None:
    root = serve_copy(tmp_path)
    plans = plan_workload(300, seed=11)
    before = record(root, load_manifest(root), plans).agent("assistant")
    assert before is not None

    out = advise_command.run(AdviseOptions(root, None, "json", tmp_path / "advice.patch"))
    result = json.loads(out.text)
    (advice,) = result["agents"]
    assert advice["to_preload"] == ["calc/multiply", "notes/create_note", "notes/get_note"]
    assert advice["to_defer"] == ["calc/add", "calc/echo"]
    assert advice["token_change_per_session"] < 0 < advice["steps_saved_per_session"]
    patch = (tmp_path / "advice.patch").read_text(encoding="utf-8")
    assert patch == result["patch"]

    git_apply(root, patch)
    compiled = compile_command.build(root)
    assert not compiled.errors
    compile_command.write(root, compiled, compiled.project.config.out)
    after_manifest = load_manifest(root)
    loads = {f"{t['server']}/{t['name']}": t["gateway"]["load"] for t in after_manifest["tools"]}
    assert loads == {t["tool"]: t["advised"] for t in advice["tools"]}  # the patch gives what was advised
    assert after_manifest["gateway_budget"]["initial_tokens"] == advice["initial_tokens"]["advised"]

    after = record(root, after_manifest, plans, tmp_path / "rerun").agent("assistant")
    assert after is not None
    assert after.sessions == before.sessions == 300
    assert after.tokens_per_session < before.tokens_per_session
    assert after.discovery_steps_per_session <= before.discovery_steps_per_session
    # the model's expectation is close to what the rerun measured (wasted search loads shift a little)
    assert after.tokens_per_session == pytest.approx(advice["expected_tokens_per_session"]["advised"], rel=0.05)


# --------------------------------------------------------------------------------------------- shadow


def replay_log(root: Path, log: Path) -> UsageStats:
    """The shadow log's calls played through the recorder, the way the gateway would record them."""
    plans: dict[str, list[PlannedCall]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        plans.setdefault(item["session"], []).append(PlannedCall(item["tool"], "ok"))
    return record(root, load_manifest(root), [SessionPlan(s, tuple(c)) for s, c in plans.items()])


def test_shadow_on_a_hand_made_log_gives_the_advice_of_the_same_calls_through_the_recorder(tmp_path: Path) -> None:
    root = serve_copy(tmp_path)
    views = [manifest_view(load_manifest(root))]
    settings, _ = advise_command.server_settings(root, views)
    recorded = advise(replay_log(root, SHADOW_LOG), views, settings)
    shadow = advise_command.run(AdviseOptions(root, SHADOW_LOG, "json"))
    data = json.loads(shadow.text)
    (a,) = recorded.agents
    assert data["agents"][0]["to_preload"] == list(a.to_preload) == ["notes/create_note", "notes/get_note"]
    assert data["agents"][0]["to_defer"] == list(a.to_defer) == ["calc/add", "calc/echo"]
    assert data["patch"] == advise_command.patch_for(root, recorded)
    assert data["agents"][0]["token_change_per_session"] == round(a.token_change, 4)
    assert data["agents"][0]["steps_saved_per_session"] == round(a.steps_saved, 4)
    assert data["shadow"] == {
        "agent": "assistant",
        "sessions": 24,
        "calls": 58,
        "unknown_tools": ["notes/delete_note"],
        "baseline_tokens_per_session": 970.0,
        "tool_search_tokens_per_session": round(a.measured_tokens_per_session, 4),
        "tool_search_saved_tokens_per_session": round(970 - a.measured_tokens_per_session, 4),
        "tool_search_steps_per_session": round(a.measured_steps_per_session, 4),
        "advised_tokens_per_session": round(a.advised_tokens, 4),
        "advised_steps_per_session": round(a.advised_steps, 4),
    }


def test_shadow_on_the_workloads_call_log_gives_the_workloads_recommendation(tmp_path: Path) -> None:
    root = serve_copy(tmp_path)
    manifest = load_manifest(root)
    with UsageRecorder(usage_path(root, "assistant"), clock=TickClock()) as rec:
        log = play(rec, manifest, plan_workload(300, seed=11))
    (tmp_path / "calls.jsonl").write_text("".join(json.dumps(line) + "\n" for line in log), encoding="utf-8")
    recorded = json.loads(advise_command.run(AdviseOptions(root, None, "json")).text)
    shadow = json.loads(advise_command.run(AdviseOptions(root, tmp_path / "calls.jsonl", "json")).text)
    for key in ("preload", "defer", "to_preload", "to_defer"):
        assert shadow["agents"][0][key] == recorded["agents"][0][key], key
    assert shadow["patch"] == recorded["patch"]


def test_shadow_text_says_what_tool_search_would_have_cost_and_saved(tmp_path: Path) -> None:
    root = serve_copy(tmp_path)
    text = advise_command.run(AdviseOptions(root, SHADOW_LOG, "text")).text
    assert text.startswith("shadow log: 24 session(s), 58 call(s) of `assistant` made without quiver\n")
    assert "  every tool preloaded:        970.0 tokens per session, no discovery\n" in text
    assert "not in the agent's tool set (refused by the gateway): notes/delete_note" in text
    assert "diff --git a/quiver.toml b/quiver.toml" in text


@pytest.mark.parametrize("where", ["", "docs", "examples/serve", "elsewhere"])
def test_the_apply_hint_applies_the_patch_from_where_the_user_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """`quiver advise -C examples/serve --patch P` in a git repository: the printed command applies P from
    the directory the user ran it in (a plain `git -C examples/serve apply P` skips every path)."""
    repo = tmp_path / "repo"
    project = repo / "examples" / "serve"
    project.mkdir(parents=True)
    (repo / "docs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (project / "quiver.toml").write_text("threshold = 30\n", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    patch = tmp_path / "advice.patch"  # what `quiver advise --patch` writes: a git diff relative to the project
    patch.write_text(
        "diff --git a/quiver.toml b/quiver.toml\n--- a/quiver.toml\n+++ b/quiver.toml\n@@ -1 +1,2 @@\n"
        ' threshold = 30\n+tool_search = "always"\n',
        encoding="utf-8",
    )
    cwd = tmp_path / where if where == "elsewhere" else repo / where
    monkeypatch.chdir(cwd)
    hint = advise_command.apply_command(project, Path(os.path.relpath(patch, cwd)))
    assert "--directory=examples/serve" in hint
    done = subprocess.run(shlex.split(hint), capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "Skipped" not in done.stderr, (hint, done.stderr)
    assert (project / "quiver.toml").read_text(encoding="utf-8") == 'threshold = 30\ntool_search = "always"\n'


def test_the_apply_hint_at_the_top_of_the_repository_or_outside_git_is_plain_git_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert advise_command.apply_command(tmp_path / "repo", Path("advice.patch")) == "git apply advice.patch"
    (tmp_path / "plain").mkdir()
    monkeypatch.chdir(tmp_path)
    assert advise_command.apply_command(tmp_path / "plain", Path("a b.patch")) == (
        f"git -C plain apply '{tmp_path / 'a b.patch'}'"
    )
