"""BUD002 unused-preload: a tool preloaded by server settings that no agent names."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import shown
from quiver.model import Finding
from quiver.resolve import ResolvedTool

_LISTED = 5


_PRELOAD_CODES = ("server-never-defers", "server-preloaded", "preload-tools")


def _unused_preloads(ctx: LintContext) -> Iterator[Finding]:
    named = {(t.server, t.tool.name) for r in ctx.resolved for t in r.tools if t.named}
    per_tool: dict[tuple[str, str], ResolvedTool] = {}
    per_server: dict[str, tuple[ResolvedTool, dict[str, None]]] = {}
    for resolved in ctx.resolved:
        if not resolved.tool_search.active:
            continue
        for item in resolved.tools:
            code = item.decision.code
            if code not in _PRELOAD_CODES or (item.server, item.tool.name) in named:
                continue
            if code == "preload-tools":
                per_tool.setdefault((item.server, item.tool.name), item)
            else:
                entry = per_server.setdefault(item.server, (item, {}))
                entry[1][item.tool.name] = None
    for server, name in sorted(per_tool):
        item = per_tool[(server, name)]
        yield UNUSED_PRELOAD.finding(
            location=item.decision.source,
            server=server,
            tool=name,
            subject=f"`{server}/{shown(name)}` is",
            setting="`preload_tools`",
            them="it",
            advice=f"remove `{shown(name)}` from `preload_tools` of server `{server}`, "
            "or name it in an agent's `tools`",
        )
    for server in sorted(per_server):
        item, tool_names = per_server[server]
        unnamed = sorted(tool_names)
        shown_tools = ", ".join(f"`{shown(n, 40)}`" for n in unnamed[:_LISTED])
        if len(unnamed) > _LISTED:
            shown_tools += f" and {len(unnamed) - _LISTED} more"
        setting = '`deferTools: "never"`' if item.decision.code == "server-never-defers" else "`preload: true`"
        yield UNUSED_PRELOAD.finding(
            location=item.decision.source,
            server=server,
            subject=f"{len(unnamed)} tool(s) of server `{server}` are",
            setting=setting,
            them=f"them: {shown_tools}",
            advice=f"drop {setting} from server `{server}` and let tool search load them, "
            "or name the tools an agent needs in its `tools`",
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from _unused_preloads(ctx)


UNUSED_PRELOAD = Rule(
    code="BUD002",
    name="unused-preload",
    severity="warning",
    check=check,
    message="{subject} preloaded by {setting} while tool search is active, but no agent names {them}",
    hint="{advice}",
    doc="""\
## What it does
Flags tools that a server setting preloads (`deferTools: "never"`, `preload: true` or
`preload_tools`) for an agent with tool search active, when no agent in the project names them
explicitly in `tools`. One finding per `preload_tools` entry, one per server for server-wide settings.

## Why is this bad?
Preloading is for the few tools an agent uses on most tasks; their schemas ride along in every
call. A tool nobody names is reached through a wildcard: tool search finds it when needed, for
free until then.

## Example
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["get_me"]}]}
```
with no agent listing `github/get_me`.
Use instead: drop `get_me` from `preload_tools`, or name it in the agents that rely on it.

## Fix
Remove the entry from `preload_tools` (or drop `deferTools: "never"` / `preload: true`). It is
wrong when usage data (`quiver advise`) shows the tool is used on most runs: then name it in those
agents' `tools`, which documents the choice.

## References
DESIGN §3, preload rules 2 and 3.
""",
)


RULES: tuple[Rule, ...] = (UNUSED_PRELOAD,)
