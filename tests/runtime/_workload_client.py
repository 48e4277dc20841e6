"""The scripted workload of `tests/fixtures/usage/workload.py`, played through a real `quiver serve --http`.

`http_gateway` runs one gateway subprocess (streamable HTTP, bearer token) for a block; `play_through` opens
one handshake-era `ClientSession` per planned session (so each gets its own `Mcp-Session-Id`) and makes
the planned calls the way a model would: a tool the session's tools/list exposes is called directly; a
deferred one is first found with `search_tools` (limit 1, so the search loads exactly that tool) and
described with `describe_tool`, then called under its exposed name once tools/list shows it. Every call's
result is checked against the planned outcome, so a figure in `quiver stats` can be predicted from the
plan alone (`expected_figures`), without the product's code.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from fixtures.usage.workload import PlannedCall, SessionPlan

TOKEN = "advise-e2e-token-0123456789"
WAIT_S = 60.0
SEARCH_ANSWER_TOKENS = 200  # a search_tools answer is recorded without a size: stats counts it as 200 tokens
SEED_NOTE = {"id": "n1", "title": "Groceries", "body": "milk, eggs, bread", "tags": ["home"]}

# A query whose best (and, with limit 1, only) search hit is the tool.
PHRASES: Mapping[str, str] = {
    "notes/search_notes": "find notes containing text",
    "notes/get_note": "fetch one note by id",
    "notes/create_note": "create a new note",
    "notes/update_note": "replace the title body or tags of a note",
    "notes/list_notes": "list notes newest first",
    "calc/multiply": "multiply two numbers",
    "calc/add": "add two numbers sum",
    "calc/echo": "return the given text unchanged",
    "calc/slow_echo": "wait delay then return text",
    "calc/flaky": "transient error then succeed",
    "calc/counter_increment": "add amount to a shared counter",
}


def exposed(tool: str) -> str:
    """`server/tool` -> the gateway's model-facing name `server__tool`."""
    server, _, name = tool.partition("/")
    return f"{server}__{name}"


