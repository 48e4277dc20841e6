"""quiver's own load rules: what `quiver serve` exposes directly and what it keeps behind its meta-tools.

These are quiver's rules, not any host's (they began as Copilot's documented rules, which Copilot CLI
1.0.102 does not follow: hosts/copilot_cli.py). They decide the gateway's split and the host API exports
(`--emit anthropic|openai`, where the caller decides what to defer). When tool search is on, a tool is
exposed directly when any of these holds, and kept behind the meta-tools otherwise:
  1. it is a built-in;
  2. its server has `deferTools: "never"` or `preload: true`;
  3. it is in its server's `preload_tools`;
  4. the agent names it explicitly, unless it sets `deferred-tool-loading: true`.
Rule 0 is "tool search is inactive, everything is exposed"; rule 5 is "behind the meta-tools". Tool search
is on unless `tool_search = "never"`, the model cannot search, or (with `auto`) the agent carries fewer
than `threshold` MCP tools and no server of it says `preload: false`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Literal, NamedTuple

from quiver.hosts.model import Carried, Decision, ToolSearch
from quiver.model import Agent, Load, Location, Server

BASIS = "quiver's gateway rules (docs/hosts.md)"

LoadCode = Literal[
    "server-never-defers", "server-preloaded", "preload-tools", "named", "deferred-tool-loading",
    "server-not-preloaded", "deferred",
]  # fmt: skip


class Settings(NamedTuple):
    """The quiver config's gateway settings: `tool_search`, `threshold`, `tool_search_models`."""

    tool_search: str
    threshold: int
    tool_search_models: Sequence[str]


def model_supports_tool_search(model: str, patterns: Sequence[str]) -> bool:
    return any(re.search(p, model, re.IGNORECASE) for p in patterns)


def tool_search(agent: Agent, tools: Sequence[Carried], config: Settings) -> ToolSearch:
    """Whether the gateway keeps anything behind its meta-tools for this agent, and why."""
    count = len(tools)
    threshold = config.threshold

    def result(active: bool, reason: str) -> ToolSearch:
        return ToolSearch(active, reason, count, threshold, "tools", count)

    if config.tool_search == "never":
        return result(False, 'tool_search = "never" in the quiver config')
    if agent.models and not model_supports_tool_search(agent.models[0], config.tool_search_models):
        return result(False, f"model `{agent.models[0]}` does not support tool search")
    if config.tool_search == "always":
        return result(True, 'tool_search = "always" in the quiver config')
    carried = f"{count} MCP tool{'' if count == 1 else 's'}"
    if count >= threshold:
        return result(True, f"{carried} >= threshold {threshold}")
    explicit = sorted({t.server.name for t in tools if t.server.preload is False})
    if explicit:
        names = ", ".join(f"`{s}`" for s in explicit)
        return result(True, f"{carried} < threshold {threshold}, but {names} set `preload: false`")
    return result(False, f"{carried} < threshold {threshold}")


def load_decision(
    *,
    tool: str,
    named: bool,
    deferred_tool_loading: bool,
    defer_tools: str | None,
    preload: bool | None,
    preload_tools: Collection[str],
) -> tuple[Load, int, LoadCode]:
    """Rules 2-5 for a tool reached while the gateway's tool search is on: (load, rule, reason code).

    The one gateway decision: `split` explains it with positions, and advice predicts with it what a
    changed config compiles to.
    """
    if defer_tools == "never":
        return "preloaded", 2, "server-never-defers"
    if preload is True:
        return "preloaded", 2, "server-preloaded"
    if tool in preload_tools:
        return "preloaded", 3, "preload-tools"
    if named and not deferred_tool_loading:
        return "preloaded", 4, "named"
    if named:
        return "deferred", 5, "deferred-tool-loading"
    if preload is False:
        return "deferred", 5, "server-not-preloaded"
    return "deferred", 5, "deferred"


def split(
    agent: Agent, tools: Sequence[Carried], config: Settings
) -> tuple[ToolSearch, tuple[tuple[Load, Decision], ...]]:
    """The gateway's search decision and a (load, decision) per tool, in order."""
    search = tool_search(agent, tools, config)
    model_ok = config.tool_search != "never" and (
        not agent.models or model_supports_tool_search(agent.models[0], config.tool_search_models)
    )
    below = config.tool_search != "always" and search.mcp_tools < search.threshold
    memo: dict[tuple[str, str, Location], Decision] = {}
    # A decision depends on the tool only through `preload_tools`: one per (server, reference, named, listed).
    decided: dict[tuple[str, int, bool, bool], tuple[Load, Decision]] = {}
    out: list[tuple[Load, Decision]] = []
    for item in tools:
        server = item.server
        seen = (server.name, id(item.via), item.named, item.tool.name in server.preload_tools)
        found = decided.get(seen)
        if found is None:
            found = decided[seen] = _decide(agent, item, search, model_ok, below, memo)
        out.append(found)
    return search, tuple(out)


def _decide(
    agent: Agent,
    item: Carried,
    search: ToolSearch,
    model_ok: bool,
    below: bool,
    memo: dict[tuple[str, str, Location], Decision],
) -> tuple[Load, Decision]:
    server, via = item.server, item.via
    if not model_ok or not search.active or (below and server.preload is not False):
        key: tuple[str, str, Location] = ("", "tool-search-inactive", via)
        found = memo.get(key)
        if found is None:
            found = memo[key] = Decision(0, "tool-search-inactive", f"tool search inactive: {search.reason}", None,
                                         "quiver", BASIS)  # fmt: skip
        return "preloaded", found
    load, rule, code = load_decision(
        tool=item.tool.name,
        named=item.named,
        deferred_tool_loading=agent.deferred_tool_loading,
        defer_tools=server.defer_tools,
        preload=server.preload,
        preload_tools=server.preload_tools,
    )
    key = (server.name, code, via)
    decision = memo.get(key)
    if decision is None:
        text, source = _reason(agent, server, via, code)
        decision = memo[key] = Decision(rule, code, text, source or server.location, "quiver", BASIS)
    return load, decision


def _reason(agent: Agent, server: Server, via: Location, code: LoadCode) -> tuple[str, Location | None]:
    """What a load decision says, and where its cause is written."""
    keys, name = server.key_locations, server.name
    if code == "server-never-defers":
        return f'server `{name}` sets `deferTools: "never"`', keys.get("deferTools")
    if code == "server-preloaded":
        return f"server `{name}` sets `preload: true`", keys.get("preload")
    if code == "preload-tools":
        return f"listed in `preload_tools` of server `{name}`", keys.get("preload_tools")
    if code == "named":
        return "named explicitly in the agent's `tools`", via
    if code == "deferred-tool-loading":
        return (
            "named, but the agent sets `deferred-tool-loading: true`",
            agent.key_locations.get("deferred-tool-loading", via),
        )
    if code == "server-not-preloaded":
        return f"server `{name}` sets `preload: false`", keys.get("preload")
    return "reached only through a wildcard; tool search is active", via
