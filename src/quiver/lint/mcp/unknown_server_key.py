"""MCP018 unknown-server-key: a key of a server entry that its host does not read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.mcp_entries import Entry, entries
from quiver.model import Finding
from quiver.sources.mcp_config import Reader
from quiver.suggest import did_you_mean

# Keys quiver reads in every dialect (DESIGN §2), then each host's own (formats research §2).
QUIVER_KEYS = frozenset(
    {"type", "command", "args", "env", "cwd", "url", "headers", "tools", "deferTools", "preload", "preload_tools"}
    | {"timeout", "description"}
)


COPILOT_KEYS = frozenset(
    {"disableToolCache", "slowConnectionThresholdMs", "oauthClientId", "oauthScopes", "oauthPublicClient"}
    | {"oauthGrantType", "oidc", "filterMapping"}
)


CLAUDE_KEYS = frozenset({"alwaysLoad"})


VSCODE_KEYS = frozenset({"envFile", "sandboxEnabled", "sandbox", "dev", "oauth", "gallery", "version"})


KNOWN_KEYS: Mapping[Reader, frozenset[str]] = {
    Reader.VSCODE: QUIVER_KEYS | VSCODE_KEYS,
    Reader.AGENT: QUIVER_KEYS | COPILOT_KEYS,
    Reader.COPILOT: QUIVER_KEYS | COPILOT_KEYS,
    Reader.SHARED: QUIVER_KEYS | COPILOT_KEYS | CLAUDE_KEYS,
    Reader.OTHER: QUIVER_KEYS | COPILOT_KEYS | CLAUDE_KEYS | VSCODE_KEYS | {"auth"},
    Reader.QUIVER: QUIVER_KEYS | COPILOT_KEYS | {"name"},
}


def _keys(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    known = KNOWN_KEYS[entry.host]
    for key in server.raw:
        if key not in known:
            fallback = f"{entry.host.label} do not read it; remove it"
            if entry.host == Reader.VSCODE:
                fallback = "VS Code does not read it; remove it"
            yield UNKNOWN_SERVER_KEY.finding(
                location=server.key_locations.get(key, server.location),
                agent=entry.agent,
                server=entry.name,
                key=key,
                suggestion=did_you_mean(key, known, fallback),
            )


def check(ctx: LintContext) -> Iterator[Finding]:
    for entry in entries(ctx):
        yield from _keys(entry)


UNKNOWN_SERVER_KEY = Rule(
    code="MCP018",
    name="unknown-server-key",
    severity="warning",
    check=check,
    message="server `{server}` has unknown key `{key}`",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a server key that neither quiver nor the host reading the file knows. Each dialect has its own
set: VS Code adds `envFile`, `sandbox`, `dev`, `oauth`; Copilot adds `disableToolCache`, `oauth*`,
`filterMapping`; Claude Code adds `alwaysLoad`; quiver's `preload`, `preload_tools`, `deferTools`,
`timeout` and `description` are accepted everywhere.

## Why is this bad?
A misspelt key (`evn`, `header`, `defer_tools`) is silently ignored: the server starts without its
environment or headers, or with the wrong loading behaviour.

## Example
```json
{"mcpServers": {"docs": {"type": "http", "url": "https://example.com/mcp", "header": {}}}}
```
Use instead:
```json
{"mcpServers": {"docs": {"type": "http", "url": "https://example.com/mcp", "headers": {}}}}
```

## Fix
The hint names the closest known key. A key read by a host quiver does not know about can be
suppressed (`// quiver: ignore[MCP018]` in `.vscode/mcp.json`).

## References
Copilot CLI command reference; VS Code MCP configuration reference; formats research §2.
""",
)


RULES: tuple[Rule, ...] = (UNKNOWN_SERVER_KEY,)
