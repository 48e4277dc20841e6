"""AGT013 comma-separated-tools: `tools` written as one comma-separated string (fixable)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.model import Agent, Edit, Finding

_TOOLS_KEY = re.compile(r"""(?:"tools"|'tools'|tools)[ \t]*:[ \t]*""")


def _scalar_span(line: str, start: int) -> tuple[int, str] | None:
    """End (exclusive) and decoded value of the one-line YAML scalar at `start`; None if it is not one."""
    quote = line[start : start + 1]
    if quote == '"':
        j = start + 1
        while j < len(line) and line[j] != '"':
            j += 2 if line[j] == "\\" else 1
        if j >= len(line):
            return None
        try:
            decoded = json.loads(line[start : j + 1])
        except ValueError:
            return None
        end = j + 1
    elif quote == "'":
        j = start + 1
        while j < len(line):
            if line[j] == "'" and line[j + 1 : j + 2] == "'":
                j += 2
            elif line[j] == "'":
                break
            else:
                j += 1
        if j >= len(line):
            return None
        decoded, end = line[start + 1 : j].replace("''", "'"), j + 1
    else:
        comment = line.find(" #", start)
        end = len(line[: comment if comment >= 0 else len(line)].rstrip())
        decoded = line[start:end]
    rest = line[end:].strip()
    if rest and not rest.startswith("#"):
        return None
    return end, decoded if isinstance(decoded, str) else ""


def _comma_tools(agent: Agent, src: Sources) -> Iterator[Finding]:
    value = agent.frontmatter.get("tools")
    if agent.kind == "claude" or not isinstance(value, str) or agent.tools is None:
        return
    items = [part.strip() for part in value.split(",") if part.strip()]
    replacement = "[" + ", ".join(json.dumps(item, ensure_ascii=False) for item in items) + "]"
    where = agent.key_locations["tools"]
    fixes: tuple[Edit, ...] = ()
    line = src.line(agent.path, where.line)
    key = _TOOLS_KEY.match(line, where.column - 1)
    span = _scalar_span(line, key.end()) if key else None
    if key and span and span[1] == value:
        fixes = (Edit(agent.path, where.line, key.end() + 1, where.line, span[0] + 1, replacement),)
    shown = replacement if len(replacement) <= 80 else replacement[:76] + " ...]"
    yield COMMA_SEPARATED_TOOLS.finding(location=where, agent=agent.id, replacement=shown, fixes=fixes)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for agent in ctx.project.agents:
        yield from _comma_tools(agent, src)


COMMA_SEPARATED_TOOLS = Rule(
    code="AGT013",
    name="comma-separated-tools",
    severity="info",
    check=check,
    message="`tools` is a comma-separated string; a YAML list is the documented form",
    hint="write `tools: {replacement}`",
    fix="safe",
    doc="""\
## What it does
Notes a Copilot agent file (`.github/agents`, chat modes) whose `tools` is one comma-separated
string. Claude Code files in `.claude/agents` use that form by convention and are not flagged.

## Why is this bad?
Hosts accept the string, but a tool name containing a comma or quote cannot be written in it, diffs
of a long line are hard to review, and editors cannot validate the entries.

## Example
```yaml
tools: read, edit, github/*
```
Use instead:
```yaml
tools: ["read", "edit", "github/*"]
```

## Fix
`--fix` rewrites the value as a YAML flow list, keeping every entry's order and spelling and quoting
each with double quotes. No fix is offered for a value that spans several lines.

## References
GitHub Docs, custom agents configuration: `tools` (list of strings or comma-separated string).
""",
)


RULES: tuple[Rule, ...] = (COMMA_SEPARATED_TOOLS,)
