"""MCP006-008: `${...}` references the entry's host will not expand: undefined inputs, inputs outside VS
Code, and syntaxes the host passes through literally."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.lint.support.mcp_entries import entries
from quiver.lint.support.server_values import ServerValues, string_values
from quiver.model import Finding
from quiver.sources.mcp_config import Reader
from quiver.suggest import did_you_mean
from quiver.variables import REFERENCE

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "cmd"})


VSCODE_PREDEFINED = frozenset(
    {"workspaceFolder", "workspaceFolderBasename", "workspaceRoot", "userHome", "pathSeparator", "cwd"}
    | {"file", "fileBasename", "fileBasenameNoExtension", "fileDirname", "fileDirnameBasename", "fileExtname"}
    | {"fileWorkspaceFolder", "relativeFile", "relativeFileDirname", "execPath", "lineNumber", "selectedText"}
)


BARE_COPILOT_SECRET = re.compile(r"^COPILOT_MCP_[A-Za-z0-9_]+$")


def _variables(v: ServerValues) -> Iterator[Finding]:
    host = v.entry.host
    if host == Reader.QUIVER:
        return
    for field, key, value in string_values(v.entry.server):
        label = f"{field}.{key}" if key else field
        if field in ("env", "headers") and BARE_COPILOT_SECRET.match(value):
            advice = _syntax_advice(v, "bare", value)
            yield v.finding(
                UNEXPANDED_VARIABLE,
                v.at(field, key, value),
                ref=value,
                field=label,
                host=host.label,
                advice=f"{advice} (a bare name is passed literally)",
            )
            continue
        shell_args = field == "args" and v.command in SHELLS
        for match in REFERENCE.finditer(value):
            yield from _reference(v, match, field, key, label, shell_args)


def _reference(
    v: ServerValues, match: re.Match[str], field: str, key: str | None, label: str, shell_args: bool
) -> Iterator[Finding]:
    host, text = v.entry.host, match.group(0)
    if match.group("input"):
        ident = match.group("input")
        inputs = v.entry.inputs
        if inputs is None:
            yield v.finding(
                INPUT_VARIABLE_OUTSIDE_VSCODE,
                v.at(field, key, text),
                ref=text,
                field=label,
                host=host.label,
                advice=_syntax_advice(v, "input", ident),
            )
        elif ident not in inputs:
            fallback = f'add {{"type": "promptString", "id": "{ident}", "password": true}} to `inputs`'
            suggestion = did_you_mean(ident, inputs, fallback)
            where = v.at(field, key, text)
            yield v.finding(UNDEFINED_INPUT_VARIABLE, where, ref=text, field=label, suggestion=suggestion)
        return
    if shell_args and not match.group("gh") and not match.group("env"):
        return  # the shell expands `$VAR` and `${VAR}` itself
    syntax = "gh" if match.group("gh") else "env" if match.group("env") else "bare" if match.group("bare") else ""
    if not syntax:
        syntax = "default" if match.group("default") is not None else "braced"
    name = match.group("gh") or match.group("env") or match.group("bare") or match.group("braced")
    if _expands(v, syntax, name):
        return
    yield v.finding(
        UNEXPANDED_VARIABLE,
        v.at(field, key, text),
        ref=text,
        field=label,
        host=host.label,
        advice=_syntax_advice(v, syntax, name),
    )


def _expands(v: ServerValues, syntax: str, name: str) -> bool:
    """Whether the entry's host expands this reference syntax (formats research §2.7)."""
    host = v.entry.host
    if host == Reader.VSCODE:
        return syntax == "env" or (syntax == "braced" and name in VSCODE_PREDEFINED)
    if host == Reader.AGENT:
        if syntax == "gh":
            return name.startswith(("secrets.", "vars."))
        return syntax in ("bare", "braced", "default")
    if host == Reader.COPILOT:
        return syntax in ("bare", "braced", "default")
    if host == Reader.SHARED:
        return syntax in ("braced", "default")
    return syntax != "gh"


def _syntax_advice(v: ServerValues, syntax: str, name: str) -> str:
    var = re.sub(r"\W", "_", name.rsplit(".", 1)[-1])
    host = v.entry.host
    if syntax == "input":
        var = var.upper()
    if host == Reader.VSCODE:
        return f"write `${{env:{var}}}`, or define an input and write `${{input:{var.lower()}}}`"
    if syntax == "bare":  # a bare COPILOT_MCP_* value, or `$VAR` where only `${VAR}` works
        return f"write `${{{var}}}`" if host == Reader.SHARED else f"write `${var}`"
    if host == Reader.AGENT and syntax == "gh":
        return f"only `secrets.` and `vars.` contexts are expanded: use e.g. `${{{{ vars.{var.upper()} }}}}`"
    secret = var if var.startswith("COPILOT_MCP_") else f"COPILOT_MCP_{var}"
    if host == Reader.AGENT:
        return f"write `${{{{ secrets.{secret} }}}}` (a Copilot environment secret) or `${{{var}}}`"
    if host == Reader.COPILOT:
        return f"write `${secret}` (a Copilot environment secret) or `${{{var}}}`"
    return f"write `${{{var}}}`"


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for entry in entries(ctx):
        yield from _variables(ServerValues(entry, src))


