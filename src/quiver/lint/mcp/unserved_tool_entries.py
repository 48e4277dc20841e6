"""MCP011 preload-tool-not-served and MCP013 allow-list-tool-not-served: `preload_tools` or `tools` entries
of a server that its snapshot does not serve."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding
from quiver.project import Project
from quiver.resolve import unserved_entries
from quiver.suggest import did_you_mean

_FALLBACK = "check the spelling, or add the server that provides it"


def unserved_findings(project: Project) -> Iterator[Finding]:
    """Findings about project-level servers, reported once rather than per agent."""
    for item in unserved_entries(project):
        rule = PRELOAD_TOOL_NOT_SERVED if item.field == "preload_tools" else ALLOW_LIST_TOOL_NOT_SERVED
        yield rule.finding(
            location=item.location,
            server=item.server,
            tool=item.entry,
            suggestion=did_you_mean(item.entry, item.served, _FALLBACK),
        )


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from unserved_findings(ctx.project)


PRELOAD_TOOL_NOT_SERVED = Rule(
    code="MCP011",
    name="preload-tool-not-served",
    severity="warning",
    check=check,
    message="`preload_tools` of server `{server}` names `{tool}`, which the server does not serve",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a `preload_tools` entry that is not in the server's locked catalog.

## Why is this bad?
The preload has no effect: the tool the author wanted up front stays unknown or deferred.

## Example
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["search_pull_request"]}]}
```
Use instead:
```json
{"mcp_servers": [{"name": "github", "preload_tools": ["search_pull_requests"]}]}
```

## Fix
Use a name from the lock file; re-run `quiver snapshot` if the server changed.

## References
DESIGN §2, `preload_tools`.
""",
)


ALLOW_LIST_TOOL_NOT_SERVED = Rule(
    code="MCP013",
    name="allow-list-tool-not-served",
    severity="warning",
    check=check,
    message="the `tools` allow-list of server `{server}` names `{tool}`, which the server does not serve",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a server allow-list entry that is not in the server's locked catalog.

## Why is this bad?
The agent was meant to have that tool and does not; often a rename upstream.

## Example
```json
{"mcpServers": {"github": {"url": "...", "tools": ["get_issue"]}}}
```
Use instead:
```json
{"mcpServers": {"github": {"url": "...", "tools": ["issue_read"]}}}
```

## Fix
Use a name from the lock file; `quiver diff` shows renames.

## References
Copilot CLI MCP configuration, `tools`.
""",
)


RULES: tuple[Rule, ...] = (PRELOAD_TOOL_NOT_SERVED, ALLOW_LIST_TOOL_NOT_SERVED)
