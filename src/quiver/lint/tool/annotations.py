"""Lint rules about a tool's annotations: undisclosed side effects, and hints that contradict the name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import shown
from quiver.lint.support.words import verb_class
from quiver.model import Finding, LockedTool

_LISTED = 5


def _values(tool: LockedTool) -> dict[str, Any]:
    return {"location": tool.location, "server": tool.server, "tool": tool.name, "shown_name": shown(tool.name)}


def undisclosed(tool: LockedTool) -> bool:
    """TOOL010's condition: the tool says neither `readOnlyHint` nor `destructiveHint`."""
    return not isinstance(tool.annotations.get("readOnlyHint"), bool) and not isinstance(
        tool.annotations.get("destructiveHint"), bool
    )


def _check_tool(tool: LockedTool) -> Iterator[Finding]:
    """TOOL011-TOOL012 for one tool."""
    annotations = tool.annotations
    read_only = annotations.get("readOnlyHint")
    destructive = annotations.get("destructiveHint")
    if read_only is not True and not (read_only is False and destructive is True):
        return
    said: list[tuple[str, str, str]] = []  # (class, verb, field)
    for field, value in (
        ("name", tool.name),
        ("title", tool.definition.get("title")),
        ("annotations.title", annotations.get("title")),
    ):
        if isinstance(value, str):
            found = verb_class(value)
            if found is not None:
                said.append((found[0], found[1], f"{field} `{shown(value)}`"))
    destructive_said = [s for s in said if s[0] == "destructive"]
    if read_only is True and destructive_said:
        _, verb, field = destructive_said[0]
        yield DESTRUCTIVE_TOOL_MARKED_READ_ONLY.finding(**_values(tool), field=field, verb=verb)
    elif read_only is False and destructive is True and said and not destructive_said:
        _, verb, field = said[0]
        yield READ_TOOL_MARKED_DESTRUCTIVE.finding(**_values(tool), field=field, verb=verb)


def check(ctx: LintContext) -> Iterator[Finding]:
    config = ctx.project.config
    policy_servers = {name for name, p in config.servers.items() if "side_effect" in p}
    policy_tools = {name for name, p in config.tools.items() if "side_effect" in p}
    silent: dict[str, list[LockedTool]] = {}
    for tool in ctx.locked_tools():
        declared = tool.server in policy_servers or f"{tool.server}/{tool.name}" in policy_tools
        if not declared and undisclosed(tool):
            silent.setdefault(tool.server, []).append(tool)
        yield from _check_tool(tool)
    for server, tools in sorted(silent.items()):
        yield _undisclosed_finding(ctx, server, tools)


def _undisclosed_finding(ctx: LintContext, server: str, tools: list[LockedTool]) -> Finding:
    """One TOOL010 per server: an upstream catalog the user cannot change is one note, not one per tool."""
    if len(tools) == 1:
        (tool,) = tools
        return UNDISCLOSED_SIDE_EFFECTS.finding(
            **_values(tool),
            subject=f"`{server}/{shown(tool.name)}` sets",
            listed="",
            advice=f'set `side_effect` under `[tool.quiver.tools."{server}/{tool.name}"]`',
        )
    names = sorted(t.name for t in tools)
    listed = ", ".join(f"`{shown(n, 40)}`" for n in names[:_LISTED])
    if len(names) > _LISTED:
        listed += f" and {len(names) - _LISTED} more"
    locked = ctx.project.lock.servers.get(server) if ctx.project.lock else None
    return UNDISCLOSED_SIDE_EFFECTS.finding(
        location=locked.location if locked else tools[0].location,
        server=server,
        subject=f"{len(tools)} tools of server `{server}` set",
        listed=f": {listed}",
        advice=f"set `side_effect` under `[tool.quiver.servers.{server}]`, or per tool under "
        f'`[tool.quiver.tools."{server}/TOOL"]`',
    )


