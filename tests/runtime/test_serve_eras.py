"""`quiver serve` in both protocol eras the SDK speaks, with the SDK's real clients, over stdio and HTTP.

2026-07-28: `server/discover` instead of a handshake, stateless requests (a bare POST with the per-request
envelope is answered, no session id), approvals through `input_required` (the client's elicitation
callback answers the form, the SDK retries with the answer and the sealed request state), and a client
that cannot elicit gets the waiting action's id. 2025-11-25: the handshake, and approvals by elicitation.
The project is examples/serve with `calc/add` set to need an approval for every call.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from click.testing import CliRunner
from mcp import Client, ClientSession
from test_serve_e2e import TEST_S, TOKEN, TRANSPORTS, _Fixed, serving, text

from quiver.cli import cli
from quiver.runtime.ledger_sqlite import SqliteLedger

pytestmark = pytest.mark.anyio

APPROVED = '\n[tools."calc/add"]\napproval = "always"\n'


@pytest.fixture(scope="module")
def approval_manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("approval") / "project"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "serve", root,
                    ignore=shutil.ignore_patterns("build", ".quiver"))  # fmt: skip
    with (root / "quiver.toml").open("a", encoding="utf-8") as config:
        config.write(APPROVED)
    result = CliRunner().invoke(cli, ["compile", "--project", str(root), "--quiet"])
    assert result.exit_code == 0, result.output
    return root / "build" / "quiver" / "assistant.json"


class Answers:
    """An elicitation callback that answers each approval form and keeps the messages it was shown."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        content = {"approve": True} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


async def actions(ledger: Path) -> list[Any]:
    store = SqliteLedger(ledger)
    try:
        return list(await store.list())
    finally:
        store.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("answer", "state"), [("accept", "succeeded"), ("decline", "failed_final")])
async def test_a_2026_client_approves_through_input_required_and_the_call_runs_once(
    approval_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path,
    transport: str, answer: str, state: str,
) -> None:  # fmt: skip
    answers = Answers(answer)
    with anyio.fail_after(TEST_S):
        async with serving(approval_manifest, transport, repo_root, upstream_env(), tmp_path) as gateway:
            async with gateway.streams() as streams, Client(_Fixed(streams), elicitation_callback=answers) as client:
                assert client.protocol_version == "2026-07-28"
                result = await client.call_tool("calc__add", {"a": 2, "b": 3})
            recorded = await actions(gateway.ledger)
    [message] = answers.asked  # asked once, through the input_required round
    assert message.startswith("Approve `calc/add`?") and "a = 2" in message
    [action] = recorded
    assert (action.state, action.approval, action.approval_ref) == (
        state, "approved" if answer == "accept" else "declined", "elicitation",
    )  # fmt: skip
    if answer == "accept":
        assert not result.is_error and result.structured_content == {"result": 5}
        assert action.attempts == 1
    else:
        assert result.is_error and action.attempts == 0  # declined: nothing was sent upstream


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_2026_client_that_cannot_elicit_gets_the_waiting_action_to_approve_with_the_cli(
    approval_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path,
    transport: str,
) -> None:  # fmt: skip
    with anyio.fail_after(TEST_S):
        async with serving(approval_manifest, transport, repo_root, upstream_env(), tmp_path) as gateway:
            async with gateway.client() as client:
                result = await client.call_tool("calc__add", {"a": 2, "b": 3})
            [action] = await actions(gateway.ledger)
    assert result.is_error and f"quiver ledger approve {action.id}" in text(result)
    assert action.state == "awaiting_approval"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_handshake_era_session_is_asked_by_elicitation(
    approval_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path,
    transport: str,
) -> None:  # fmt: skip
    answers = Answers("accept")
    with anyio.fail_after(TEST_S):
        async with serving(approval_manifest, transport, repo_root, upstream_env(), tmp_path) as gateway:
            async with (
                gateway.streams() as (read, write),
                ClientSession(read, write, elicitation_callback=answers) as s,
            ):
                initialized = await s.initialize()
                assert initialized.protocol_version == "2025-11-25"
                result = await s.call_tool("calc__add", {"a": 20, "b": 22})
            [action] = await actions(gateway.ledger)
    assert not result.is_error and result.structured_content == {"result": 42}
    assert len(answers.asked) == 1 and (action.state, action.approval_ref) == ("succeeded", "elicitation")


async def test_over_http_2026_requests_are_stateless_and_server_discover_answers_without_a_handshake(
    approval_manifest: Path, repo_root: Path, upstream_env: Callable[..., dict[str, str]], tmp_path: Path,
) -> None:  # fmt: skip
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28"}  # fmt: skip
    with anyio.fail_after(TEST_S):
        async with serving(approval_manifest, "http", repo_root, upstream_env(), tmp_path) as gateway:
            assert gateway.url is not None
            async with httpx2.AsyncClient(headers=headers) as http:

                async def post(n: int, method: str, **params: Any) -> httpx2.Response:
                    body = {"jsonrpc": "2.0", "id": n, "method": method, "params": {"_meta": envelope, **params}}
                    names = {"Mcp-Name": params["name"]} if "name" in params else {}
                    return await http.post(gateway.url or "", json=body, headers={"Mcp-Method": method, **names})

                discover = await post(1, "server/discover")
                listed = [await post(n, "tools/list") for n in (2, 3)]
                forged = await post(4, "tools/call", name="calc__add", arguments={"a": 1, "b": 2},
                                    requestState='{"idempotency_key": "someone-elses"}')  # fmt: skip
            recorded = await actions(gateway.ledger)
    assert discover.status_code == 200, discover.text
    found = _json(discover)["result"]
    assert "2026-07-28" in found["supportedVersions"]  # the handshake era is negotiated by `initialize` instead
    assert found["capabilities"]["tools"]["listChanged"] is True  # served through subscriptions/listen
    assert found["instructions"].startswith("Tools of agent `assistant`")
    for response in listed:  # no initialize, no session: each request stands alone
        assert response.status_code == 200 and "mcp-session-id" not in response.headers
        names = [t["name"] for t in _json(response)["result"]["tools"]]
        assert names[:3] == ["calc__add", "calc__echo", "notes__search_notes"]
    # a request state quiver did not seal is refused by the SDK's boundary before any action is recorded
    assert _json(forged)["error"]["message"] == "Invalid or expired requestState" and recorded == []


def _json(response: httpx2.Response) -> Any:
    """A JSON-RPC answer, sent as JSON or as one server-sent event."""
    import json

    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()
