"""BUD002 unused-preload: tools a server-wide setting preloads that no agent names."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import shown
from quiver.model import Finding
from quiver.resolve import ResolvedTool

_LISTED = 5


# Server-wide settings only: a `preload_tools` entry names its tool, a deliberate choice (and the form
# `quiver advise` writes), so it is never "unnamed".
_PRELOAD_CODES = ("server-never-defers", "server-preloaded")


def _unused_preloads(ctx: LintContext) -> Iterator[Finding]:
    named = {(t.server, t.tool.name) for r in ctx.resolved for t in r.tools if t.named}
    per_server: dict[str, tuple[ResolvedTool, dict[str, None]]] = {}
    for resolved in ctx.resolved:
        if resolved.gateway_search is None or not resolved.gateway_search.active:
            continue
        for item in resolved.tools:  # quiver serve's decisions: `preload` is quiver's own key
            code = item.gateway_decision.code if item.gateway_decision is not None else ""
            if code in _PRELOAD_CODES and (item.server, item.tool.name) not in named:
                entry = per_server.setdefault(item.server, (item, {}))
                entry[1][item.tool.name] = None
    for server in sorted(per_server):
        item, tool_names = per_server[server]
        unnamed = sorted(tool_names)
        shown_tools = ", ".join(f"`{shown(n, 40)}`" for n in unnamed[:_LISTED])
        if len(unnamed) > _LISTED:
            shown_tools += f" and {len(unnamed) - _LISTED} more"
        decision = item.gateway_decision
        assert decision is not None  # selected above for its code
        setting = '`deferTools: "never"`' if decision.code == "server-never-defers" else "`preload: true`"
        yield UNUSED_PRELOAD.finding(
            location=decision.source,
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
Flags tools that a server-wide setting preloads (`deferTools: "never"` or `preload: true`) for an
agent with tool search active, when no agent in the project names them explicitly in `tools`. One
finding per server. A `preload_tools` entry is never flagged: it names its tool, a deliberate choice
(it is what `quiver advise` proposes from recorded use).

## Why is this bad?
Preloading is for the few tools an agent uses on most tasks; their schemas ride along in every
call. A tool nobody names is reached through a wildcard: tool search finds it when needed, for
free until then.

## Example
```json
{"mcpServers": {"github": {"command": "github-mcp", "deferTools": "never"}}}
```
with agents that reach `github/*` but name none of its tools.
Use instead: drop `deferTools: "never"` and list the few tools worth preloading:
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["get_me"]}]}
```

## Fix
Drop `deferTools: "never"` / `preload: true`, and preload the tools used on most runs with
`preload_tools` (`quiver advise` proposes them from usage), or name them in those agents' `tools`.

## References
DESIGN §3, preload rules 2 and 3.
""",
)


RULES: tuple[Rule, ...] = (UNUSED_PRELOAD,)