def seed_notes(path: Path) -> Path:
    """A notes store (NOTES_DB) holding one note, so get_note and update_note have an id from the start."""
    path.write_text(json.dumps({"next_id": 2, "notes": [SEED_NOTE]}), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- gateway


@dataclass
class RunningGateway:
    url: str
    stderr: list[str]


@asynccontextmanager
async def http_gateway(
    manifest: Path, *, cwd: Path, env: Mapping[str, str], ledger: Path
) -> AsyncIterator[RunningGateway]:
    """`quiver serve MANIFEST --http 127.0.0.1:0` for the block; stopped (SIGTERM, exit 0) when it ends.

    Stopping it is what records the sessions' ends in the usage file.
    """
    argv = [sys.executable, "-m", "quiver", "serve", str(manifest), "--http", "127.0.0.1:0",
            "--startup-timeout", "20", "--ledger", str(ledger), "--log-level", "warning"]  # fmt: skip
    process = await anyio.open_process(
        argv, env={**env, "QUIVER_TOKEN": TOKEN}, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    assert process.stderr is not None
    stderr: list[str] = []
    lines = _lines(process.stderr)
    try:
        async with anyio.create_task_group() as tg:
            url = None
            with anyio.fail_after(WAIT_S):
                async for line in lines:
                    stderr.append(line)
                    if match := re.search(r"listening on (\S+)", line):
                        url = match.group(1)
                        break
            assert url is not None, "\n".join(stderr)
            tg.start_soon(_drain, lines, stderr)  # a full stderr pipe would block the gateway
            yield RunningGateway(url, stderr)
            process.terminate()
            with anyio.fail_after(WAIT_S):
                assert await process.wait() == 0, "\n".join(stderr)
    finally:
        if process.returncode is None:
            process.kill()
            with anyio.move_on_after(WAIT_S, shield=True):
                await process.wait()
        print("\n".join(stderr))


async def _lines(stream: anyio.abc.ByteReceiveStream) -> AsyncIterator[str]:
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", "replace")


async def _drain(lines: AsyncIterator[str], into: list[str]) -> None:
    async for line in lines:
        into.append(line)


# ---------------------------------------------------------------------------------------------- driver


@dataclass
class _Run:
    """State shared by the sessions of one gateway run: calc keeps `flaky` attempts per key for its lifetime."""

    spent_flaky_keys: list[str] = field(default_factory=list)  # keys whose failures (CALC_FLAKY_FAILS=3) are used
    listings: list[frozenset[str]] = field(default_factory=list)  # each session's first tools/list (tool names)


async def play_through(url: str, plans: Iterable[SessionPlan], *, step_s: float = WAIT_S) -> list[frozenset[str]]:
    """Play the plans through the gateway at `url`, one MCP session each, in order; returns each session's
    initial tools/list (names of tools, meta-tools left out). Needs calc with CALC_FLAKY_FAILS=3: flaky's
    "try again" is a transient tool error the gateway retries, so a planned failure fails all 3 attempts."""
    run = _Run()
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        for plan in plans:
            with anyio.fail_after(step_s):
                async with (
                    streamable_http_client(url, http_client=http) as (read_stream, write_stream),
                    ClientSession(read_stream, write_stream) as session,
                ):
                    await session.initialize()
                    await _play_session(session, plan, run)
    return run.listings


async def _tool_names(session: ClientSession) -> set[str]:
    return {t.name for t in (await session.list_tools()).tools}


async def _play_session(session: ClientSession, plan: SessionPlan, run: _Run) -> None:
    listed = await _tool_names(session)
    run.listings.append(frozenset(n for n in listed if "__" in n))
    note_id = str(SEED_NOTE["id"])
    flaky_key: str | None = None
    for step, call in enumerate(plan.calls):
        server, _, name = call.tool.partition("/")
        where = f"{plan.session} step {step} ({call.tool}, {call.outcome})"
        if call.outcome == "refused":  # outside the agent's tool set: the model can only try call_tool
            request = {"server": server, "tool": name, "arguments": {"id": note_id}}
            refused = await session.call_tool("call_tool", request)
            assert refused.is_error and _text(refused).startswith("refused:"), (where, _text(refused))
            continue
        if exposed(call.tool) not in listed:
            found = _payload(await session.call_tool("search_tools", {"query": PHRASES[call.tool], "limit": 1}))
            assert [hit["name"] for hit in found["tools"]] == [exposed(call.tool)], (where, found)
            described = _payload(await session.call_tool("describe_tool", {"server": server, "tool": name}))
            assert described["name"] == exposed(call.tool), (where, described)
            listed = await _tool_names(session)  # what a client does on notifications/tools/list_changed
            assert exposed(call.tool) in listed, (where, sorted(listed))
        if call.tool == "calc/flaky":
            flaky_key = _flaky_key(call, flaky_key, run, f"{plan.session}-{step}", where)
        result = await session.call_tool(exposed(call.tool), _arguments(call, note_id, flaky_key, plan.session))
        if call.outcome == "ok":
            assert not result.is_error, (where, _text(result))
            notes = (result.structured_content or {}).get("notes")
            if call.tool in ("notes/create_note", "notes/update_note", "notes/get_note"):
                note_id = str((result.structured_content or {})["id"])
            elif notes:
                note_id = str(notes[0]["id"])
        elif call.outcome == "error":
            assert result.is_error and "transient failure" in _text(result), (where, _text(result))
        else:
            assert call.outcome == "validation_failed", where
            assert result.is_error and "nothing was sent" in _text(result), (where, _text(result))


def _flaky_key(call: PlannedCall, current: str | None, run: _Run, fresh: str, where: str) -> str:
    """calc fails `flaky` 3 times per key, one planned call's attempts: a planned failure takes a fresh key, a planned
    success the session's key after its failure, else a key whose failure an earlier session used up."""
    if call.outcome == "error":
        run.spent_flaky_keys.append(fresh)
        return fresh
    if current is not None:
        return current
    assert run.spent_flaky_keys, f"{where}: the plan's first calc/flaky call must be a failure"
    return run.spent_flaky_keys[0]


def _arguments(call: PlannedCall, note_id: str, flaky_key: str | None, session: str) -> dict[str, Any]:
    if call.tool == "notes/create_note":
        if call.outcome == "validation_failed":
            return {"title": ""}  # an empty title and no body: refused by the gateway's validation
        return {"title": f"Meeting {session}", "body": "Agenda and decisions.", "tags": ["work"]}
    arguments: Mapping[str, dict[str, Any]] = {
        "notes/search_notes": {"query": "groceries"},
        "notes/get_note": {"id": note_id},
        "notes/update_note": {"id": note_id, "body": "Updated."},
        "notes/list_notes": {"limit": 5},
        "calc/multiply": {"a": 6, "b": 7},
        "calc/add": {"a": 2, "b": 3},
        "calc/echo": {"text": "hello"},
        "calc/slow_echo": {"text": "hello", "delay_ms": 0},
        "calc/flaky": {"key": flaky_key},
        "calc/counter_increment": {"amount": 1},
    }
    return dict(arguments[call.tool])


def _text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def _payload(result: types.CallToolResult) -> Any:
    assert not result.is_error, _text(result)
    return json.loads(_text(result))


# ------------------------------------------------------------------------------------- expected figures


def expected_figures(
    plans: Iterable[SessionPlan], preloaded: Iterable[str], tokens: Mapping[str, int], initial_tokens: int
) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """What `quiver stats --format json` must report for the plans played by `play_through` under a preload
    set: the agent's figures, and per tool (sessions_used, calls, errors, validation_failures, refusals,
    first_uses_deferred, steps_deferred). A deferred tool's first use in a session costs one search (a
    200-token answer) and one describe (its schema), and loads its schema: 2 steps, 200 + 2 * schema tokens."""
    pre = set(preloaded)
    sessions = calls = errors = invalid = refusals = steps = total_tokens = 0
    preloaded_used = deferred_used = with_success = 0
    per_tool: dict[str, dict[str, int]] = {}
    for plan in plans:
        sessions += 1
        total_tokens += initial_tokens
        used: dict[str, None] = {}
        for call in plan.calls:
            row = per_tool.setdefault(
                call.tool,
                dict.fromkeys(
                    ("sessions_used", "calls", "errors", "validation_failures", "refusals", "first_uses_deferred",
                     "steps_deferred"), 0,
                ),
            )  # fmt: skip
            if call.outcome == "refused":
                refusals += 1
                row["refusals"] += 1
                continue
            calls += 1
            row["calls"] += 1
            errors += call.outcome == "error"
            row["errors"] += call.outcome == "error"
            invalid += call.outcome == "validation_failed"
            row["validation_failures"] += call.outcome == "validation_failed"
            if call.tool in used:
                continue
            used[call.tool] = None
            row["sessions_used"] += 1
            if call.tool not in pre:
                row["first_uses_deferred"] += 1
                row["steps_deferred"] += 2
                steps += 2
                total_tokens += SEARCH_ANSWER_TOKENS + 2 * tokens[call.tool]
        preloaded_used += sum(1 for t in used if t in pre)
        deferred_used += sum(1 for t in used if t not in pre)
        with_success += any(c.outcome == "ok" for c in plan.calls)
    agent = {
        "agent": "assistant",
        "sessions": sessions,
        "calls": calls,
        "errors": errors,
        "validation_failures": invalid,
        "refusals": refusals,
        "discovery_steps": steps,
        "discovery_steps_per_session": round(steps / sessions, 4),
        "trailing_steps": 0,
        "tokens_per_session": round(total_tokens / sessions, 4),
        "sessions_with_success": with_success,
        "preloaded_tools": sessions * len(pre),
        "preloaded_used": preloaded_used,
        "deferred_used": deferred_used,
        "loaded_used": deferred_used,
        "loaded_unused": 0,
    }
    return agent, per_tool


def shadow_lines(plans: Iterable[SessionPlan]) -> str:
    """The plans' calls as a shadow log: what a host without quiver would have logged, one call a line."""
    lines = []
    for number, plan in enumerate(plans):
        for step, call in enumerate(plan.calls):
            stamp = 1_750_000_000 + number * 600 + step
            lines.append(json.dumps({"session": plan.session, "tool": call.tool, "timestamp": stamp}))
    return "".join(line + "\n" for line in lines)
