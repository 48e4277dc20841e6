"""MCP020 key-ignored-by-transport: a local-only key on a remote server, or the reverse."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.mcp_entries import Entry, entries
from quiver.model import Finding

LOCAL_ONLY = ("command", "args", "env", "cwd", "envFile")


REMOTE_ONLY = ("url", "headers", "oauth")


def _transport(entry: Entry) -> Iterator[Finding]:
    server = entry.server
    if server.type is None:
        return
    remote = server.type in ("http", "sse")
    for key in REMOTE_ONLY if not remote else LOCAL_ONLY:
        if key in server.raw:
            if remote:
                advice = "pass credentials in `headers`" if key == "env" else "remove it"
            else:
                advice = "remove it, or make the server remote (`type: http`) if `url` is its endpoint"
            yield KEY_IGNORED_BY_TRANSPORT.finding(
                location=server.key_locations.get(key, server.location),
                agent=entry.agent,
                server=entry.name,
                key=key,
                transport="remote" if remote else "local",
                advice=advice,
            )


def check(ctx: LintContext) -> Iterator[Finding]:
    for entry in entries(ctx):
        yield from _transport(entry)


KEY_IGNORED_BY_TRANSPORT = Rule(
    code="MCP020",
    name="key-ignored-by-transport",
    severity="warning",
    check=check,
    message="`{key}` has no effect on {transport} server `{server}`",
    hint="{advice}",
    doc="""\
## What it does
Flags keys of the other transport: `command`, `args`, `env`, `cwd` or `envFile` on a remote (`http`,
`sse`) server, `url`, `headers` or `oauth` on a local (`stdio`) one.

## Why is this bad?
The host ignores the key. Usually the entry mixes two set-ups: a token in `env` that never reaches a
remote server, or a `url` on a server that is in fact started locally.

## Example
```yaml
docs:
  type: http
  url: https://example.com/mcp
  env: {API_KEY: "${API_KEY}"}
```
Use instead:
```yaml
docs:
  type: http
  url: https://example.com/mcp
  headers: {Authorization: "Bearer ${API_KEY}"}
```

## Fix
Remove the key, or move the setting to the transport's own key (`headers` for remote servers,
`env` for local ones).

## References
Copilot CLI command reference, MCP server configuration (local vs remote fields).
""",
)


RULES: tuple[Rule, ...] = (KEY_IGNORED_BY_TRANSPORT,)
