"""AGT023-024: `tools` entries the agent's host ignores: written in a form it does not read (AGT023), or
naming a server defined only in config files it does not read (AGT024)."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.model import Edit, Finding
from quiver.references import Unresolved
from quiver.resolve import ResolvedAgent


def host_findings(resolved: ResolvedAgent, src: Sources | None = None) -> Iterator[Finding]:
    """One finding per entry the host would ignore: AGT023 with the spelling it reads (a fix where the entry
    is written plainly, so replacing its text is safe), AGT024 with the files it reads."""
    for item in resolved.unresolved:
        if item.kind == "host-syntax":
            yield _finding(resolved, item, src)
        elif item.kind == "shadowed-by-host":
            yield SERVER_SHADOWED_BY_HOST.finding(
                location=item.ref.location,
                agent=resolved.agent.id,
                server=item.server,
                ref=item.ref.text,
                host=resolved.host.label,
                why=item.why,
            )
        elif item.kind == "not-read-by-host":
            files = resolved.host.project_config
            yield SERVER_NOT_READ_BY_HOST.finding(
                location=item.ref.location,
                agent=resolved.agent.id,
                server=item.server,
                ref=item.ref.text,
                host=resolved.host.label,
                why=item.why,
                files=files,
            )


def _finding(resolved: ResolvedAgent, item: Unresolved, src: Sources | None) -> Finding:
    ref, at = item.ref.text, item.ref.location
    fixes: tuple[Edit, ...] = ()
    if item.guess and src is not None and at.line and at.column:
        line = src.line(at.file, at.line)
        start = at.column - 1
        if line[start : start + len(ref)] == ref:
            fixes = (Edit(at.file, at.line, at.column, at.line, at.column + len(ref), item.guess),)
    hint = f"write `{item.guess}`" if item.guess else "name a tool the host knows"
    return HOST_TOOL_SYNTAX.finding(
        location=at,
        agent=resolved.agent.id,
        server=item.server,
        ref=ref,
        host=resolved.host.label,
        why=item.why,
        suggestion=hint,
        fixes=fixes,
    )


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for resolved in ctx.resolved:
        yield from host_findings(resolved, src)


HOST_TOOL_SYNTAX = Rule(
    code="AGT023",
    name="tool-reference-host-syntax",
    severity="error",
    fix="safe",
    check=check,
    message="`{ref}` reaches no tool on {host}: {why}",
    hint="{suggestion}",
    doc="""\
## What it does
Flags an entry of `tools` written in a form the agent's host does not read, so the host gives the
agent no tool for it: Copilot's `server/tool` in a Claude Code subagent (Claude Code reads
`mcp__server__tool`, and `mcp__server` for a whole server), a Claude built-in in the wrong case
(`read` for `Read`: Claude Code's names are case-sensitive), a bare server name in a Claude Code
subagent, or a bare MCP tool name for Copilot CLI (which reaches MCP tools only as `server/tool`).
The host is the one quiver resolves the agent for (`quiver explain AGENT` names it).

## Why is this bad?
The host drops the entry without a word: the agent runs without the tool its prompt relies on. Each
form was recorded from the host's own first request (Claude Code 2.1.332, Copilot CLI 1.0.102;
docs/hosts.md).

## Example
`.claude/agents/ops.md`:
```yaml
tools: Read, Bash, github/*
```
Use instead:
```yaml
tools: Read, Bash, mcp__github
```

## Fix
`quiver lint --fix` rewrites a plainly written entry to the spelling the hint names. If the file is
really meant for another host, say so in quiver.toml (`host`, `[agent_hosts]`, or an `[[agents]]`
entry with `kind`).

## References
docs/hosts.md; code.claude.com/docs/en/sub-agents; Copilot CLI changelog.
""",
)


SERVER_NOT_READ_BY_HOST = Rule(
    code="AGT024",
    name="server-not-read-by-host",
    severity="error",
    check=check,
    message="`{ref}` reaches no tool on {host}: {why}",
    hint="define `{server}` in {files} (read by {host}), or set the agent's host in quiver.toml",
    doc="""\
## What it does
Flags a `tools` entry naming a server that the project defines only in MCP config files the agent's host
does not read: a Claude Code subagent using a server of `.vscode/mcp.json`, a Copilot CLI agent using one
of `.github/mcp.json`. Each host's files were recorded from the host itself where it runs here (Claude
Code 2.1.332 and Copilot CLI 1.0.102 read the workspace's `.mcp.json`), else taken from its docs
(docs/hosts.md).

## Why is this bad?
The host starts without the server, so the agent has none of its tools, silently. quiver's budget for the
agent leaves them out for the same reason.

## Example
`.vscode/mcp.json` defines `git`; `.claude/agents/ops.md` says `tools: Read, mcp__git`.

Use instead: define `git` in `.mcp.json` (read by Claude Code, Copilot CLI and VS Code).

## Fix
Move or copy the server's definition to a file the host reads. If quiver took the agent for the wrong host,
set it in quiver.toml (`host`, `[agent_hosts]`).

## References
docs/hosts.md; code.claude.com/docs/en/mcp (project scope); Copilot CLI docs (workspace MCP servers).
""",
)


SERVER_SHADOWED_BY_HOST = Rule(
    code="AGT025",
    name="server-shadowed-by-host",
    severity="warning",
    check=check,
    message="`{ref}` on {host}: {why}",
    hint="rename the server `{server}` in the MCP config (and in the agent's `tools`)",
    doc="""\
## What it does
Flags a `tools` entry `server/...` whose server name is also one of the host's own servers, which wins:
Copilot CLI reads `github/*` in a custom agent as its built-in GitHub server, so a `github` server the
project defines in `.mcp.json` is not what the agent gets (recorded on Copilot CLI 1.0.102: the agent's
`github/...` entries reached none of the project server's tools; renamed, they did).

## Why is this bad?
The agent runs with another server's tools than the ones its prompt, the lock and quiver's budget assume:
other names, other permissions, another token.

## Example
`.mcp.json` defines `github` (a pinned, read-only build); the agent says `tools: ["github/get_me"]`.

Use instead: name the project's server `github-readonly` and write `github-readonly/get_me`.

## Fix
Rename the project's server and the agent's entries; or keep the name and accept the host's own server.

## References
docs/hosts.md (Copilot CLI).
""",
)


RULES: tuple[Rule, ...] = (HOST_TOOL_SYNTAX, SERVER_NOT_READ_BY_HOST, SERVER_SHADOWED_BY_HOST)
