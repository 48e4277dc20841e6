"""MCP010 download-piped-to-shell: a start-up command that runs code fetched from the network."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.lint.support.mcp_entries import entries
from quiver.lint.support.server_values import ServerValues
from quiver.model import Finding

_FETCH = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)"


_RUNNERS = r"(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|node|perl|ruby|iex|invoke-expression|pwsh|powershell)"


DOWNLOAD_AND_RUN = re.compile(
    rf"\b{_FETCH}\b[^|;&]*\|\s*{_RUNNERS}\b"  # curl ... | sh
    rf"|(?:\b(?:ba|z|da|k)?sh\s+-c|\beval)\s+[\"']?\$\(\s*{_FETCH}\b"  # sh -c "$(curl ...)"
    rf"|(?:\bsource|\.|\b(?:ba|z)?sh)\s+<\(\s*{_FETCH}\b",  # bash <(curl ...)
    re.IGNORECASE,
)


PACKAGE_RUNNERS = frozenset({"npx", "bunx", "pnpx", "pnpm", "yarn", "deno"})


REMOTE_PACKAGE = re.compile(r"^(?:https?://|git\+(?:https?|ssh)://)", re.IGNORECASE)


def _shell(v: ServerValues) -> Iterator[Finding]:
    server = v.entry.server
    raw_args = server.raw.get("args")
    args = [a for a in raw_args if isinstance(a, str)] if isinstance(raw_args, list) else []
    command = server.command or ""
    line = " ".join([command, *args])
    match = DOWNLOAD_AND_RUN.search(line)
    if match is not None:
        field = "command" if match.end() <= len(command) or not args else "args"
        found = line[match.start() :]
        snippet = found if len(found) <= 60 else found[:57] + "..."
        yield v.finding(DOWNLOAD_PIPED_TO_SHELL, v.at(field, None, ""), snippet=snippet)
        return
    if v.command in PACKAGE_RUNNERS:
        remote = next((a for a in args if REMOTE_PACKAGE.match(a)), None)
        if remote is not None:
            snippet = f"{v.command} {remote}"
            yield v.finding(DOWNLOAD_PIPED_TO_SHELL, v.at("args", None, remote), snippet=snippet)


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for entry in entries(ctx):
        yield from _shell(ServerValues(entry, src))


DOWNLOAD_PIPED_TO_SHELL = Rule(
    code="MCP010",
    name="download-piped-to-shell",
    severity="error",
    check=check,
    message="server `{server}` runs code downloaded at start-up: `{snippet}`",
    hint="install a pinned release (a package version or an image digest) and run that",
    doc="""\
## What it does
Flags a server whose start-up command runs code fetched from the network. In `command` and `args`:
a download piped into a shell
or interpreter (`curl ... | sh`, `wget -qO- ... | python`, `iwr ... | iex`), a shell fed by command or
process substitution (`bash -c "$(curl ...)"`, `bash <(curl ...)`), or a package runner given a URL
(`npx https://...`, `npx git+https://...`).

## Why is this bad?
Whatever the URL serves at that moment runs with the agent's credentials, on every start: one
compromised host or a changed branch and the server becomes a remote code execution path. Nothing
pins or reviews the code.

## Example
```json
{"mcpServers": {"tool": {"command": "bash", "args": ["-c", "curl -fsSL https://get.example.com | sh"]}}}
```
Use instead:
```json
{"mcpServers": {"tool": {"command": "npx", "args": ["-y", "@example/mcp-server@1.4.2"]}}}
```

## Fix
Install a released, versioned package (or a container image by digest) and start that.

## References
OWASP Top 10 for LLM applications, LLM03 supply chain; MCP security best practices (local servers).
""",
)


RULES: tuple[Rule, ...] = (DOWNLOAD_PIPED_TO_SHELL,)
