"""Host scenarios (`tests/fixtures/hosts/<scenario>/`) and what a host's recorded request says about them.

A scenario is a small quiver project (`.mcp.json`, agent files, `quiver.lock.json`) with a `scenario.json`:

    {"host": "claude-code" | "copilot-cli", "model": "...", "env": {"ENABLE_TOOL_SEARCH": ...},
     "agent": null | "agent-id", "count_tokens": N?, "launch": "spawn" | "flag"?, "agents": [ids]?,
     "about": "what it checks"}

`agent` null is the host's main thread. `count_tokens` is what the recording endpoint answers to Claude
Code's `/v1/messages/count_tokens` (default 10). `launch` (Claude Code only) is how the agent is run: spawned
as a subagent by an `Agent` tool_use (default) or as the main thread with `claude --agent`. `agents` lists
more agents of the same project to record, one host run each (a project with several agents).

`recorded.json` holds, for the scenario's `agent` (and under `agents`, for each other one):

    {"host", "host_version", "agent", "model", "model_sent", "sent", "up_front", "deferred", "search_tool",
     "tokens": {"up_front", "deferred_listing"}, "raw": {...}}

- `model`: the scenario's `--model`; `model_sent`: the model the host's request named.
- `sent`: whether the host sent the request at all (false: the agent never ran; the lists are then empty).
- `up_front`: tool names in the order sent, without `defer_loading`; `deferred`: the names sent with
  `defer_loading: true` or listed by name in the host's deferred-tools reminder, sorted (Claude Code's
  `DeferredToolPlaceholder`, a reserved stand-in it sends with `defer_loading`, is left out: it is in
  `raw.defer_loading`; so is a listed name that is also sent up front: Claude Code 2.1.332 below its
  `auto` threshold sends every tool up front and still lists the deferrable ones in the reminder).
- `search_tool`: the host's tool-search tool when it is sent up front (ToolSearch, tool_search_tool).
- `tokens.up_front`: o200k tokens of the up-front tools as sent, each counted as compact JSON of its
  `name`, `description` and `input_schema`, summed (quiver.tokens). `tokens.deferred_listing`: tokens of the
  reminder's listing of deferred tools: Claude Code's newline-separated names, Copilot CLI's per-server
  blocks (a header line per server and `- tool` lines), as sent; 0 without a reminder.
- `raw`: `tools` (every name in the tools array, in order), `defer_loading` (those flagged, in order),
  `reminder` (the reminder's names, in order, as full tool names), `count_tokens` (the tool names of each
  count_tokens request), `tool_tokens` (each sent tool's tokens, counted as above), `mcp_changed` (MCP
  tools whose description or input schema as sent differs from the catalog's, and which part),
  `mcp_failed` (servers the host's debug log says did not connect: a run is retried while one fails,
  and kept with them named after ATTEMPTS runs).

Only tool names and counts are kept: never a host's own descriptions, schemas or system prompt.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _host_recorder import CLAUDE_CODE, COPILOT_CLI, HOSTS, ROOT, Request, Run

FIXTURES = ROOT / "tests" / "fixtures" / "hosts"
SEARCH_TOOLS = ("ToolSearch", "tool_search_tool")
# Claude Code sends this with `defer_loading` whenever it defers ("Reserved placeholder that keeps deferred
# tool loading active; never call this tool"): not a tool an agent carries, so not in `deferred`.
PLACEHOLDERS = frozenset({"DeferredToolPlaceholder"})
CLAUDE_REMINDER = "The following deferred tools are now available via ToolSearch"
COPILOT_REMINDER = "The tools listed below are deferred"
NAME = re.compile(r"[A-Za-z0-9_.:-]+")  # a tool name as the reminders list it
KEYS = {"host", "model", "env", "agent", "count_tokens", "launch", "agents", "about"}


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    dir: Path
    host: str
    model: str | None
    env: Mapping[str, str]
    agent: str | None
    count_tokens: int
    launch: str
    agents: tuple[str, ...]
    about: str

    @property
    def runs(self) -> tuple[str | None, ...]:
        """The agents recorded, one host run each: the scenario's own first."""
        return (self.agent, *(a for a in self.agents if a != self.agent))


