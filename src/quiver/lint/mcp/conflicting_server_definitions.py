"""MCP014 conflicting-server-definitions: one server name defined differently by two config files."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding, Server


def _signature(server: Server) -> dict[str, object]:
    return {"type": server.type, "command": server.command, "args": server.args, "url": server.url}


def _conflicts(ctx: LintContext) -> Iterator[Finding]:
    first: dict[str, tuple[str, Server]] = {}
    for cfg in ctx.project.configs:
        for server in cfg.servers:
            if not server.is_definition:
                continue
            seen = first.setdefault(server.name, (cfg.path, server))
            if seen[1] is server:
                continue
            old, new = _signature(seen[1]), _signature(server)
            field = next((key for key in old if old[key] != new[key]), None)
            if field is not None:
                yield CONFLICTING_SERVER_DEFINITIONS.finding(
                    location=server.location, server=server.name, other=seen[0], field=f"`{field}`"
                )


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from _conflicts(ctx)


CONFLICTING_SERVER_DEFINITIONS = Rule(
    code="MCP014",
    name="conflicting-server-definitions",
    severity="warning",
    check=check,
    message="server `{server}` is also defined in `{other}`, with a different {field}",
    hint="make the definitions agree, or give the servers different names",
    doc="""\
## What it does
Flags a server name defined in two config files (for example `.mcp.json` and `.vscode/mcp.json`) with
a different `type`, `command`, `args` or `url`.

## Why is this bad?
Each host reads its own file, so the same agent talks to a different server in VS Code than in the
Copilot CLI or Claude Code, and quiver's lock file (one catalog per name) matches at most one of them.

## Example
`.mcp.json` runs `npx @org/server@1`, `.vscode/mcp.json` runs `npx @org/server@2` under the same name.

Use instead:
both files run `npx @org/server@2` (or the second is renamed `server-next`).

## Fix
Use one definition everywhere (`jq '{mcpServers: .servers}' .vscode/mcp.json > .mcp.json`), or rename
one of them. Differences in `env`, `headers` or loading settings are not reported.

## References
Copilot CLI command reference, MCP loading priority; DESIGN §2 (a later file's definition wins).
""",
)


RULES: tuple[Rule, ...] = (CONFLICTING_SERVER_DEFINITIONS,)
