"""The flow guard as an executor hook, in memory: which calls it raises to `approval = "always"` and why, per
session; the ledger executor then waits for approval, the ledger-less one refuses."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from quiver.runtime._manifest import parse_manifest
from quiver.runtime.direct import DirectExecutor
from quiver.runtime.executor import LedgerExecutor
from quiver.runtime.flow_guard import FlowGuard
from quiver.runtime.ledger_sqlite import SqliteLedger
from quiver.runtime.protocol import CallOutcome, CallRequest

pytestmark = pytest.mark.anyio


def manifest(enforce: bool = True) -> Any:
    def tool(name: str, labels: list[str]) -> dict[str, Any]:
        return {
            "server": "mail", "name": name, "load": "preloaded", "sha256": name, "capabilities": labels,
            "definition": {"name": name, "inputSchema": {"type": "object"}}, "names": {"quiver": f"mail__{name}"},
            "policy": {"side_effect": "read_only" if labels != ["exfiltration"] else "irreversible_write"},
        }  # fmt: skip

    tools = [
        tool("read_inbox", ["untrusted_input", "private_data"]),
        tool("send", ["exfiltration"]),
        tool("purge", ["destructive"]),
    ]
    return parse_manifest(
        {"manifestVersion": 1, "agent": {"id": "mailer"}, "servers": [], "tools": tools, "flows": {"enforce": enforce}}
    )


def request(tool: str, session: str = "s1") -> CallRequest:
    policy = {"side_effect": "read_only" if tool == "read_inbox" else "irreversible_write", "timeout_ms": 5000}
    return CallRequest("mail", tool, {"to": "x@example.com"}, tool, policy, session)


async def upstream(request: CallRequest, meta: Mapping[str, Any], timeout_s: float) -> Mapping[str, Any]:
    return {"content": [{"type": "text", "text": f"{request.tool} done"}], "isError": False}


def test_the_manifest_carries_the_labels_and_the_switch() -> None:
    parsed = manifest()
    assert parsed.flows_enforce is True and parsed.by_key[("mail", "send")].capabilities == ("exfiltration",)
    assert manifest(enforce=False).flows_enforce is False


def test_a_sink_is_raised_only_after_its_own_session_answered_an_untrusted_input_call() -> None:
    guard = FlowGuard(manifest())
    assert guard.before(request("send")).policy.get("approval") is None
    guard.after(request("read_inbox"), CallOutcome({"content": []}, "succeeded"))
    raised = guard.before(request("send")).policy
    assert raised["approval"] == "always" and "through `mail/read_inbox`" in raised["approval_reason"]
    assert guard.before(request("send", session="s2")).policy.get("approval") is None  # another session
    assert guard.before(request("read_inbox")).policy.get("approval") is None  # not a sink
    assert "`mail/purge` can destroy things" in guard.before(request("purge")).policy["approval_reason"]


def test_a_source_call_that_never_ran_does_not_mark_the_session() -> None:
    guard = FlowGuard(manifest())
    guard.after(request("read_inbox"), CallOutcome({"content": []}, "awaiting_approval"))
    assert guard.source_of("s1") is None


async def test_the_ledger_executor_holds_the_raised_sink_for_approval_and_the_ledger_keeps_the_reason(
    tmp_path: Path,
) -> None:
    store = SqliteLedger(tmp_path / "ledger.db")
    executor = LedgerExecutor(store, hook=FlowGuard(manifest()))
    try:
        with anyio.fail_after(20):
            assert (await executor.execute(request("send"), upstream)).state == "succeeded"
            assert (await executor.execute(request("read_inbox"), upstream)).state == "succeeded"
            held = await executor.execute(request("send"), upstream)
            assert held.state == "awaiting_approval" and held.result["isError"] is True
            action = await store.get(held.action_id or "")
    finally:
        store.close()
    assert "read untrusted input" in action.policy_value()["approval_reason"]


async def test_without_a_ledger_the_raised_sink_is_refused_naming_the_reason() -> None:
    executor = DirectExecutor(hook=FlowGuard(manifest()))
    with anyio.fail_after(20):
        await executor.execute(request("read_inbox"), upstream)
        refused = await executor.execute(request("send"), upstream)
    assert refused.state == "failed_final" and "cannot ask for one" in refused.result["content"][0]["text"]
