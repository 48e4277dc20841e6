"""TOOL002 duplicate-tool-name: one server serving two tools of the same name."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import tool_values
from quiver.model import Finding, Location, LockedServer

_LOCK_LINE = re.compile(r'^ {4}"((?:[^"\\]|\\.)*)": \{$|^ {12}"name": "((?:[^"\\]|\\.)*)",?$', re.MULTILINE)


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
            values = {**tool_values(first), "location": location}
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


def check(ctx: LintContext) -> Iterator[Finding]:
    lock = ctx.project.lock
    if lock is None:
        return
    lines: dict[str, dict[str, list[int]]] = {}  # filled on the first duplicate: one read of the lock
    for name in sorted(lock.servers):
        yield from _duplicates(ctx, lock.servers[name], lines)


DUPLICATE_TOOL_NAME = Rule(
    code="TOOL002",
    name="duplicate-tool-name",
    severity="error",
    check=check,
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


RULES: tuple[Rule, ...] = (DUPLICATE_TOOL_NAME,)
