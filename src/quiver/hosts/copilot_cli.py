"""GitHub Copilot CLI: how it loads a custom agent's tools (`.github/agents/*.agent.md`).

Measured on Copilot CLI 1.0.102 (offline, with a custom provider pointed at a recording endpoint on
loopback: bench/hosts.py, the recordings in tests/fixtures/hosts/), then from its changelog
(github/copilot-cli changelog.md) and docs (docs.github.com, Copilot CLI tool search). The recordings show:

- Tool search is active when the model supports it and the request would carry more than 30 tools,
  built-ins and MCP tools together: an agent with `read` (sent as view, skill and sql) and 27 MCP tools
  gets all 30 up front, with 28 every MCP tool is deferred. An agent without `tools` starts with 19 (its
  default tools include `tool_search_tool`).
- When it is active every MCP tool is deferred (`defer_loading: true`) but those of a server with
  `deferTools: "never"`; built-ins never are; `tool_search_tool` is added.
- Naming a tool (`server/tool`) does not keep it up front, whatever `deferred-tool-loading` says (the docs
  said it would); a bare tool name reaches no MCP tool at all.
- Claude's and VS Code's tool names map onto Copilot's aliases (`Write` and `Edit` are both `edit`).
- Models: Claude 4 and later (Haiku 4.5 included) defer; Claude 3.7 does not; GPT-5.4 and later per the
  changelog (1.0.72 and earlier), which the offline provider could not show.
"""

from __future__ import annotations

import re

from quiver.builtins import builtin_alias, is_toolset, is_vscode_tool, vscode_toolset_of
from quiver.hosts.base import Host, skill_xml
from quiver.hosts.model import BuiltinRef, Decision, HostId, HostSplit, SplitJob, ToolSearch
from quiver.model import Load, Location

VERSION = "1.0.102"
MEASURED = f"measured on Copilot CLI {VERSION}"
TOOL_LIMIT = 30  # more tools than this in a request turn tool search on
SEARCH_TOOL = "tool_search_tool"
SEARCH_TOOL_TOKENS = 216  # o200k tokens of its definition as 1.0.102 sends it (recorded)
ALWAYS = ("skill", "sql")  # sent to every custom agent, whatever its `tools` says
DEFAULT_SET = (
    "bash",
    "read_bash",
    "stop_bash",
    "list_bash",
    "view",
    "create",
    "edit",
    "fetch_copilot_cli_documentation",
    "skill",
    "sql",
    "session_store_sql",
    "read_agent",
    "list_agents",
    "write_agent",
    "tool_search_tool",
    "update_todo",
    "grep",
    "glob",
    "task",
)
# The main session's built-ins (1.0.102, recorded with `copilot -p`): no update_todo, and
# `tool_search_tool` only when it defers.
SESSION_SET = tuple(name for name in DEFAULT_SET if name not in ("tool_search_tool", "update_todo"))
# What each alias is sent as (1.0.102, recorded offline: `web` sent nothing there).
ALIAS_TOOLS: dict[str, tuple[str, ...]] = {
    "read": ("view",),
    "edit": ("create", "edit"),
    "search": ("grep", "glob"),
    "execute": ("bash", "read_bash", "stop_bash", "list_bash"),
    "agent": ("task", "read_agent", "list_agents", "write_agent"),
    "todo": ("update_todo",),
    "web": (),
}
MODELS = (
    r"claude[-_ ]?(sonnet|opus|haiku)[-_ ]?([4-9]|\d\d)",
    r"claude[-_ ]?([4-9]|\d\d)([-_.]\d+)?[-_ ]?(sonnet|opus|haiku)",
    r"^(sonnet|opus|haiku)$",
    r"(mythos|fable)",
    r"gpt-?(5\.([4-9]|\d\d)|([6-9]|\d\d)(\.\d+)?)",
)


def builtin(text: str, location: Location) -> BuiltinRef | None:
    """An alias (or a compatible name: `Bash`, `Write`), or a VS Code tool or tool set Copilot CLI maps."""
    alias = builtin_alias(text)
    if alias is not None:
        note = "" if ALIAS_TOOLS[alias] else f"sends no tool for `{alias}` offline ({MEASURED})"
        return BuiltinRef(text, alias, "alias", location, sent=ALIAS_TOOLS[alias], note=note)
    if is_vscode_tool(text) or is_toolset(text):
        toolset = vscode_toolset_of(text)
        sent = ALIAS_TOOLS.get(toolset or "", ())
        return BuiltinRef(text, text, "vscode", location, sent=sent)
    return None


# Through a custom provider of type `anthropic` (BYOK, how it was recorded) only Claude models defer: gpt-5.4
# got every tool up front there. GitHub's own provider (not runnable here) defers GPT-5.4+ per the changelog.
ANTHROPIC_PROVIDER_MODELS = MODELS[:4]


