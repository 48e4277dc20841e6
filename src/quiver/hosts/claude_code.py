"""Claude Code: how it loads a subagent's tools (`.claude/agents/*.md`, Claude Code plugins).

Measured on Claude Code 2.1.332 (`claude -p` against a recording endpoint on loopback: bench/hosts.py,
the recordings in tests/fixtures/hosts/), then from its docs (code.claude.com/docs/en/mcp, "Configure tool
search"; code.claude.com/docs/en/sub-agents). Facts the recordings show:

- `ENABLE_TOOL_SEARCH` unset or `true`: every MCP tool is deferred behind the built-in `ToolSearch`, and so
  are some built-ins (WebFetch, WebSearch, NotebookEdit, the worktree, Monitor, SendMessage and Task tools);
  their names are listed in a system reminder. `false`: everything up front, no ToolSearch.
- `auto` / `auto:N`: the host counts the deferrable tools' tokens (one `count_tokens` call) and defers when
  the count reaches N% (default 10) of a 200,000-token window plus 500 (bisected: auto:5 defers at 10,500,
  not at 10,499).
- A server's `alwaysLoad: true`, or a tool's `_meta["anthropic/alwaysLoad"]: true`, keeps it up front.
- A subagent with a `tools` list gets exactly the listed tools that exist (names are case-sensitive), all
  up front, unless the list names `ToolSearch`: then its MCP tools and deferrable built-ins are deferred as
  above. Without `tools` it inherits the main thread's tools (a smaller built-in set), deferred as above.
  `mcp__server` and `mcp__server__*` name a whole server; `server/tool` (Copilot's form) names nothing.
- `disallowedTools` removes tools from the inherited set. Every Claude model defers (Haiku 4.5 included).
- Tool descriptions and server instructions are cut at 2,048 characters (docs, v2.1.280+).
"""

from __future__ import annotations

import re

from quiver.hosts.base import Host, model_facing_tokens, skill_lines
from quiver.hosts.model import (
    BuiltinRef,
    Carried,
    Decision,
    HostId,
    HostSplit,
    SplitJob,
    ToolSearch,
)
from quiver.model import JSON, Load, Location

VERSION = "2.1.332"
MEASURED = f"measured on Claude Code {VERSION}"
DOCS = "code.claude.com/docs/en/mcp (tool search)"
CONTEXT_WINDOW = 200_000
AUTO_PERCENT = 10
AUTO_MARGIN = 500  # tokens over the share before the host defers (bisected on 2.1.332)
DESCRIPTION_LIMIT = 2048
SEARCH_TOOL = "ToolSearch"
ALWAYS_LOAD_META = "anthropic/alwaysLoad"

