"""`quiver ledger list|show|approve|deny|resolve|export`: the command functions, and the click group once
cli.py registers it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from quiver.cli import cli
from quiver.commands import ledger as cmd
from quiver.errors import InputError, UsageError
from quiver.runtime.executor import LedgerExecutor
from quiver.runtime.ledger import Action, canonical_json, new_action_id, sha256_text
from quiver.runtime.ledger_open import LedgerTarget
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallRequest

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def _action(key: str, tool: str, at: float) -> Action:
    action_id = new_action_id(at)
    arguments = canonical_json({"amount": 1})
    return Action(
        id=action_id, idempotency_key=key, session_id="s1", requester="model", call_id=None, server="calc", tool=tool,
        tool_sha256="", arguments=arguments, args_sha256=sha256_text(arguments), side_effect="reversible_write",
        policy=canonical_json({"side_effect": "reversible_write"}), state="proposed", created_at=at, updated_at=at,
    )  # fmt: skip


async def _seed(path: Path) -> dict[str, str]:
    store = SqliteLedger(path)
    ids = {}
    try:
        for name, tool, at, states in [
            ("done", "add", T0, ["validated", "dispatching", "succeeded"]),
            ("waiting", "counter_increment", T0 + 3600, ["validated", "awaiting_approval"]),
            ("unknown", "counter_increment", T0 + 7200, ["validated", "dispatching", "unknown_outcome"]),
        ]:
            action, _ = await store.create_action(_action(name, tool, at))
            for state in states:
                action = await store.transition(action.id, (action.state,), state, at=at + 1)  # type: ignore[arg-type]
            ids[name] = action.id
    finally:
        store.close()
    return ids


@pytest.fixture
def ledger(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / ".quiver" / "ledger.db"
    return path, anyio.run(_seed, path)


def test_list_shows_every_action_oldest_first_as_a_table(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    lines = cmd.list_actions(path).splitlines()
    assert lines[0].split() == ["ID", "CREATED", "STATE", "TOOL", "ATTEMPTS", "KEY"]
    assert [line.split()[0] for line in lines[1:]] == [ids["done"], ids["waiting"], ids["unknown"]]
    assert lines[1].split()[1:] == ["2026-01-01T00:00:00.000Z", "succeeded", "calc/add", "0", "done"]


def test_list_filters_by_state_tool_and_since_and_prints_json(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger

    def listed(**filters: Any) -> list[str]:
        return [a["id"] for a in json.loads(cmd.list_actions(path, fmt="json", now=T0 + 7300, **filters))]

    assert listed(states=["unknown_outcome", "succeeded"]) == [ids["done"], ids["unknown"]]
    assert listed(tools=["calc/counter_increment"]) == [ids["waiting"], ids["unknown"]]
    assert listed(tools=["add"]) == [ids["done"]]
    assert listed(since="2026-01-01T01:00:00Z") == [ids["waiting"], ids["unknown"]]
    assert listed(since="1h") == [ids["unknown"]]
    assert listed(limit=1) == [ids["done"]]
    record = json.loads(cmd.list_actions(path, fmt="json"))[0]
    assert record["arguments"] == {"amount": 1} and record["created_at"] == "2026-01-01T00:00:00.000Z"


@pytest.mark.parametrize("since", ["yesterday", "5 minutes", "2026-13-01"])
def test_a_bad_since_is_a_usage_error(ledger: tuple[Path, dict[str, str]], since: str) -> None:
    with pytest.raises(UsageError):
        cmd.list_actions(ledger[0], since=since)


def test_an_unknown_state_filter_is_a_usage_error(ledger: tuple[Path, dict[str, str]]) -> None:
    with pytest.raises(UsageError, match="unknown state"):
        cmd.list_actions(ledger[0], states=["done"])


def test_show_gives_the_record_its_attempts_and_its_events(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    text = cmd.show_action(path, ids["unknown"])
    assert f"id: {ids['unknown']}" in text and "state: unknown_outcome" in text
    assert "validated -> dispatching" in text and "attempt log:\n  (none)" in text
    record = json.loads(cmd.show_action(path, ids["unknown"], fmt="json"))
    assert [(e["from"], e["to"]) for e in record["events"]] == [
        (None, "proposed"), ("proposed", "validated"), ("validated", "dispatching"), ("dispatching", "unknown_outcome"),
    ]  # fmt: skip


def test_show_of_an_unknown_id_is_a_usage_error(ledger: tuple[Path, dict[str, str]]) -> None:
    with pytest.raises(UsageError, match="no action"):
        cmd.show_action(ledger[0], "01NOPE")


def test_approve_makes_a_waiting_action_validated_and_approved(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    text = cmd.approve(path, ids["waiting"], by="ops", now=T0 + 9000)
    assert ids["waiting"] in text and "`waiting`" in text
    record = json.loads(cmd.show_action(path, ids["waiting"], fmt="json"))["action"]
    assert (record["state"], record["approval"], record["approval_ref"]) == ("validated", "approved", "cli:ops")
    with pytest.raises(UsageError, match="is validated, not awaiting_approval"):
        cmd.approve(path, ids["waiting"], by="ops")


def test_deny_ends_a_waiting_action_failed_final(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    cmd.deny(path, ids["waiting"], by="ops")
    record = json.loads(cmd.show_action(path, ids["waiting"], fmt="json"))["action"]
    assert (record["state"], record["approval"], record["error_type"]) == (
        "failed_final",
        "declined",
        "approval_declined",
    )
    with pytest.raises(UsageError):
        cmd.deny(path, ids["done"])


def test_resolve_settles_only_unknown_outcomes_and_stores_the_operators_note(
    ledger: tuple[Path, dict[str, str]],
) -> None:
    path, ids = ledger
    with pytest.raises(UsageError, match="succeeded or failed_final"):
        cmd.resolve(path, ids["unknown"], "dispatching")
    with pytest.raises(UsageError, match="is succeeded, not unknown_outcome"):
        cmd.resolve(path, ids["done"], "failed_final")
    cmd.resolve(path, ids["unknown"], "succeeded", note="row 7 present", by="ops")
    record = json.loads(cmd.show_action(path, ids["unknown"], fmt="json"))
    assert record["action"]["state"] == "succeeded"
    assert record["action"]["result"]["isError"] is False
    assert record["events"][-1]["detail"] == "resolved succeeded by cli:ops: row 7 present"


def test_export_writes_one_json_line_per_action_with_attempts_and_events(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    lines = list(cmd.export(path, states=["succeeded", "unknown_outcome"]))
    records = [json.loads(line) for line in lines]
    assert all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    assert [r["id"] for r in records] == [ids["done"], ids["unknown"]]
    assert {"attempts", "events", "policy", "arguments"} <= set(records[0])


def test_the_ledger_path_comes_from_the_flag_then_the_environment_then_the_config(tmp_path: Path) -> None:
    (tmp_path / "quiver.toml").write_text('ledger = "state/ledger.db"\n')
    assert cmd.ledger_path(tmp_path, None, {}) == tmp_path / "state/ledger.db"
    assert cmd.ledger_path(tmp_path, None, {"QUIVER_LEDGER_URL": "sqlite:///env.db"}) == tmp_path / "env.db"
    assert cmd.ledger_path(tmp_path, None, {"QUIVER_LEDGER_URL": "sqlite:////abs/l.db"}) == Path("/abs/l.db")
    assert cmd.ledger_path(tmp_path, "flag.db", {"QUIVER_LEDGER_URL": "env.db"}) == tmp_path / "flag.db"
    assert cmd.ledger_path(Path("/nowhere"), None, {}) == Path("/nowhere/.quiver/ledger.db")
    assert cmd.ledger_path(tmp_path, None, {"QUIVER_LEDGER_URL": "postgresql://db/quiver"}) == LedgerTarget(
        "postgresql", "postgresql://db/quiver"
    )
    with pytest.raises(UsageError, match="mysql"):
        cmd.ledger_path(tmp_path, None, {"QUIVER_LEDGER_URL": "mysql://db/quiver"})


def test_a_missing_ledger_is_an_input_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        cmd.list_actions(tmp_path / "none.db")
    assert caught.value.hint is not None and "--ledger" in caught.value.hint


def test_a_file_that_is_not_a_ledger_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_text("not sqlite at all, just text that is long enough to be read as a header" * 20)
    with pytest.raises(InputError, match="is not a SQLite database"):
        cmd.list_actions(path)


def test_an_operator_approval_releases_the_waiting_call_on_its_re_call(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    calls: list[str] = []

    async def dispatch(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
        calls.append(request.tool)
        return {"content": [{"type": "text", "text": "sent"}], "isError": False}

    async def call() -> Any:
        store = SqliteLedger(path)
        try:
            policy = {"side_effect": "irreversible_write", "approval": "irreversible"}
            request = CallRequest("mail", "send", {"to": "a@b"}, "", policy, "s1", idempotency_key="mail-1")
            return await LedgerExecutor(store).execute(request, dispatch)
        finally:
            store.close()

    waiting = anyio.run(call)
    assert (waiting.state, calls) == ("awaiting_approval", [])
    cmd.approve(path, waiting.action_id or "", by="ops")
    ran, again = anyio.run(call), anyio.run(call)
    assert (ran.state, again.state, calls) == ("succeeded", "succeeded", ["send"])


# --- the click group (runs once cli.py registers `quiver ledger`) -----------------------------------


def run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["ledger", *args, "--project", str(root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_cli_list_reads_the_configured_ledger_and_prints_json(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    root = path.parent.parent
    code, out, _ = run(root, "list", "--state", "awaiting_approval", "--format", "json")
    assert code == 0 and [a["id"] for a in json.loads(out)] == [ids["waiting"]]
    code, out, _ = run(root, "list", "--tool", "add")
    assert code == 0 and ids["done"] in out and ids["waiting"] not in out


def test_cli_approve_then_show_and_export(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    root = path.parent.parent
    code, out, _ = run(root, "approve", ids["waiting"], "--by", "ops")
    assert code == 0 and ids["waiting"] in out
    code, out, _ = run(root, "show", ids["waiting"], "--format", "json")
    assert json.loads(out)["action"]["approval"] == "approved"
    code, out, _ = run(root, "export", "--since", "2026-01-01T01:00:00Z")
    assert code == 0 and len(out.splitlines()) == 2


def test_cli_expected_errors_exit_2_with_one_line(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    root = path.parent.parent
    code, _, err = run(root, "resolve", ids["done"], "--state", "succeeded")
    assert code == 2 and err.startswith("error: action") and "not unknown_outcome" in err
    code, _, err = run(root, "show", "nope")
    assert code == 2 and "no action with id `nope`" in err
    code, _, err = run(root, "resolve", ids["unknown"], "--state", "maybe")
    assert code == 2
    code, _, err = run(root, "list", "--ledger", str(root / "missing.db"))
    assert code == 2 and "no ledger at" in err


def test_cli_resolve_settles_an_unknown_outcome(ledger: tuple[Path, dict[str, str]]) -> None:
    path, ids = ledger
    code, out, _ = run(path.parent.parent, "resolve", ids["unknown"], "--state", "failed_final", "--note", "absent")
    assert code == 0 and "failed_final" in out


def test_cli_migrate_calls_an_old_ledger_upgraded_then_up_to_date(ledger: tuple[Path, dict[str, str]]) -> None:
    import sqlite3

    from quiver.runtime.ledger_sqlite import SCHEMA_VERSION

    path, ids = ledger
    with sqlite3.connect(path) as raw:  # what schema version 1 wrote: no event_count column
        raw.execute("ALTER TABLE actions DROP COLUMN event_count")
        raw.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    root = path.parent.parent
    code, out, _ = run(root, "migrate")
    assert (code, out) == (0, f"upgraded ledger {path} from schema version 1 to {SCHEMA_VERSION}\n")
    code, out, _ = run(root, "migrate")
    assert (code, out) == (0, f"ledger {path} is up to date (schema version {SCHEMA_VERSION})\n")
    code, out, _ = run(root, "show", ids["done"])
    assert code == 0 and ids["done"] in out
