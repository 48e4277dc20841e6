"""Every `--format json` output has a schema in `schemas/`, and real outputs of the CLI validate against it.

Each check also drops a required key from the real output and expects the schema to reject it, so a schema
that accepts anything cannot pass. stats and advise from a real gateway run are validated in
tests/runtime/test_advise_e2e.py (with the ledger that run wrote); here they run on an empty usage folder.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.runtime.ledger import Action, canonical_json, new_action_id, sha256_text
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.validation import load_schema, validate

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
OUTPUT_SCHEMAS = (
    "advise", "budget", "explain", "ledger-action", "ledger-export", "ledger-list", "ledger-show", "route-test",
    "rule", "search", "stats",
)  # fmt: skip


def run_json(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def assert_contract(value: Any, name: str) -> None:
    """`value` validates against schema `name`; without a required key, or with a key it does not know, it does
    not (so a schema that accepts anything cannot pass)."""
    assert validate(value, name) == [], (name, validate(value, name)[:5])

    def changed(change: Any) -> Any:
        broken = copy.deepcopy(value)
        target = broken[0] if isinstance(broken, list) and broken else broken
        if isinstance(target, dict) and isinstance(target.get("action"), dict):
            target = target["action"]
        assert isinstance(target, dict), (name, "an output to break needs an object")
        change(target)
        return broken

    sample = value[0] if isinstance(value, list) else value
    keys = sorted(sample["action"] if isinstance(sample.get("action"), dict) else sample)
    required = [k for k in keys if validate(changed(lambda target, k=k: target.pop(k)), name)]
    assert required, f"schema `{name}` requires none of {keys}"
    assert validate(changed(lambda target: target.update(unknown_key=1)), name), f"`{name}` takes unknown keys"


def test_every_output_schema_is_shipped_closed_and_titled() -> None:
    for name in OUTPUT_SCHEMAS:
        schema = load_schema(name)
        assert schema["title"].startswith("quiver ") and schema["description"].startswith("`quiver "), name
        for definition in schema.get("$defs", {}).values():
            if definition.get("type") == "object":
                assert definition["additionalProperties"] is False  # a new field must be added here first


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("out") / "demo"
    shutil.copytree(DEMO, project, ignore=shutil.ignore_patterns(".quiver"))
    shutil.copytree(DEMO / ".quiver", project / ".quiver", ignore=shutil.ignore_patterns("cache", "usage"))
    return project


def test_search_json_validates(demo: Path) -> None:
    hits = run_json("search", "merge a pull request", "-C", str(demo), "--format", "json", "--lexical")
    assert hits and hits[0]["tool"] == "merge_pull_request"
    assert_contract(hits, "search")
    scoped = run_json("search", "take a screenshot", "--agent", "browser-tester", "-C", str(demo), "--format", "json",
                      "--lexical", "-k", "2")  # fmt: skip
    assert len(scoped) == 2 and validate(scoped, "search") == []
    assert run_json("search", "zzzz qqqq", "-C", str(demo), "--format", "json", "--lexical") == []


def test_route_test_json_validates_with_and_without_a_baseline(demo: Path, tmp_path: Path) -> None:
    report = run_json("route-test", "-C", str(demo), "--format", "json", "--lexical")
    assert report["cases"] and any(c["winner"] for c in report["cases"])  # a case ranked below first: a winner
    assert_contract(report, "route-test")
    baseline = tmp_path / "routes-baseline.json"
    run_json("route-test", "-C", str(demo), "--format", "json", "--lexical", "--baseline", str(baseline),
             "--update-baseline")  # fmt: skip
    compared = run_json("route-test", "-C", str(demo), "--format", "json", "--lexical", "--baseline", str(baseline))
    assert compared["baseline"]["regressions"] == []
    assert_contract(compared, "route-test")


def test_rule_json_validates_for_one_rule_and_for_all() -> None:
    one = run_json("rule", "AGT008", "--format", "json")
    assert one["code"] == "AGT008"
    assert_contract(one, "rule")
    every = run_json("rule", "--all", "--format", "json")
    assert len(every) > 50
    assert_contract(every, "rule")


def test_stats_and_advise_json_with_no_recorded_session_validate(demo: Path) -> None:
    figures = run_json("stats", "-C", str(demo), "--format", "json")
    assert figures["sessions"] == 0
    assert_contract(figures, "stats")
    since = run_json("stats", "-C", str(demo), "--format", "json", "--since", "7d")
    assert isinstance(since["since"], float) and validate(since, "stats") == []


def test_advise_json_from_a_shadow_log_validates(demo: Path, tmp_path: Path) -> None:
    log = tmp_path / "shadow.jsonl"
    calls = [("s1", "github/issue_write"), ("s1", "github/get_me"), ("s2", "github/issue_write")]
    log.write_text("".join(json.dumps({"session": s, "tool": t, "timestamp": T0 + n}) + "\n"
                           for n, (s, t) in enumerate(calls)))  # fmt: skip
    advice = run_json("advise", "-C", str(demo), "--shadow", str(log), "--agent", "ops", "--min-sessions", "1",
                      "--format", "json")  # fmt: skip
    assert advice["shadow"]["calls"] == 3 and advice["agents"]
    assert_contract(advice, "advise")


# ---------------------------------------------------------------- the ledger


def _action(key: str, tool: str, at: float) -> Action:
    arguments = canonical_json({"amount": 1})
    return Action(
        id=new_action_id(at), idempotency_key=key, session_id="s1", requester="model", call_id="7", server="calc",
        tool=tool, tool_sha256=sha256_text(tool), arguments=arguments, args_sha256=sha256_text(arguments),
        side_effect="reversible_write", policy=canonical_json({"side_effect": "reversible_write"}), state="proposed",
        created_at=at, updated_at=at,
    )  # fmt: skip


async def _seed(path: Path) -> dict[str, str]:
    store = SqliteLedger(path)
    ids = {}
    try:
        for name, tool, at, states in [
            ("done", "add", T0, ["validated", "dispatching", "succeeded"]),
            ("waiting", "counter_increment", T0 + 3600, ["validated", "awaiting_approval"]),
            ("unknown", "counter_increment", T0 + 7200, ["validated", "dispatching", "unknown_outcome"]),
            ("denied", "counter_increment", T0 + 7300, ["validated", "awaiting_approval"]),
        ]:
            action, _ = await store.create_action(_action(name, tool, at))
            for state in states:
                action = await store.transition(action.id, (action.state,), state, at=at + 1)  # type: ignore[arg-type]
            ids[name] = action.id
    finally:
        store.close()
    return ids


def test_ledger_list_show_approve_deny_resolve_and_export_json_validate(tmp_path: Path) -> None:
    ids = anyio.run(_seed, tmp_path / ".quiver" / "ledger.db")
    where = ("-C", str(tmp_path), "--format", "json")
    listed = run_json("ledger", "list", *where)
    assert [a["id"] for a in listed] == list(ids.values())
    assert_contract(listed, "ledger-list")
    assert_contract(run_json("ledger", "approve", ids["waiting"], "--by", "ops", *where), "ledger-action")
    assert_contract(run_json("ledger", "deny", ids["denied"], "--by", "ops", *where), "ledger-action")
    resolved = run_json("ledger", "resolve", ids["unknown"], "--state", "succeeded", *where)
    assert resolved["state"] == "succeeded"
    assert_contract(resolved, "ledger-action")
    for action_id in ids.values():
        shown = run_json("ledger", "show", action_id, *where)
        assert shown["events"]
        assert_contract(shown, "ledger-show")
    exported = CliRunner().invoke(cli, ["ledger", "export", "-C", str(tmp_path)]).stdout.splitlines()
    assert len(exported) == len(ids)
    for line in exported:
        assert_contract(json.loads(line), "ledger-export")


def test_compile_budget_and_explain_json_validate(demo: Path) -> None:
    compiled = run_json("compile", "-C", str(demo), "--format", "json")
    assert [row["agent"] for row in compiled["agents"]] == ["browser-tester", "ops", "release-notes", "researcher"]
    assert_contract(compiled, "budget")
    assert run_json("budget", "-C", str(demo), "--format", "json") == compiled
    for agent in ("ops", "release-notes"):
        explained = run_json("explain", agent, "-C", str(demo), "--format", "json")
        assert explained["tools"]
        assert_contract(explained, "explain")
    one = run_json("explain", "ops", "github/issue_write", "-C", str(demo), "--format", "json")
    assert [t["tool"] for t in one["tools"]] == ["issue_write"] and validate(one, "explain") == []