# The built-ins a subagent without `tools` gets, up front and deferred (2.1.332, recorded).
INHERITED_UP = ("Agent", "Bash", "Edit", "Read", "Skill", "ToolSearch", "Write")
INHERITED_DEFERRED = (
    "EnterWorktree",
    "ExitWorktree",
    "Monitor",
    "NotebookEdit",
    "SendMessage",
    "TaskStop",
    "WebFetch",
    "WebSearch",
)
# The main session's built-ins (2.1.332, recorded with `claude -p`): more of them, and more deferred.
SESSION_UP = (
    "Agent",
    "Bash",
    "Edit",
    "ListAgents",
    "Read",
    "ReportFindings",
    "ScheduleWakeup",
    "Skill",
    "ToolSearch",
    "Workflow",
    "Write",
)
SESSION_DEFERRED = (
    "CronCreate",
    "CronDelete",
    "CronList",
    "DesignSync",
    "EnterWorktree",
    "ExitWorktree",
    "Monitor",
    "NotebookEdit",
    "SendMessage",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskStop",
    "TaskUpdate",
    "WebFetch",
    "WebSearch",
)
# Names a subagent may list, and the tool each is sent as (2.1.332, recorded: `Task` is the old name of
# `Agent`, `KillShell` of `TaskStop`).
SENT_AS: dict[str, str] = {
    **{name: name for name in (*INHERITED_UP, *INHERITED_DEFERRED)},
    "Task": "Agent",
    "KillShell": "TaskStop",
}
DEFERRABLE = frozenset({*INHERITED_DEFERRED, *SESSION_DEFERRED})
# o200k tokens of each deferrable built-in's definition as 2.1.332 sends it (recorded): `auto` counts them
# with the MCP tools (a subagent makes its own count over its own deferrable tools).
DEFERRABLE_TOKENS: dict[str, int] = {
    "EnterWorktree": 932,
    "ExitWorktree": 676,
    "Monitor": 1893,
    "NotebookEdit": 392,
    "SendMessage": 1443,
    "TaskStop": 176,
    "WebFetch": 503,
    "WebSearch": 411,
    "CronCreate": 1253,
    "CronDelete": 97,
    "CronList": 64,
    "DesignSync": 2574,
    "TaskCreate": 603,
    "TaskGet": 243,
    "TaskList": 280,
    "TaskUpdate": 858,
}
# Names Claude Code documents (or documented) that a subagent on 2.1.332 is not sent, and why.
NOT_SENT: dict[str, str] = {
    "Glob": "file search runs through Bash in Claude Code's native build",
    "Grep": "content search runs through Bash in Claude Code's native build",
    "MultiEdit": "merged into Edit",
    "TodoWrite": "replaced by the Task tools, which subagents are not given",
    "NotebookRead": "merged into Read",
    "BashOutput": "replaced by TaskStop and Monitor",
    "LSP": "not a tool of non-interactive sessions",
    "AskUserQuestion": "interactive sessions only",
    "EnterPlanMode": "interactive sessions only",
    "ExitPlanMode": "interactive sessions only",
    "SlashCommand": "replaced by Skill",
    "ListMcpResources": "sent as ListMcpResourcesTool, only when a server offers resources",
    "ReadMcpResource": "sent as ReadMcpResourceTool, only when a server offers resources",
    "ListMcpResourcesTool": "only when a server offers resources",
    "ReadMcpResourceTool": "only when a server offers resources",
    "CronCreate": "main session only",
    "CronDelete": "main session only",
    "CronList": "main session only",
    "TaskCreate": "main session only",
    "TaskGet": "main session only",
    "TaskList": "main session only",
    "TaskUpdate": "main session only",
    "ListAgents": "main session only",
    "ScheduleWakeup": "main session only",
    "Workflow": "main session only",
    "ReportFindings": "main session only",
    "DesignSync": "main session only",
}
BUILTIN_NAMES = frozenset({*SENT_AS, *NOT_SENT})
# The task-list tools are not sent to Claude 5 models (2.1.332: claude-haiku-5-5 and claude-opus-5-5 got
# none of them, claude-sonnet-4-6, claude-haiku-4-5 and claude-sonnet-4 all four).
TASK_LIST_TOOLS = frozenset({"TaskCreate", "TaskGet", "TaskList", "TaskUpdate"})
# Model aliases as 2.1.332 sends them (recorded: `haiku` and `opus` as the 5.5 models).
ALIASES = {"haiku": "claude-haiku-5-5", "opus": "claude-opus-5-5"}
# Tools that go with another: Monitor watches what Bash runs, so an agent without Bash has no Monitor.
NEEDS = {"Monitor": "Bash"}
_BY_LOWER = {name.lower(): name for name in BUILTIN_NAMES}


def builtin(text: str, location: Location) -> BuiltinRef | None:
    """A Claude Code built-in named in `tools` (exact, case-sensitive), or None."""
    if text in SENT_AS:
        return BuiltinRef(text, text, "claude", location, sent=(SENT_AS[text],))
    if text in NOT_SENT:
        return BuiltinRef(text, text, "claude", location, note=f"not sent by Claude Code {VERSION}: {NOT_SENT[text]}")
    return None


