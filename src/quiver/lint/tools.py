"""Lint rules about tool definitions as servers serve them (the lock file): names, descriptions, annotations.

Each tool is checked once per server, not per agent. Annotation rules live in `_tool_annotations.py`, schema
rules in `_tool_schema.py` and `_tool_values.py`, rules about the model-facing names hosts derive from
server + tool in `_tool_hosts.py`; `RULES` lists them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from quiver.lint import _tool_annotations, _tool_hosts, _tool_schema
from quiver.lint._cache import ToolCheckCache
from quiver.lint._tool_text import shown
from quiver.lint._tool_words import content_words, display_length, word_count
from quiver.lint.engine import LintContext
from quiver.model import Finding, Location, LockedServer, LockedTool
from quiver.rules import Rule

NAME_MAX = 128
DESCRIPTION_MIN_CHARS = 20
DESCRIPTION_MIN_WORDS = 4
_NAME_OK = re.compile(r"[A-Za-z0-9_.-]+")
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")
# Server keys and tool names as `render_lock` lays them out.
_LOCK_LINE = re.compile(r'^ {4}"((?:[^"\\]|\\.)*)": \{$|^ {12}"name": "((?:[^"\\]|\\.)*)",?$', re.MULTILINE)

INVALID_TOOL_NAME = Rule(
    code="TOOL001",
    name="invalid-tool-name",
    severity="error",
    message="tool name `{shown_name}` of server `{server}` {problem}",
    hint="MCP tool names are 1-128 characters of `A-Z a-z 0-9 _ - .`; rename the tool in the server",
    doc="""\
## What it does
Flags a tool whose name is empty, longer than 128 characters, or uses a character outside
`A-Z a-z 0-9 _ - .` (spaces, `/`, `:`, non-ASCII letters, ...).

## Why is this bad?
Hosts build function names from tool names and reject or rewrite what they cannot use: the Copilot CLI
turns every other character into `-`, so two tools can end up with one name, and host APIs refuse the
request outright. A `/` also breaks `server/tool` references in agent files.

## Example
```json
{"name": "search issues", "description": "..."}
```
Use instead:
```json
{"name": "search_issues", "description": "..."}
```

## Fix
Rename the tool in the server and re-run `quiver snapshot`. If the server is not yours, report it
upstream and reference the tool by a wildcard meanwhile.

## References
MCP specification 2025-11-25, Tools: tool names (SEP-986).
""",
)

DUPLICATE_TOOL_NAME = Rule(
    code="TOOL002",
    name="duplicate-tool-name",
    severity="error",
    message="server `{server}` serves {count} tools named `{shown_name}`",
    hint="tool names must be unique within a server; rename one, or fix the lock file",
    doc="""\
## What it does
Flags a server catalog in the lock file that lists two tools with the same name.

## Why is this bad?
A client keeps one of them, usually the last: calls meant for the other reach a different schema.
`quiver snapshot` refuses such a catalog, so this also catches a hand-edited lock file.

## Example
```json
"tools": [{"tool": {"name": "search", ...}}, {"tool": {"name": "search", ...}}]
```
Use instead:
```json
"tools": [{"tool": {"name": "search_code", ...}}, {"tool": {"name": "search_issues", ...}}]
```

## Fix
Rename one tool in the server and re-snapshot; never edit the lock file by hand.

## References
MCP specification 2025-11-25, Tools: names are unique within a server.
""",
)

MISSING_TOOL_DESCRIPTION = Rule(
    code="TOOL003",
    name="missing-tool-description",
    severity="error",
    message="tool `{server}/{shown_name}` has no description",
    hint="add a `description` that says what the tool does, when to use it and what it returns",
    doc="""\
## What it does
Flags a tool without a `description`, or with an empty one.

## Why is this bad?
The description is the only text a model routes by. Without it the model guesses from the name, and
tool search (which ranks by description) cannot find the tool once it is deferred.

## Example
```json
{"name": "sync", "inputSchema": {"type": "object"}}
```
Use instead:
```json
{"name": "sync", "description": "Push local commits to the remote branch and pull new ones.",
 "inputSchema": {"type": "object"}}
```

## Fix
Write the description in the server. Name the action, the object and what comes back.

## References
MCP specification 2025-11-25, Tools: `description`.
""",
)

SHORT_TOOL_DESCRIPTION = Rule(
    code="TOOL004",
    name="short-tool-description",
    severity="warning",
    message="description of `{server}/{shown_name}` is too short to route by: `{text}` "
    "({words} words, {chars} characters)",
    hint="say what the tool does, to what, and when to prefer it (at least 4 words and 20 characters)",
    doc="""\
## What it does
Flags a tool description under 20 characters or under 4 words. A CJK character counts as one word and
as two characters.

## Why is this bad?
Short descriptions do not separate a tool from its neighbours: the model picks the wrong one of
`get`, `fetch` and `read`, and tool search ranks it by chance.

## Example
```json
{"name": "get_issue", "description": "Gets it."}
```
Use instead:
```json
{"name": "get_issue", "description": "Get one GitHub issue by number: title, body, labels and state."}
```

## Fix
Extend the description in the server. The rule is wrong for a tool no model should call; leave that
tool out of every agent instead.

## References
Anthropic, "Writing effective tools for agents".
""",
)

DESCRIPTION_REPEATS_NAME = Rule(
    code="TOOL005",
    name="description-repeats-name",
    severity="warning",
    message="description of `{server}/{shown_name}` only repeats its name: `{text}`",
    hint="say what the name does not: what it returns, its limits, when to use it",
    doc="""\