UNDEFINED_INPUT_VARIABLE = Rule(
    code="MCP006",
    name="undefined-input-variable",
    severity="error",
    check=check,
    message="`{ref}` in `{field}` of server `{server}` names no entry of `inputs`",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a `${input:id}` reference in `.vscode/mcp.json` whose `id` is not declared in the file's
`inputs` list.

## Why is this bad?
VS Code cannot prompt for the value: the server fails to start, or receives the literal text
`${input:id}` as its token.

## Example
```json
{"inputs": [{"type": "promptString", "id": "api-key", "password": true}],
 "servers": {"docs": {"type": "http", "url": "https://example.com/mcp",
   "headers": {"Authorization": "Bearer ${input:apikey}"}}}}
```
Use instead:
```json
{"inputs": [{"type": "promptString", "id": "api-key", "password": true}],
 "servers": {"docs": {"type": "http", "url": "https://example.com/mcp",
   "headers": {"Authorization": "Bearer ${input:api-key}"}}}}
```

## Fix
The hint names the closest declared id, or the `inputs` entry to add.

## References
VS Code MCP configuration reference, input variables.
""",
)


INPUT_VARIABLE_OUTSIDE_VSCODE = Rule(
    code="MCP007",
    name="input-variable-outside-vscode",
    severity="warning",
    check=check,
    message="`{ref}` in `{field}` of server `{server}` is a VS Code input; {host} do not prompt for inputs",
    hint="{advice}",
    doc="""\
## What it does
Flags `${input:id}` in an agent's `mcp-servers` or an `mcpServers` file (`.mcp.json`,
`.github/mcp.json`, `mcp-config.json`).

## Why is this bad?
Only VS Code has input variables. The Copilot cloud agent and CLI and Claude Code pass the text
through unchanged, so the server receives `${input:id}` as its credential, and VS Code does not forward
servers that need inputs to Copilot sessions.

## Example
```yaml
mcp-servers:
  imaging:
    type: http
    url: https://example.com/mcp
    headers: {x-api-key: "${input:imaging-key}"}
```
Use instead:
```yaml
    headers: {x-api-key: "${{ secrets.COPILOT_MCP_IMAGING_KEY }}"}
```

## Fix
Reference an environment variable or secret in the host's syntax (the hint gives it).

## References
Formats research §2.7, interpolation matrix; VS Code MCP configuration ("servers needing inputs are not
forwarded").
""",
)


UNEXPANDED_VARIABLE = Rule(
    code="MCP008",
    name="unexpanded-variable-syntax",
    severity="warning",
    check=check,
    message="`{ref}` in `{field}` of server `{server}` is not expanded by {host}",
    hint="{advice}",
    doc="""\
## What it does
Flags a variable reference written in a syntax that the host reading the file does not expand.
Per file:
- `.vscode/mcp.json`: `$VAR`, `${VAR:-default}`, `${{ ... }}`, and `${VAR}` unless `VAR` is a
  predefined variable (`workspaceFolder`, `userHome`, ...): VS Code wants `${env:VAR}`;
- agent `mcp-servers`: `${env:VAR}`, and `${{ ... }}` contexts other than `secrets.` and `vars.`;
- `mcp-config.json` and `.github/mcp.json` (Copilot): `${env:VAR}` and `${{ ... }}`;
- `.mcp.json` (Claude Code and the Copilot CLI): `$VAR` (Claude Code expands only `${VAR}`),
  `${env:VAR}` and `${{ ... }}`;
- any file but quiver's own: an `env` or `headers` value that is a bare `COPILOT_MCP_*` name without `$`.

`$VAR` and `${VAR}` in the `args` of a shell command (`bash -c ...`) are left to the shell.

## Why is this bad?
The server receives the reference text itself: authentication fails with a confusing error, or a
literal `${env:TOKEN}` ends up in a request.

## Example
```yaml
mcp-servers:
  docs:
    type: http
    url: https://example.com/mcp
    headers: {Authorization: "Bearer ${env:DOCS_TOKEN}"}
```
Use instead:
```yaml
    headers: {Authorization: "Bearer ${{ secrets.COPILOT_MCP_DOCS_TOKEN }}"}
```

## Fix
Rewrite the reference in the host's syntax (the hint gives it). Older GitHub docs accepted a bare
`COPILOT_MCP_*` name as an `env` value; current docs use `$COPILOT_MCP_*`.

## References
Formats research §2.7 (interpolation matrix); GitHub Docs, extending the cloud agent with MCP;
VS Code variables reference; Claude Code MCP docs (environment variable expansion).
""",
)


RULES: tuple[Rule, ...] = (UNDEFINED_INPUT_VARIABLE, INPUT_VARIABLE_OUTSIDE_VSCODE, UNEXPANDED_VARIABLE)
