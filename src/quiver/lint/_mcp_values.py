"""MCP server values: literal secrets (MCP005), variables the host cannot expand (MCP006-008), plain-HTTP
URLs (MCP009) and start-up commands that run downloaded code (MCP010)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from quiver.lint import _secrets
from quiver.lint._locate import Sources
from quiver.lint._mcp_entries import HOST_NAMES, Entry
from quiver.lint._mcp_rules import (
    DOWNLOAD_PIPED_TO_SHELL,
    INPUT_VARIABLE_OUTSIDE_VSCODE,
    INSECURE_SERVER_URL,
    LITERAL_SECRET,
    UNDEFINED_INPUT_VARIABLE,
    UNEXPANDED_VARIABLE,
)
from quiver.model import Finding, Location, Server
from quiver.rules import Rule
from quiver.suggest import did_you_mean
from quiver.variables import REFERENCE

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "cmd"})
# VS Code's predefined variables: the only `${name}` forms it expands (variables reference).
VSCODE_PREDEFINED = frozenset(
    {"workspaceFolder", "workspaceFolderBasename", "workspaceRoot", "userHome", "pathSeparator", "cwd"}
    | {"file", "fileBasename", "fileBasenameNoExtension", "fileDirname", "fileDirnameBasename", "fileExtname"}
    | {"fileWorkspaceFolder", "relativeFile", "relativeFileDirname", "execPath", "lineNumber", "selectedText"}
)
BARE_COPILOT_SECRET = re.compile(r"^COPILOT_MCP_[A-Za-z0-9_]+$")
LOOPBACK = re.compile(r"^(localhost|.*\.localhost|127(\.\d{1,3}){3}|::1|0\.0\.0\.0)$", re.IGNORECASE)
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


RULES: tuple[Rule, ...] = (
    LITERAL_SECRET,
    UNDEFINED_INPUT_VARIABLE,
    INPUT_VARIABLE_OUTSIDE_VSCODE,
    UNEXPANDED_VARIABLE,
    INSECURE_SERVER_URL,
    DOWNLOAD_PIPED_TO_SHELL,
)


def _values(server: Server) -> Iterator[tuple[str, str | None, str]]:
    """(field, key within the field, value) for every string the host may expand."""
    raw = server.raw
    for field in ("command", "url", "cwd"):
        value = raw.get(field)
        if isinstance(value, str):
            yield field, None, value
    args = raw.get("args")
    if isinstance(args, list):
        for value in args:
            if isinstance(value, str):
                yield "args", None, value
    for field in ("env", "headers"):
        mapping = raw.get(field)
        if isinstance(mapping, dict):
            for key, value in mapping.items():
                if isinstance(value, str):
                    yield field, key, value


class _Checker:
    def __init__(self, entry: Entry, src: Sources) -> None:
        self.entry = entry
        self.src = src
        server = entry.server
        command = (server.command or "").replace("\\", "/").rsplit("/", 1)[-1].lower()
        self.command = command.removesuffix(".exe")

    def at(self, field: str, key: str | None, needle: str) -> Location:
        server = self.entry.server
        start = server.key_locations.get(field, server.location)
        return self.src.find(start, key, needle) if key else self.src.find(start, needle)

    def finding(self, rule: Rule, where: Location, **values: Any) -> Finding:  # Any: as Rule.finding's templates
        return rule.finding(location=where, agent=self.entry.agent, server=self.entry.name, **values)

    def secrets(self) -> Iterator[Finding]:
        previous = ""
        for field, key, value in _values(self.entry.server):
            name = "TOKEN"
            if field in ("env", "headers"):
                kind = _secrets.secret_kind(key or "", value)
            elif field == "url":
                kind = _secrets.url_secret(value)
            elif field == "args":
                flag, sep, rest = value.lstrip("-").partition("=")
                if sep and re.fullmatch(r"[A-Za-z_][\w-]*", flag):
                    kind, name = _secrets.secret_kind(flag, rest), flag
                elif previous.startswith("-") and _secrets.SECRET_NAME.search(previous):
                    kind, name = _secrets.secret_kind(previous.lstrip("-"), value), previous.lstrip("-")
                else:
                    kind = _secrets.token_format(value)
                previous = value
            else:
                kind = _secrets.token_format(value)
            if kind is not None:
                yield self.finding(
                    LITERAL_SECRET,
                    self.at(field, key, value),
                    field=f"{field}.{key}" if key else field,
                    kind=kind,
                    advice=self.secret_advice(name if key is None or key.lower() == "authorization" else key),
                )

    def secret_advice(self, key: str) -> str:
        name = re.sub(r"\W", "_", key).upper()
        host = self.entry.host
        if host == "vscode":
            how = f'`${{input:{name.lower()}}}` (an input with `"password": true`) or `${{env:{name}}}`'
        elif host == "agent":
            how = f"`${{{{ secrets.COPILOT_MCP_{name} }}}}` (a Copilot environment secret)"
        elif host == "copilot":
            how = f"`$COPILOT_MCP_{name}` (cloud agent) or `${{{name}}}` (CLI)"
        else:
            how = f"`${{{name}}}`"
        return f"reference it as {how}, and revoke the exposed value"

    def variables(self) -> Iterator[Finding]:
        host = self.entry.host
        if host == "quiver":
            return
        for field, key, value in _values(self.entry.server):
            label = f"{field}.{key}" if key else field
            if field in ("env", "headers") and BARE_COPILOT_SECRET.match(value):
                advice = self.syntax_advice("bare", value)
                yield self.finding(
                    UNEXPANDED_VARIABLE,
                    self.at(field, key, value),
                    ref=value,
                    field=label,
                    host=HOST_NAMES[host],
                    advice=f"{advice} (a bare name is passed literally)",
                )
                continue
            shell_args = field == "args" and self.command in SHELLS
            for match in REFERENCE.finditer(value):
                yield from self.reference(match, field, key, label, shell_args)

    def reference(
        self, match: re.Match[str], field: str, key: str | None, label: str, shell_args: bool
    ) -> Iterator[Finding]:
        host, text = self.entry.host, match.group(0)
        if match.group("input"):
            ident = match.group("input")
            inputs = self.entry.inputs
            if inputs is None:
                yield self.finding(
                    INPUT_VARIABLE_OUTSIDE_VSCODE,
                    self.at(field, key, text),
                    ref=text,
                    field=label,
                    host=HOST_NAMES[host],
                    advice=self.syntax_advice("input", ident),
                )
            elif ident not in inputs:
                fallback = f'add {{"type": "promptString", "id": "{ident}", "password": true}} to `inputs`'
                suggestion = did_you_mean(ident, inputs, fallback)
                where = self.at(field, key, text)
                yield self.finding(UNDEFINED_INPUT_VARIABLE, where, ref=text, field=label, suggestion=suggestion)
            return
        if shell_args and not match.group("gh") and not match.group("env"):
            return  # the shell expands `$VAR` and `${VAR}` itself
        syntax = "gh" if match.group("gh") else "env" if match.group("env") else "bare" if match.group("bare") else ""
        if not syntax:
            syntax = "default" if match.group("default") is not None else "braced"
        name = match.group("gh") or match.group("env") or match.group("bare") or match.group("braced")
        if self.expands(syntax, name):
            return
        yield self.finding(
            UNEXPANDED_VARIABLE,
            self.at(field, key, text),
            ref=text,
            field=label,
            host=HOST_NAMES[host],
            advice=self.syntax_advice(syntax, name),
        )

    def expands(self, syntax: str, name: str) -> bool:
        """Whether the entry's host expands this reference syntax (formats research §2.7)."""
        host = self.entry.host
        if host == "vscode":
            return syntax == "env" or (syntax == "braced" and name in VSCODE_PREDEFINED)
        if host == "agent":
            if syntax == "gh":
                return name.startswith(("secrets.", "vars."))
            return syntax in ("bare", "braced", "default")
        if host == "copilot":
            return syntax in ("bare", "braced", "default")
        if host == "shared":
            return syntax in ("braced", "default")
        return syntax != "gh"

    def syntax_advice(self, syntax: str, name: str) -> str:
        var = re.sub(r"\W", "_", name.rsplit(".", 1)[-1])
        host = self.entry.host
        if syntax == "input":
            var = var.upper()
        if host == "vscode":
            return f"write `${{env:{var}}}`, or define an input and write `${{input:{var.lower()}}}`"
        if syntax == "bare":  # a bare COPILOT_MCP_* value, or `$VAR` where only `${VAR}` works
            return f"write `${{{var}}}`" if host == "shared" else f"write `${var}`"
        if host == "agent" and syntax == "gh":
            return f"only `secrets.` and `vars.` contexts are expanded: use e.g. `${{{{ vars.{var.upper()} }}}}`"
        secret = var if var.startswith("COPILOT_MCP_") else f"COPILOT_MCP_{var}"
        if host == "agent":
            return f"write `${{{{ secrets.{secret} }}}}` (a Copilot environment secret) or `${{{var}}}`"
        if host == "copilot":
            return f"write `${secret}` (a Copilot environment secret) or `${{{var}}}`"
        return f"write `${{{var}}}`"

    def url(self) -> Iterator[Finding]:
        url = self.entry.server.raw.get("url")
        if not isinstance(url, str) or not url.lower().startswith("http://") or REFERENCE.search(url):
            return
        try:
            host = urlsplit(url).hostname or ""
        except ValueError:
            return
        if not LOOPBACK.match(host):
            yield self.finding(INSECURE_SERVER_URL, self.at("url", None, url), host=host or url)

    def shell(self) -> Iterator[Finding]:
        server = self.entry.server
        raw_args = server.raw.get("args")
        args = [a for a in raw_args if isinstance(a, str)] if isinstance(raw_args, list) else []
        command = server.command or ""
        line = " ".join([command, *args])
        match = DOWNLOAD_AND_RUN.search(line)
        if match is not None:
            field = "command" if match.end() <= len(command) or not args else "args"
            found = line[match.start() :]
            snippet = found if len(found) <= 60 else found[:57] + "..."
            yield self.finding(DOWNLOAD_PIPED_TO_SHELL, self.at(field, None, ""), snippet=snippet)
            return
        launched = remote_package(self.command, args)
        if launched is not None:
            remote = launched.rsplit(" ", 1)[-1].partition("=")[2] or launched.rsplit(" ", 1)[-1]
            yield self.finding(DOWNLOAD_PIPED_TO_SHELL, self.at("args", None, remote), snippet=launched)


def check_entry(entry: Entry, src: Sources) -> Iterator[Finding]:
    checker = _Checker(entry, src)
    yield from checker.secrets()
    yield from checker.variables()
    yield from checker.url()
    yield from checker.shell()