UNDISCLOSED_SIDE_EFFECTS = Rule(
    code="TOOL010",
    name="undisclosed-side-effects",
    severity="info",
    check=check,
    message="{subject} neither `readOnlyHint` nor `destructiveHint`: the spec default applies "
    "(destructive, open-world){listed}",
    hint="add `annotations` upstream, or {advice}",
    doc="""\
## What it does
Notes the tools of a server that do not say whether they write: no `annotations`, or annotations
with neither `readOnlyHint` nor `destructiveHint`. One finding per server, listing its first tools
(the catalog is upstream's: one note per tool would bury the findings on the user's own files).
Skipped for a tool when the quiver config sets `side_effect` for the tool or its server.

## Why is this bad?
The MCP defaults are the cautious ones (`readOnlyHint: false`, `destructiveHint: true`,
`openWorldHint: true`), so quiver's runtime treats the tool as an irreversible write: no retries, and
approval where the policy asks for it. A read-only tool then costs approvals it does not need.
This is `info`, not a warning: the default fails safe, and most servers in the wild send no annotations.

## Example
```json
{"name": "get_weather", "description": "...", "inputSchema": {...}}
```
Use instead:
```json
{"name": "get_weather", "description": "...", "inputSchema": {...},
 "annotations": {"readOnlyHint": true, "openWorldHint": true}}
```

## Fix
Add annotations in the server, or classify the tool in the quiver config:
`[tool.quiver.tools."weather/get_weather"]` with `side_effect = "read_only"`.

## Options
`[tool.quiver.servers.NAME]` and `[tool.quiver.tools."SERVER/TOOL"]`: `side_effect`.

## References
MCP specification 2025-11-25, ToolAnnotations; DESIGN §7.
""",
)


DESTRUCTIVE_TOOL_MARKED_READ_ONLY = Rule(
    code="TOOL011",
    name="destructive-tool-marked-read-only",
    severity="error",
    check=check,
    message="`{server}/{shown_name}` is marked `readOnlyHint: true`, but its {field} says `{verb}`",
    hint="set `readOnlyHint: false` (and `destructiveHint: true`), or rename the tool if it only reads",
    doc="""\
## What it does
Flags a tool whose name or title starts (or ends) with a destructive verb (delete, remove, drop,
destroy, purge, kill, wipe, truncate, revoke, terminate, erase) while its annotations say
`readOnlyHint: true`.

## Why is this bad?
Clients and quiver's policy skip confirmation for read-only tools and retry them freely. A delete
that claims to be read-only runs without approval, and may run twice.

## Example
```json
{"name": "delete_branch", "annotations": {"readOnlyHint": true}}
```
Use instead:
```json
{"name": "delete_branch", "annotations": {"readOnlyHint": false, "destructiveHint": true}}
```

## Fix
Correct the annotations in the server. Where the name misleads (`purge_cache_stats` only reads),
rename the tool; until then suppress the finding with a reason.

## References
MCP specification 2025-11-25, ToolAnnotations.
""",
)


READ_TOOL_MARKED_DESTRUCTIVE = Rule(
    code="TOOL012",
    name="read-tool-marked-destructive",
    severity="warning",
    check=check,
    message="`{server}/{shown_name}` explicitly sets `readOnlyHint: false` and `destructiveHint: true`, "
    "but its {field} says `{verb}`",
    hint="if it only reads, set `readOnlyHint: true`; if it writes, rename it after what it changes",
    doc="""\
## What it does
Flags a tool whose name or title starts (or ends) with a read verb (get, list, search, read, fetch,
describe, show, find, query) while its annotations explicitly set `readOnlyHint: false` and
`destructiveHint: true`.

## Why is this bad?
Either the annotations are wrong, and every call asks for approval it does not need, or the name is
wrong, and the model uses a destructive tool to look things up.

## Example
```json
{"name": "get_report", "annotations": {"readOnlyHint": false, "destructiveHint": true}}
```
Use instead:
```json
{"name": "get_report", "annotations": {"readOnlyHint": true}}
```

## Fix
Fix whichever of the two is wrong, in the server.

## References
MCP specification 2025-11-25, ToolAnnotations.
""",
)


RULES: tuple[Rule, ...] = (UNDISCLOSED_SIDE_EFFECTS, DESTRUCTIVE_TOOL_MARKED_READ_ONLY, READ_TOOL_MARKED_DESTRUCTIVE)
