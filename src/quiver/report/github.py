"""`--format github`: one GitHub Actions workflow command per finding, shown as an annotation on the diff.

    ::error file=.mcp.json,line=3,col=5,title=MCP011 unknown-server::server `x` ... (hint)

`error`, `warning` and `notice` follow the severity. `file=` is relative to the repository root (GitHub
resolves it from there), also when the project is a subdirectory (`-C sub/dir`). With `ctx.changed_lines`
(lint `--changed-only`) only findings that touch a changed line are printed; a finding on line 0 is kept
when its file changed at all, and one with no file is dropped (it cannot be placed on the diff; the exit
code still counts it, see `changes.in_scope`).

GitHub keeps at most ANNOTATION_CAP annotations of each kind per step and drops the rest silently; when
that happens a plain log line (not a command) says how many were not annotated and where to read them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from quiver.model import Finding
from quiver.report._repo import repository_prefix
from quiver.report.changes import on_changed
from quiver.report.context import ReportContext

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
ANNOTATION_CAP = 10  # GitHub shows this many annotations of each kind per step


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    changed = ctx.changed_lines
    shown = findings if changed is None else [f for f in findings if on_changed(f, changed)]
    prefix = repository_prefix(ctx.root)
    return "".join(command(f, prefix) + "\n" for f in shown) + cap_note(shown)


def cap_note(shown: Sequence[Finding]) -> str:
    """The log line that reports annotations GitHub will drop (over ANNOTATION_CAP of a kind), or ""."""
    kinds = Counter(COMMANDS[f.severity] for f in shown)
    dropped = {kind: n - ANNOTATION_CAP for kind, n in kinds.items() if n > ANNOTATION_CAP}
    if not dropped:
        return ""
    parts = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in sorted(dropped.items()))
    return (
        f"quiver: {parts} not annotated: GitHub shows at most {ANNOTATION_CAP} annotations of each kind"
        " per step; the step summary and the SARIF report list every finding\n"
    )


def command(finding: Finding, prefix: str = "") -> str:
    """The workflow command line for one finding (no newline); `prefix` is the project's repository path."""
    props: list[tuple[str, str]] = []
    loc = finding.location
    if loc is not None:
        props.append(("file", prefix + loc.file))
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
