"""A hostile `pattern` in a pinned schema, through a real `quiver serve --http` and the SDK's client
(issue 26): an argument built to make a backtracking engine run for minutes is answered at once when RE2
can match the pattern, and within the time budget otherwise; other clients are answered meanwhile."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import mcp.types as types
import pytest
from _http_gateway import HANG_GUARD_S, http_gateway
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from projects import agent_text, make_project
from quiver.cli import cli

pytestmark = pytest.mark.anyio

TOKEN = "pattern-test-token-0123456789"
SERVER = Path(__file__).with_name("_pattern_server.py")
HOSTILE = "a" * 30 + "!"


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(
        tmp_path_factory.mktemp("patterns") / "project",
        agents={".github/agents/a.agent.md": agent_text("description: d\ntools: ['p/*']")},
        mcp={"mcpServers": {"p": {"type": "stdio", "command": sys.executable, "args": [str(SERVER)], "tools": ["*"]}}},
    )
    for args in (["snapshot"], ["compile", "--quiet"]):
        done = CliRunner().invoke(cli, [*args, "--project", str(root)])
        assert done.exit_code == 0, done.output
    return root / "build" / "quiver" / "a.json"


@asynccontextmanager
async def session(url: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


async def test_a_hostile_pattern_costs_one_call_its_budget_and_other_clients_are_answered(
    manifest: Path, tmp_path: Path, upstream_env: Callable[..., dict[str, str]]
) -> None:
    env = upstream_env(QUIVER_PATTERN_BUDGET_S="4")
    with anyio.fail_after(HANG_GUARD_S):
        async with (
            http_gateway(manifest, TOKEN, env, tmp_path, ["--no-ledger"]) as gateway,
            session(gateway.url) as first,
            session(gateway.url) as second,
        ):
            # RE2 matches `^(a+)+$` in linear time: refused at once, nothing sent
            refused = await first.call_tool("p__lookup", {"name": HOSTILE})
            assert refused.is_error and "does not match '^(a+)+$'" in text(refused)
            ok = await first.call_tool("p__lookup", {"name": "aaaa"})
            assert not ok.is_error and json.loads(text(ok))["arguments"] == {"name": "aaaa"}

            # only `re` can match the lookahead: the call gets its budget, off the gateway's event loop
            order: list[str] = []

            async def hostile() -> None:
                result = await first.call_tool("p__probe", {"name": HOSTILE})
                assert result.is_error and "took longer than its 4 s budget" in text(result), text(result)
                order.append("hostile")

            async with anyio.create_task_group() as tg:
                tg.start_soon(hostile)
                await anyio.sleep(0)  # the hostile request goes out first ...
                for _ in range(5):  # ... and the other client's calls are answered while it is checked
                    assert text(await second.call_tool("p__ping", {})) == "pong"
                    order.append("other")
            assert order == ["other"] * 5 + ["hostile"]
            assert not (await first.call_tool("p__probe", {"name": "aaaa"})).is_error  # a fair value still passes
    assert "Traceback" not in gateway.log()
