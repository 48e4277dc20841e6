"""TOOL002 duplicate-tool-name: one server serving two tools of the same name."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.text import tool_values
from quiver.model import Finding, LockedServer


def _duplicates(server: LockedServer) -> Iterator[Finding]:
    """One finding per repeat of a name, at that repeat's own entry (the lock reader placed each)."""
    by_name: dict[str, list[int]] = {}
    for index, tool in enumerate(server.tools):
        by_name.setdefault(tool.name, []).append(index)
    for name in sorted(n for n, at in by_name.items() if len(at) > 1):
        same = [server.tools[i] for i in by_name[name]]
        for repeat in same[1:]:
            yield DUPLICATE_TOOL_NAME.finding(**{**tool_values(same[0]), "location": repeat.location}, count=len(same))


def check(ctx: LintContext) -> Iterator[Finding]:
    lock = ctx.project.lock
    if lock is None:
        return
    for name in sorted(lock.servers):
        yield from _duplicates(lock.servers[name])


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