def load_scenario(path: Path) -> Scenario:
    """A scenario from its folder; SystemExit naming the file for anything malformed."""
    file = path / "scenario.json"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{file}: {exc}") from None
    if not isinstance(data, dict) or data.get("host") not in HOSTS:
        raise SystemExit(f"{file}: `host` must be one of {', '.join(HOSTS)}")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise SystemExit(f"{file}: unknown key `{unknown[0]}` (known: {', '.join(sorted(KEYS))})")
    launch = data.get("launch", "spawn")
    if launch not in ("spawn", "flag"):
        raise SystemExit(f"{file}: `launch` must be spawn or flag")
    return Scenario(
        name=path.name,
        dir=path,
        host=data["host"],
        model=data.get("model"),
        env={str(k): str(v) for k, v in (data.get("env") or {}).items()},
        agent=data.get("agent"),
        count_tokens=int(data.get("count_tokens", 10)),
        launch=launch,
        agents=tuple(data.get("agents") or ()),
        about=str(data.get("about", "")),
    )


def scenario_dirs(names: Sequence[str] = ()) -> list[Path]:
    """The named scenarios' folders (all of them when none is named), in name order."""
    every = sorted(p.parent for p in FIXTURES.glob("*/scenario.json"))
    if not names:
        return every
    by_name = {p.name: p for p in every}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise SystemExit(f"no scenario `{missing[0]}` in {FIXTURES.relative_to(ROOT)}")
    return [by_name[n] for n in names]


def _texts(body: Mapping[str, Any]) -> Iterable[str]:
    """Every text block of the request's messages."""
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            yield content
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"]


def _strip_tag(text: str) -> str:
    for tag in ("</system-reminder>", "</system_reminder>"):
        text = text.split(tag)[0]
    return text


def reminder(body: Mapping[str, Any], host: str) -> tuple[list[str], str]:
    """(full tool names, listing text) of the deferred-tools reminder, or ([], "")."""
    for text in _texts(body):
        if host == CLAUDE_CODE and CLAUDE_REMINDER in text:
            # The header line, then one name a line up to a blank line or the closing tag (models that
            # get one text block of several reminders, e.g. claude-haiku-5-5, have a blank line next).
            after = _strip_tag(text.split(CLAUDE_REMINDER, 1)[1]).splitlines()[1:]
            lines = list(itertools.takewhile(lambda line: NAME.fullmatch(line) is not None, after))
            return lines, "\n".join(lines)
        if host == COPILOT_CLI and COPILOT_REMINDER in text:
            after = _strip_tag(text.split(COPILOT_REMINDER, 1)[1])
            # The instructions paragraph, then a block per server: a header line naming the tools' prefix
            # in backquotes (`alpha-`), then `- tool` lines.
            names: list[str] = []
            listing = []
            for block in after.split("\n\n")[1:]:
                lines = block.strip().splitlines()
                if not lines or lines[0].count("`") < 2:
                    continue
                prefix = lines[0].split("`")[1]
                items = [line[2:].strip() for line in lines[1:] if line.startswith("- ")]
                names += [prefix + item for item in items if NAME.fullmatch(item)]
                listing.append(block.strip())
            return names, "\n\n".join(listing)
    return [], ""


def _payload(tool: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.get("name")}
    if tool.get("description") is not None:
        out["description"] = tool.get("description")
    out["input_schema"] = tool.get("input_schema", {"type": "object"})
    return out