def supports(model: str | None, provider: str = "github") -> bool:
    patterns = ANTHROPIC_PROVIDER_MODELS if provider == "anthropic" else MODELS
    return model is None or any(re.search(p, model, re.IGNORECASE) for p in patterns)


# GPT models get `apply_patch` for create/edit and `rg` for grep (1.0.102, recorded with gpt-5.4).
GPT_TOOLS = {"create": "apply_patch", "edit": "apply_patch", "grep": "rg"}


def _for_model(builtins: tuple[str, ...], model: str | None) -> tuple[str, ...]:
    if model is None or not re.match(r"gpt", model, re.IGNORECASE):
        return builtins
    return tuple(dict.fromkeys(GPT_TOOLS.get(b, b) for b in builtins))


def split(job: SplitJob) -> HostSplit:
    count = len(job.tools)
    if job.session:
        builtins = SESSION_SET
    elif job.explicit_tools:
        builtins = tuple(dict.fromkeys([*(name for b in job.builtins for name in b.sent), *ALWAYS]))
        if any(b.canonical == "*" for b in job.builtins):
            builtins = DEFAULT_SET
    else:
        builtins = DEFAULT_SET
    builtins = _for_model(builtins, job.model)
    total = len(builtins) + count
    host = HostId.COPILOT_CLI.value

    def search(active: bool, reason: str) -> ToolSearch:
        return ToolSearch(active, reason, count, TOOL_LIMIT, "tools", total)

    if job.settings.get("tool_search") is False:
        ts = search(False, "`tool_search = false` for copilot-cli in the quiver config (Copilot's `toolSearch`)")
    elif not supports(job.model, str(job.settings.get("provider") or "github")):
        ts = search(False, f"model `{job.model}` ({job.model_source}) does not support tool search on Copilot CLI")
    elif total > TOOL_LIMIT:
        ts = search(True, f"{total} tools ({len(builtins)} built-in, {count} MCP) > {TOOL_LIMIT}")
    else:
        ts = search(False, f"{total} tools ({len(builtins)} built-in, {count} MCP) <= {TOOL_LIMIT}")
    up_front = Decision(0, "all-up-front", ts.reason, None, host, MEASURED)
    deferred = Decision(0, "mcp-deferred", "an MCP tool: Copilot CLI defers it behind tool_search_tool", None, host,
                        MEASURED)  # fmt: skip
    never: dict[str, Decision] = {}
    loads: list[tuple[Load, Decision]] = []
    for item in job.tools:
        if not ts.active:
            loads.append(("preloaded", up_front))
        elif item.server.defer_tools == "never":
            decision = never.get(item.server.name)
            if decision is None:
                where = item.server.key_locations.get("deferTools", item.server.location)
                text = f'server `{item.server.name}` sets `deferTools: "never"`'
                decision = never[item.server.name] = Decision(0, "server-never-defers", text, where, host, MEASURED)
            loads.append(("preloaded", decision))
        else:
            loads.append(("deferred", deferred))
    if ts.active and SEARCH_TOOL not in builtins:
        builtins = (*builtins, SEARCH_TOOL)
        search_tokens = SEARCH_TOOL_TOKENS
    else:
        search_tokens = 0
    return HostSplit(
        tool_search=ts,
        loads=tuple(loads),
        builtins_up=builtins,
        search_tool=SEARCH_TOOL if ts.active else None,
        search_tool_tokens=search_tokens,
    )


def behind_gateway() -> str:
    return (
        f"Copilot CLI defers quiver serve's tools too once a request carries more than {TOOL_LIMIT} tools; set "
        '`deferTools: "never"` on the quiver server\'s entry to keep its meta-tools and preloaded tools up front'
    )


HOST = Host(
    id=HostId.COPILOT_CLI,
    name="Copilot CLI",
    version=VERSION,
    basis=MEASURED,
    names_key="copilot_cli",
    description_limit=None,
    settings=frozenset({"model", "tool_search", "provider", "offline"}),
    builtin=builtin,
    split=split,
    behind_gateway=behind_gateway,
    builtin_servers=frozenset({"github", "github-mcp-server", "playwright", "fetch", "time"}),
    bare_names_resolve=False,
    shadowing_servers=frozenset({"github"}),
    # the workspace's .mcp.json (measured in a trusted folder; not .github/mcp.json or .vscode/mcp.json) and
    # the user's own mcp-config.json, when a repository keeps a copy of it
    config_files=frozenset({".mcp.json", "mcp-config.json", ".copilot/mcp-config.json"}),
    config_basis=f"{MEASURED}: it read .mcp.json, not .github/mcp.json or .vscode/mcp.json",
    skill_dirs=(".github/skills", ".claude/skills"),
    skill_listing=skill_xml,
)
