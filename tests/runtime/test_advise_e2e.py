"""Acceptance of "Measure the preload policy", end to end through `quiver serve`.

A seeded workload of 40 sessions with a skewed tool mix runs through one HTTP gateway over the example
servers (examples/serve, copied into tmp and committed to a fresh git repository). `quiver stats` must
report exactly the figures the plan implies; `quiver advise --patch` gives a config change that, applied
with `git apply` and recompiled, makes the same workload cost fewer tokens per session with no more
discovery steps; and `quiver advise --shadow` on the same calls, written by hand as a log, recommends the
same preload set on the unpatched project.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from _workload_client import expected_figures, exposed, http_gateway, play_through, seed_notes, shadow_lines

from fixtures.usage.workload import plan_workload
from quiver.validation import validate

pytestmark = pytest.mark.anyio

TEST_S = 100.0
COMMAND_S = 30.0
SESSIONS = 40
SEED = 9  # all ten tools of the mix, refusals, invalid create_note calls, a calc/flaky failure first
PRELOADED_BEFORE = {"calc/add", "calc/echo", "notes/search_notes"}  # examples/serve: preload_tools + named
FAST_FLAKY = '\n[tools."calc/flaky"]\nretry = {initial_interval = 0.01, maximum_interval = 0.05}\n'


async def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    with anyio.fail_after(COMMAND_S):
        result = await anyio.run_process(argv, cwd=cwd, env=env, check=False)
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, f"{argv}\n{out}\n{err}"
    return out


async def quiver(project: Path, *args: str) -> str:
    return await run([sys.executable, "-m", "quiver", *args, "--project", str(project)], project)


async def git(project: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # never a hook's repository
    config = ["-c", "user.name=quiver tests", "-c", "user.email=tests@example.invalid", "-c", "commit.gpgsign=false"]
    return await run(["git", *config, *args], project, env)


async def stats(project: Path) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    figures = json.loads(await quiver(project, "stats", "--format", "json"))
    assert validate(figures, "stats") == []
    assert figures["ignored_events"] == 0
    (agent,) = figures["agents"]
    keys = ("sessions_used", "calls", "errors", "validation_failures", "refusals", "first_uses_deferred",
            "steps_deferred")  # fmt: skip
    return agent, {t["tool"]: {k: t[k] for k in keys} for t in figures["tools"]}


def manifest_of(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / "build" / "quiver" / "assistant.json").read_text(encoding="utf-8"))
    return data


def initial_tokens(manifest: dict[str, Any]) -> int:
    """The tokens a session carries up front (preloaded schemas, meta-tools, server index): its recorded start."""
    return int(manifest["gateway_budget"]["initial_tokens"])


async def test_gateway_measured_advice_lowers_tokens_per_session_and_shadow_recommends_the_same(
    repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    plans = plan_workload(SESSIONS, SEED, extra_load_rate=0.0)  # limit-1 searches load only the tool searched
    assert all(plan.calls for plan in plans)  # every planned session makes a call, so the shadow log has it
    project = tmp_path / "project"
    shutil.copytree(repo_root / "examples" / "serve", project, ignore=shutil.ignore_patterns("build", ".quiver"))
    with (project / "quiver.toml").open("a", encoding="utf-8") as config:
        config.write(FAST_FLAKY)  # the default backoff (1 s, then 2 s) would only make the test wait
    manifest = project / "build" / "quiver" / "assistant.json"

    with anyio.fail_after(TEST_S):
        await git(project, "init", "-q")
        await git(project, "add", "-A")
        await git(project, "commit", "-q", "-m", "examples/serve")
        await quiver(project, "compile", "-q")
        before_manifest = manifest_of(project)
        tokens = {f"{t['server']}/{t['name']}": int(t["tokens"]) for t in before_manifest["tools"]}
        loads = {f"{t['server']}/{t['name']}": t["gateway"]["load"] for t in before_manifest["tools"]}
        assert {t for t, load in loads.items() if load == "preloaded"} == PRELOADED_BEFORE

        # 1. the workload through the gateway, as configured
        env = upstream_env(CALC_FLAKY_FAILS="3", NOTES_DB=str(seed_notes(tmp_path / "notes-before.json")))
        async with http_gateway(manifest, cwd=repo_root, env=env, ledger=tmp_path / "ledger-before.db") as gateway:
            listings = await play_through(gateway.url, plans)
        assert set(listings) == {frozenset(exposed(t) for t in PRELOADED_BEFORE)}

        before, before_tools = await stats(project)
        ledger = ("--ledger", str(tmp_path / "ledger-before.db"), "--format", "json")
        actions = json.loads(await quiver(project, "ledger", "list", *ledger))
        assert len(actions) > 100 and validate(actions, "ledger-list") == []  # the gateway's real records
        for state in sorted({a["state"] for a in actions}):
            first = next(a for a in actions if a["state"] == state)
            shown = json.loads(await quiver(project, "ledger", "show", first["id"], *ledger))
            assert validate(shown, "ledger-show") == []
        want, want_tools = expected_figures(plans, PRELOADED_BEFORE, tokens, initial_tokens(before_manifest))
        assert {k: before[k] for k in want} == want
        assert before_tools == want_tools
        assert (before["sessions"], before["calls"], before["validation_failures"], before["errors"]) == (40, 193, 3, 2)
        assert (before["refusals"], before["discovery_steps"]) == (4, 172)

        # 2. advice from the recorded sessions, and the same calls as a hand-made shadow log
        patch_file = tmp_path / "advice.patch"
        advice = json.loads(
            await quiver(project, "advise", "--format", "json", "--min-sessions", "10", "--patch", str(patch_file))
        )
        assert validate(advice, "advise") == []
        (advised,) = advice["agents"]
        assert advised["sessions"] == SESSIONS
        assert advised["to_preload"] == ["calc/multiply", "notes/create_note", "notes/get_note"]
        assert advised["to_defer"] == ["calc/add", "calc/echo"]
        assert advised["measured_tokens_per_session"] == before["tokens_per_session"]
        assert advised["measured_steps_per_session"] == before["discovery_steps_per_session"]
        patch = patch_file.read_text(encoding="utf-8")
        assert patch == advice["patch"] and patch.startswith("diff --git a/quiver.toml b/quiver.toml\n")

        log = tmp_path / "shadow.jsonl"
        log.write_text(shadow_lines(plans), encoding="utf-8")
        shadow = json.loads(
            await quiver(project, "advise", "--shadow", str(log), "--agent", "assistant", "--format", "json",
                         "--min-sessions", "10")
        )  # fmt: skip
        assert validate(shadow, "advise") == []
        (shadowed,) = shadow["agents"]
        for key in ("preload", "defer", "to_preload", "to_defer"):
            assert shadowed[key] == advised[key], key
        assert shadow["config_change"] == advice["config_change"]
        assert shadow["patch"] == advice["patch"]
        assert shadow["shadow"]["sessions"] == SESSIONS
        assert shadow["shadow"]["calls"] == sum(len(p.calls) for p in plans)
        assert shadow["shadow"]["unknown_tools"] == ["notes/delete_note"]

        # 3. the advice applied, recompiled, and the same workload again on a fresh usage file
        await git(project, "apply", "--check", str(patch_file))
        await git(project, "apply", str(patch_file))
        # calc/add and calc/echo are named in the agent's `tools`: deferring them turns deferred-tool-loading on
        changed = (await git(project, "diff", "--name-only")).split()
        assert changed == [".github/agents/assistant.agent.md", "quiver.toml"]
        await quiver(project, "compile", "-q")
        after_manifest = manifest_of(project)
        after_loads = {f"{t['server']}/{t['name']}": t["gateway"]["load"] for t in after_manifest["tools"]}
        assert after_loads == {t["tool"]: t["advised"] for t in advised["tools"]}
        preloaded_after = set(advised["preload"])
        assert preloaded_after == {"calc/multiply", "notes/create_note", "notes/get_note", "notes/search_notes"}
        (project / ".quiver" / "usage").rename(tmp_path / "usage-before")

        env = upstream_env(CALC_FLAKY_FAILS="3", NOTES_DB=str(seed_notes(tmp_path / "notes-after.json")))
        async with http_gateway(manifest, cwd=repo_root, env=env, ledger=tmp_path / "ledger-after.db") as gateway:
            listings = await play_through(gateway.url, plans)
        assert set(listings) == {frozenset(exposed(t) for t in preloaded_after)}

        after, after_tools = await stats(project)
        want, want_tools = expected_figures(plans, preloaded_after, tokens, initial_tokens(after_manifest))
        assert {k: after[k] for k in want} == want
        assert after_tools == want_tools
        assert (after["sessions"], after["calls"], after["discovery_steps"]) == (40, 193, 46)

    assert after["tokens_per_session"] < before["tokens_per_session"]
    assert after["discovery_steps_per_session"] <= before["discovery_steps_per_session"]
    # the advice's model predicted exactly what the rerun measured (this workload has no wasted loads)
    assert after["tokens_per_session"] == pytest.approx(advised["expected_tokens_per_session"]["advised"], abs=1e-3)
    assert after["discovery_steps_per_session"] == pytest.approx(advised["expected_steps_per_session"]["advised"])
