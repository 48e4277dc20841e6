"""AGT015 duplicate-tool-reference: an entry of `tools` that repeats an earlier one."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.hosts import Host
from quiver.lint.engine import LintContext
from quiver.model import Finding, ToolRef
from quiver.resolve import ResolvedAgent


def same_tool_key(host: Host, ref: ToolRef) -> str:
    """What `ref` names for `host`: entries with one key are one tool. Copilot's hosts fold an alias and its
    compatible names (`Bash` is `execute`); Claude Code's names are case-sensitive and distinct (`Write` and
    `Edit` are two tools), and only its renamed tools meet their new name (`Task` is `Agent`)."""
    builtin = host.builtin(ref.text, ref.location)
    if builtin is None:
        return ref.text
    if builtin.kind == "claude":
        return "+".join(builtin.sent) or builtin.canonical
    return builtin.canonical


def _duplicates(resolved: ResolvedAgent) -> Iterator[Finding]:
    agent = resolved.agent
    seen: dict[str, ToolRef] = {}
    for ref in agent.tools or ():
        key = same_tool_key(resolved.host, ref)
        first = seen.setdefault(key, ref)
        if first is not ref:
            same = "" if first.text == ref.text else f" (both are `{key}` on {resolved.host.label})"
            yield DUPLICATE_TOOL_REFERENCE.finding(
                location=ref.location,
                agent=agent.id,
                ref=ref.text,
                first=first.text,
                line=first.location.line,
                column=first.location.column,
                same=same,
            )


def check(ctx: LintContext) -> Iterator[Finding]:
    for resolved in ctx.resolved:
        yield from _duplicates(resolved)


DUPLICATE_TOOL_REFERENCE = Rule(
    code="AGT015",
    name="duplicate-tool-reference",
    severity="warning",
    check=check,
    message="`{ref}` repeats the entry `{first}` at {line}:{column}{same}",
    hint="remove this entry",
    doc="""\
## What it does
Flags an entry of `tools` that repeats an earlier one, for the host that reads the agent file. For
Copilot (CLI, VS Code, github.com) that includes a compatible alias of the same built-in (`Bash` after
`execute`, `Read` after `read`). Claude Code's tool names are case-sensitive and each is its own tool
(`Write` and `Edit`, `Glob` and `Grep`, `WebFetch` and `WebSearch` are pairs of distinct tools), so for a
Claude subagent only a true repeat counts, or a tool under its old name (`Task` after `Agent`).

## Why is this bad?
The repeat adds nothing, and usually hides a mistake: a second entry that was meant to name a
different tool.

## Example
```yaml
tools: ["read", "github/*", "Read"]
```
Use instead:
```yaml
tools: ["read", "github/*"]
```

## Fix
Delete the later entry. A wildcard next to a named tool of the same server (`github/*` and
`github/get_me`) is not a duplicate: naming a tool preloads it.

## References
GitHub Docs, custom agents configuration: tool aliases. Claude Code's tools: the names its 2.1.332 first
request sends (docs/hosts.md).
""",
)


RULES: tuple[Rule, ...] = (DUPLICATE_TOOL_REFERENCE,)