## What it does
Flags a description whose words, ignoring case, separators, plural `s` and filler words ("the",
"a", "for", "tool", ...), are all words of the tool's name or title.

## Why is this bad?
It costs tokens and adds nothing: the model knows no more than the name told it. Descriptions that
are short as well are left to TOOL004.

## Example
```json
{"name": "list_pull_request_review_comments", "description": "List pull request review comments."}
```
Use instead:
```json
{"name": "list_pull_request_review_comments",
 "description": "List the inline review comments of a pull request, oldest first, with file and line."}
```

## Fix
Rewrite the description in the server.

## References
Anthropic, "Writing effective tools for agents".
""",
)

RULES: tuple[Rule, ...] = (
    INVALID_TOOL_NAME,
    DUPLICATE_TOOL_NAME,
    MISSING_TOOL_DESCRIPTION,
    SHORT_TOOL_DESCRIPTION,
    DESCRIPTION_REPEATS_NAME,
    *_tool_annotations.RULES,
    *_tool_schema.RULES,
    *_tool_hosts.RULES,
)


def check(ctx: LintContext) -> Iterator[Finding]:
    lock = ctx.project.lock
    if lock is None:
        return
    schemas = _tool_schema.SchemaChecks()
    cache = ToolCheckCache(ctx.project.root)
    policy_servers = {name for name, p in ctx.project.config.servers.items() if "side_effect" in p}
    policy_tools = {name for name, p in ctx.project.config.tools.items() if "side_effect" in p}
    lines: dict[str, dict[str, list[int]]] = {}  # filled on the first duplicate: one read of the lock
    for name in sorted(lock.servers):
        server = lock.servers[name]
        yield from _duplicates(ctx, server, lines)
        for tool in server.tools:
            yield from _name(tool)
            yield from _description(tool)
            declared = name in policy_servers or f"{name}/{tool.name}" in policy_tools
            yield from _tool_annotations.check(tool, declared=declared)
            yield from cache.findings(tool, schemas.check)
    cache.save()
    yield from _tool_hosts.check(ctx)


def values_of(tool: LockedTool) -> dict[str, Any]:
    """What every tool finding fills in: location, server, tool and the tool's name as messages show it."""
    return {"location": tool.location, "server": tool.server, "tool": tool.name, "shown_name": shown(tool.name)}


def _name(tool: LockedTool) -> Iterator[Finding]:
    name = tool.name
    if not name:
        problem = "is empty"
    elif len(name) > NAME_MAX:
        problem = f"is {len(name)} characters long (at most {NAME_MAX})"
    elif not _NAME_OK.fullmatch(name):
        bad = sorted(set(_NAME_BAD.findall(name)))
        listed = ", ".join(f"`{c}`" if c.isprintable() and c != "`" else f"U+{ord(c):04X}" for c in bad[:5])
        problem = f"uses {listed} (allowed: letters, digits, `_`, `-`, `.`)"
    else:
        return
    yield INVALID_TOOL_NAME.finding(**values_of(tool), problem=problem)


def _duplicates(ctx: LintContext, server: LockedServer, lines: dict[str, dict[str, list[int]]]) -> Iterator[Finding]:
    counts: dict[str, int] = {}
    for tool in server.tools:
        counts[tool.name] = counts.get(tool.name, 0) + 1
    repeated = {name: n for name, n in counts.items() if n > 1}
    if not repeated:
        return
    if not lines:
        lines.update(_name_lines(ctx))
    for name in sorted(repeated):
        first = next(t for t in server.tools if t.name == name)
        for line in lines.get(server.name, {}).get(name, [])[1:] or [first.location.line]:
            location = Location(first.location.file, line, first.location.column)
            values = {**values_of(first), "location": location}
            yield DUPLICATE_TOOL_NAME.finding(**values, count=repeated[name])


def _name_lines(ctx: LintContext) -> dict[str, dict[str, list[int]]]:
    """Server -> tool name -> every line of the lock file naming it (read only when a duplicate exists)."""
    import json

    lock = ctx.project.lock
    out: dict[str, dict[str, list[int]]] = {}
    if lock is None:
        return out
    text = ctx.source(lock.path)
    current: dict[str, list[int]] = {}
    line, last = 1, 0
    for match in _LOCK_LINE.finditer(text):
        line += text.count("\n", last, match.start())
        last = match.start()
        server, tool = match.group(1), match.group(2)
        if server is not None:
            current = out.setdefault(json.loads(f'"{server}"'), {})
        else:
            current.setdefault(json.loads(f'"{tool}"'), []).append(line)
    return out


def _description(tool: LockedTool) -> Iterator[Finding]:
    raw = tool.definition.get("description")
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        yield MISSING_TOOL_DESCRIPTION.finding(**values_of(tool))
        return
    words = word_count(text)
    if words < DESCRIPTION_MIN_WORDS or display_length(text) < DESCRIPTION_MIN_CHARS:
        yield SHORT_TOOL_DESCRIPTION.finding(
            **values_of(tool), text=shown(text), words=words, chars=display_length(text)
        )
        return
    named = content_words(tool.name)
    for title in (tool.definition.get("title"), tool.annotations.get("title")):
        if isinstance(title, str):
            named |= content_words(title)
    if words > 2 * len(named) + 6:
        return  # too long to be only the name again
    said = content_words(text)
    if said and said <= named:
        yield DESCRIPTION_REPEATS_NAME.finding(**values_of(tool), text=shown(text))