# Copilot's aliases as Claude Code's tools, for a Copilot agent resolved for Claude Code (`--host`).
FROM_ALIAS: dict[str, tuple[str, ...]] = {
    "read": ("Read",),
    "edit": ("Edit", "Write"),
    "search": (),
    "execute": ("Bash",),
    "agent": ("Agent",),
    "web": ("WebFetch", "WebSearch"),
    "todo": (),
}


def from_alias(text: str, location: Location) -> BuiltinRef | None:
    """A Copilot alias (or compatible name) as the Claude Code tools it stands for."""
    from quiver.builtins import builtin_alias

    alias = builtin_alias(text)
    if alias is None:
        return None
    sent = FROM_ALIAS[alias]
    note = "" if sent else f"Claude Code {VERSION} has no tool for `{alias}` (search runs through Bash)"
    return BuiltinRef(text, alias, "alias", location, sent=sent, note=note)


def case_of(text: str) -> str | None:
    """The built-in a wrongly cased name means (`read` -> `Read`): Claude Code's names are case-sensitive."""
    found = _BY_LOWER.get(text.lower())
    return found if found is not None and found != text else None


def _setting(job: SplitJob) -> str:
    value = job.settings.get("enable_tool_search")
    return str(value).strip().lower() if value is not None else ""


def auto_threshold(percent: int, window: int) -> int:
    """The deferrable tokens at which `auto:N` defers: N% of the window plus 500 (bisected on 2.1.332)."""
    return window * percent // 100 + AUTO_MARGIN


def auto_percent(setting: str) -> int | None:
    """N of `auto:N` (10 for `auto`), None for any other setting."""
    if setting == "auto":
        return AUTO_PERCENT
    if setting.startswith("auto:") and setting[5:].isdigit():
        return int(setting[5:])
    return None


def _always_load(item: Carried) -> str | None:
    """Why the host keeps this tool up front whatever the setting, or None."""
    if item.server.raw.get("alwaysLoad") is True:
        return f"server `{item.server.name}` sets `alwaysLoad: true`"
    meta = item.tool.definition.get("_meta")
    if isinstance(meta, dict) and meta.get(ALWAYS_LOAD_META) is True:
        return f'the tool sets `_meta["{ALWAYS_LOAD_META}"]: true`'
    return None