def catalogs(scenario_dir: Path) -> dict[str, dict[str, Any]]:
    """Every MCP tool of the scenario's lock by its model-facing names (`mcp__s__t` and `s-t`)."""
    lock = json.loads((scenario_dir / "quiver.lock.json").read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for server, entry in lock.get("servers", {}).items():
        for item in entry.get("tools", []):
            tool = item.get("tool", item)
            out[f"mcp__{server}__{tool['name']}"] = tool
            out[f"{server}-{tool['name']}"] = tool
    return out


def _changed(sent: Mapping[str, Any], catalog: Mapping[str, Any]) -> str:
    parts = []
    if sent.get("description") != catalog.get("description"):
        parts.append("description")
    if sent.get("input_schema") != catalog.get("inputSchema", {"type": "object"}):
        parts.append("input_schema")
    return "+".join(parts)


def record_run(run: Run, scenario: Scenario, version: str, agent: str | None) -> dict[str, Any]:
    """What the host sent for one agent, reduced to tool names and counts."""
    from quiver.tokens import compact, counter

    count = counter().count
    body: dict[str, Any] = run.target.body if run.target is not None else {}
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    names = [str(t.get("name")) for t in tools]
    flagged = [str(t.get("name")) for t in tools if t.get("defer_loading")]
    up = [n for n, t in zip(names, tools, strict=True) if not t.get("defer_loading")]
    listed, listing = reminder(body, scenario.host) if body else ([], "")
    tool_tokens = {str(t.get("name")): count(compact(_payload(t))) for t in tools}
    known = catalogs(scenario.dir)
    changed = {}
    for tool in tools:
        name = str(tool.get("name"))
        if name in known and (what := _changed(tool, known[name])):
            changed[name] = what
    counted = [
        [str(t.get("name")) for t in r.body.get("tools") or [] if isinstance(t, dict)]
        for r in run.requests
        if r.is_count_tokens and isinstance(r.body, dict)
    ]
    return {
        "host": scenario.host,
        "host_version": version,
        "agent": agent,
        "model": scenario.model,
        "model_sent": body.get("model"),
        "sent": run.target is not None,
        "up_front": up,
        "deferred": sorted((set(flagged) | set(listed)) - PLACEHOLDERS - set(up)),
        "search_tool": next((n for n in SEARCH_TOOLS if n in up), None),
        "tokens": {
            "up_front": sum(tool_tokens[n] for n in up),
            "deferred_listing": count(listing) if listing else 0,
        },
        "raw": {
            "tools": names,
            "defer_loading": flagged,
            "reminder": listed,
            "count_tokens": counted,
            "tool_tokens": tool_tokens,
            "mcp_changed": changed,
            "mcp_failed": list(run.mcp_failed),
        },
    }


def recorded_text(records: Mapping[str | None, dict[str, Any]], scenario: Scenario) -> str:
    """recorded.json's text: the scenario's own agent at the top level, the others under `agents`."""
    own = dict(records[scenario.agent])
    others = {a: records[a] for a in scenario.runs[1:]}
    if others:
        own["agents"] = others
    return json.dumps({"scenario": scenario.name, **own}, indent=1, ensure_ascii=False) + "\n"


def requests_summary(requests: Sequence[Request]) -> list[str]:
    """One line per request, for a run that did not show what it should."""
    return [f"{r.at:6.1f}s {r.path} tools={len((r.body or {}).get('tools') or [])}" for r in requests]


ATTEMPTS = 5  # runs of one agent while a server fails to connect (under load); the last one is kept


class RecordError(Exception):
    """A host run that did not show what it should (the host failed, or never reached the agent)."""


def record_scenario(
    scenario: Scenario, hosts_dir: Path, version: str, save_dir: Path | None = None
) -> dict[str | None, dict[str, Any]]:
    """Run the scenario's host once per agent it records; each agent's record. RecordError when a run
    shows nothing: the main thread (or a `--agent` run) sent no request, or a subagent was never spawned."""
    from _host_recorder import run_host

    records: dict[str | None, dict[str, Any]] = {}
    for agent in scenario.runs:
        for _attempt in range(ATTEMPTS):
            run = run_host(
                scenario.host,
                scenario.dir,
                hosts_dir,
                model=scenario.model,
                env=scenario.env,
                agent=agent,
                launch=scenario.launch,
                count_tokens=scenario.count_tokens,
                save_dir=save_dir / (agent or "main") if save_dir is not None else None,
            )
            if not run.mcp_failed:
                break
            print(
                f"note: {scenario.name}: {scenario.host} could not connect {', '.join(run.mcp_failed)}", file=sys.stderr
            )
        subagent = scenario.host == CLAUDE_CODE and agent is not None and scenario.launch == "spawn"
        if run.target is None and (not subagent or not run.spawned):
            what = f"agent `{agent}`" if agent else "the main thread"
            lines = "\n  ".join([*requests_summary(run.requests), *run.stderr_tail.strip().splitlines()[-8:]])
            raise RecordError(f"{scenario.name}: {scenario.host} sent no request for {what}\n  {lines}")
        records[agent] = record_run(run, scenario, version, agent)
        records[agent]["seconds"] = round(run.seconds, 1)
    return records
