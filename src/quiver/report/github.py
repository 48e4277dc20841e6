"""`--format github`: one GitHub Actions workflow command per finding, shown as an annotation on the diff.

    ::error file=.mcp.json,line=3,col=5,title=MCP011 unknown-server::server `x` ... (hint)

`error`, `warning` and `notice` follow the severity. With `ctx.changed_lines` (lint `--changed-only`) only
findings that touch a changed line are printed; a finding on line 0 is kept when its file changed at all, and one with
no file is dropped (it cannot be placed on the diff; the exit code still counts it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quiver.model import Finding
from quiver.report.render import ReportContext

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    shown = findings if ctx.changed_lines is None else [f for f in findings if _on_changed(f, ctx.changed_lines)]
    return "".join(command(f) + "\n" for f in shown)


def command(finding: Finding) -> str:
    """The workflow command line for one finding (no newline)."""
    props: list[tuple[str, str]] = []
    loc = finding.location
    if loc is not None:
        props.append(("file", loc.file))
        if loc.line > 0:
            props.append(("line", str(loc.line)))
            if loc.column > 0:
                props.append(("col", str(loc.column)))
            if loc.end_line >= loc.line:
                props.append(("endLine", str(loc.end_line)))
                if loc.end_column > 0:
                    props.append(("endColumn", str(loc.end_column)))
    props.append(("title", f"{finding.rule} {finding.name}"))
    text = finding.message if not finding.hint else f"{finding.message} ({finding.hint})"
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{COMMANDS[finding.severity]} {joined}::{escape_data(text)}"


def escape_data(value: str) -> str:
    """Escape a command's message as the Actions runner expects (`%`, CR, LF)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value: the data escapes plus `:` and `,`, which end a value."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _on_changed(finding: Finding, changed: Mapping[str, frozenset[int]]) -> bool:
    loc = finding.location
    if loc is None or loc.file not in changed:
        return False
    if loc.line <= 0:
        return True
    lines = changed[loc.file]
    return any(n in lines for n in range(loc.line, max(loc.line, loc.end_line) + 1))