def split(job: SplitJob) -> HostSplit:
    setting = _setting(job)
    count = len(job.tools)
    builtins: tuple[str, ...]
    if job.session:
        model = ALIASES.get((job.model or "").lower(), job.model or "")
        drop = TASK_LIST_TOOLS if re.search(r"claude-\w+-5|claude-5", model) else frozenset()
        builtins = tuple(b for b in (*SESSION_UP, *SESSION_DEFERRED) if b not in drop)
        searchable = True
    elif job.explicit_tools:
        sent = [name for b in job.builtins for name in b.sent]
        builtins = tuple(dict.fromkeys(sent))
        searchable = SEARCH_TOOL in builtins
    else:
        dropped = {b.ref for b in job.builtins if b.kind == "disallowed"}  # `disallowedTools`
        dropped |= {tool for tool, needed in NEEDS.items() if needed in dropped}
        builtins = tuple(b for b in (*INHERITED_UP, *INHERITED_DEFERRED) if b not in dropped)
        searchable = SEARCH_TOOL in builtins
    deferrable_builtins = tuple(b for b in builtins if b in DEFERRABLE)

    def search(active: bool, reason: str, unit: str = "", threshold: int = 0, measured: int = 0) -> ToolSearch:
        return ToolSearch(active, reason, count, threshold, unit, measured)  # type: ignore[arg-type]

    if not searchable:
        names = "the agent's `tools` list does not name `ToolSearch`"
        ts = search(False, f"{names}: Claude Code sends every listed tool up front")
    elif setting == "false":
        ts = search(False, "ENABLE_TOOL_SEARCH=false: Claude Code sends every tool up front")
    elif (percent := auto_percent(setting)) is not None:
        window = _int(job.settings.get("context_window"), CONTEXT_WINDOW)
        threshold = auto_threshold(percent, window)
        mcp = sum(model_facing_tokens(i) for i in job.tools if _always_load(i) is None)
        own = sum(DEFERRABLE_TOKENS.get(b, 0) for b in deferrable_builtins)
        measured = mcp + own
        active = measured >= threshold
        verb = ">=" if active else "<"
        ts = search(
            active,
            f"ENABLE_TOOL_SEARCH={setting}: deferrable tools {measured:,} tokens (MCP {mcp:,}, built-ins {own:,}) "
            f"{verb} {percent}% of {window:,} + {AUTO_MARGIN}",
            "tokens",
            threshold,
            measured,
        )
    elif setting in ("", "true"):
        shown = "unset" if setting == "" else "true"
        ts = search(True, f"ENABLE_TOOL_SEARCH {shown}: Claude Code defers every MCP tool")
    else:
        ts = search(True, f"ENABLE_TOOL_SEARCH={setting} is not a value Claude Code documents; read as `true`")

    loads: list[tuple[Load, Decision]] = []
    memo: dict[tuple[str, str], Decision] = {}
    for item in job.tools:
        reason = _always_load(item)
        if not ts.active:
            key, load = ("", "all-up-front"), "preloaded"
            text = ts.reason
            source = None
        elif reason is not None:
            key, load = (item.server.name, "always-load:" + reason), "preloaded"
            text = reason
            source = item.server.key_locations.get("alwaysLoad", item.server.location)
        else:
            key, load = ("", "deferred"), "deferred"
            text = "an MCP tool: Claude Code defers it behind ToolSearch"
            source = None
        decision = memo.get(key)
        if decision is None:
            code = "all-up-front" if not ts.active else ("always-load" if reason is not None else "mcp-deferred")
            decision = memo[key] = Decision(0, code, text, source, HostId.CLAUDE_CODE.value, MEASURED)
        loads.append((load, decision))  # type: ignore[arg-type]
    if ts.active:
        up = tuple(b for b in builtins if b not in DEFERRABLE)
        deferred = deferrable_builtins
    else:
        up = tuple(b for b in builtins if b != SEARCH_TOOL)
        deferred = ()
    return HostSplit(
        tool_search=ts,
        loads=tuple(loads),
        builtins_up=up,
        builtins_deferred=deferred,
        search_tool=SEARCH_TOOL if ts.active else None,
        search_tool_tokens=0,  # ToolSearch is one of Claude Code's built-ins, sent with or without MCP tools
        lists_deferred=True,
    )


def _int(value: JSON, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def behind_gateway() -> str:
    """What Claude Code does with `quiver serve`'s tools (measured on 2.1.332)."""
    return (
        f'Claude Code defers an MCP server\'s tools unless they set `_meta["{ALWAYS_LOAD_META}"]`: quiver serve '
        "sets it on its meta-tools and preloaded tools, so they are up front (or set `alwaysLoad: true` on the "
        "quiver server's entry)"
    )


HOST = Host(
    id=HostId.CLAUDE_CODE,
    name="Claude Code",
    version=VERSION,
    basis=MEASURED,
    names_key="claude",
    description_limit=DESCRIPTION_LIMIT,
    settings=frozenset({"enable_tool_search", "context_window", "model"}),
    builtin=builtin,
    split=split,
    behind_gateway=behind_gateway,
    config_files=frozenset({".mcp.json"}),
    skill_dirs=(".claude/skills",),
    skill_listing=skill_lines,
    config_basis=f"{MEASURED}: it read .mcp.json, not .github/mcp.json, .vscode/mcp.json or mcp-config.json",
)
