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


# Launchers that run a named package: the command, and the subcommand it needs (`pipx run`, `pnpm dlx`).
LAUNCHERS = {"npx": (), "bunx": (), "pnpx": (), "uvx": (), "pipx": ("run",), "pnpm": ("dlx",), "yarn": ("dlx",)}
LAUNCHERS |= {"uv": ("tool", "run"), "deno": ("run",)}
# Flags whose value names the package to run (a URL there is code fetched), and flags that take any value.
_SPEC_FLAGS = frozenset({"-p", "--package", "--from", "--spec", "--with"})
_VALUE_FLAGS = _SPEC_FLAGS | {"--python", "--index-url", "--extra-index-url", "--index", "--default-index"}
_VALUE_FLAGS |= {"--registry", "--pip-args", "--cache", "--userconfig", "-c", "--call"}


REMOTE_PACKAGE = re.compile(r"^(?:https?://|git\+(?:https?|ssh)://)", re.IGNORECASE)


def remote_package(command: str, args: list[str]) -> str | None:
    """The launcher invocation up to a package given as a URL (`npx -y https://...`), else None.

    Arguments after the package are the package's own (`npx -y mcp-remote https://...` passes a URL to
    `mcp-remote`, a named package): they are not code being fetched.
    """
    sub = LAUNCHERS.get(command)
    if sub is None or tuple(args[: len(sub)]) != sub:
        return None
    rest = args[len(sub) :]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if not arg.startswith("-"):
            return " ".join([command, *sub, *rest[: i + 1]]) if REMOTE_PACKAGE.match(arg) else None
        flag, _, value = arg.partition("=")
        if flag in _VALUE_FLAGS and not value and i + 1 < len(rest):
            i += 1
            value = rest[i]
        if flag in _SPEC_FLAGS and REMOTE_PACKAGE.match(value):
            return " ".join([command, *sub, *rest[: i + 1]])
        i += 1
    return None


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
    launched = remote_package(v.command, args)
    if launched is not None:
        remote = launched.rsplit(" ", 1)[-1].partition("=")[2] or launched.rsplit(" ", 1)[-1]
        yield v.finding(DOWNLOAD_PIPED_TO_SHELL, v.at("args", None, remote), snippet=launched)


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
process substitution (`bash -c "$(curl ...)"`, `bash <(curl ...)`), or a launcher whose package is a
URL (`npx https://...`, `uvx --from git+https://...`, `pipx run --spec https://...`, `bunx https://...`).
A URL after a named package is that package's argument, not code being fetched: `npx -y mcp-remote
https://mcp.example.com/sse` runs the `mcp-remote` package and is not reported.

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
