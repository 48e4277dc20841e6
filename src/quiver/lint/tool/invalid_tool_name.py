"""TOOL001 invalid-tool-name: a tool name hosts reject (empty, too long, or outside `[A-Za-z0-9_.-]`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import tool_values
from quiver.model import Finding, LockedTool

NAME_MAX = 128


_NAME_OK = re.compile(r"[A-Za-z0-9_.-]+")


_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")


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
    yield INVALID_TOOL_NAME.finding(**tool_values(tool), problem=problem)


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.locked_tools():
        yield from _name(tool)


INVALID_TOOL_NAME = Rule(
    code="TOOL001",
    name="invalid-tool-name",
    severity="error",
    check=check,
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


RULES: tuple[Rule, ...] = (INVALID_TOOL_NAME,)
