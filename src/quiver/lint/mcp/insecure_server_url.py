"""MCP009 insecure-server-url: a remote server reached over plain HTTP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.lint.support.mcp_entries import entries
from quiver.lint.support.server_values import ServerValues
from quiver.model import Finding
from quiver.variables import REFERENCE

LOOPBACK = re.compile(r"^(localhost|.*\.localhost|127(\.\d{1,3}){3}|::1|0\.0\.0\.0)$", re.IGNORECASE)


def _url(v: ServerValues) -> Iterator[Finding]:
    url = v.entry.server.raw.get("url")
    if not isinstance(url, str) or not url.lower().startswith("http://") or REFERENCE.search(url):
        return
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return
    if not LOOPBACK.match(host):
        yield v.finding(INSECURE_SERVER_URL, v.at("url", None, url), host=host or url)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for entry in entries(ctx):
        yield from _url(ServerValues(entry, src))


INSECURE_SERVER_URL = Rule(
    code="MCP009",
    name="insecure-server-url",
    severity="warning",
    check=check,
    message="server `{server}` is reached over plain HTTP at `{host}`",
    hint="use `https://`; plain HTTP is fine only for a loopback address",
    doc="""\
## What it does
Flags a remote server `url` that starts with `http://` and does not point at the local machine
(`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`, `0.0.0.0`). URLs whose host is a variable are not
judged.

## Why is this bad?
Tool calls, results and the `Authorization` header travel unencrypted: anyone on the path can read the
token or alter what the model receives.

## Example
```json
{"mcpServers": {"docs": {"type": "http", "url": "http://mcp.example.com/mcp"}}}
```
Use instead:
```json
{"mcpServers": {"docs": {"type": "http", "url": "https://mcp.example.com/mcp"}}}
```

## Fix
Use the server's HTTPS endpoint. Wrong for a server reached through a private tunnel that already
encrypts: suppress the finding there.

## References
MCP specification, transports (security warning on HTTP); OWASP transport layer security.
""",
)


RULES: tuple[Rule, ...] = (INSECURE_SERVER_URL,)
