"""`quiver lint`: run the linter, apply fixes or write a baseline, render the report, pick the exit code."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from quiver.commands.rule import LazyRuleTable
from quiver.findings.severity import at_or_above
from quiver.lint.run import run as lint
from quiver.project import Project
from quiver.report.context import ReportContext
from quiver.report.render import render
from quiver.sources.agents import AGENT_GLOBS
from quiver.sources.baseline import render_baseline
from quiver.sources.files import write_output
from quiver.sources.mcp_config import CONFIG_FILES

AGENT_PATTERNS = (*(glob for glob, _ in AGENT_GLOBS), "*.agent.md")


def run(
    root: Path,
    *,
    paths: Sequence[str],
    select: Sequence[str],
    ignore: Sequence[str],
    fmt: str,
    fail_on: str,
    baseline: Path | None,
    update_baseline: bool,
    fix: bool,
    changed_only: bool,
    base: str | None,
    output: Path | None,
    color: bool,
) -> int:
    _check_paths(paths, baseline if not update_baseline else None)
    if update_baseline:
        if baseline is None:
            from quiver.errors import UsageError

            raise UsageError("--update-baseline needs --baseline FILE", hint="name the file to write")
        outcome = lint(root, select=select, ignore=ignore, paths=paths)
        write_output(baseline, render_baseline(outcome.all_findings), root=root)
        click.echo(f"wrote {len(outcome.all_findings)} finding(s) to {baseline}", err=True)
        return 0
    from quiver.commands._progress import Progress

    with Progress("linting") as shown:
        outcome = lint(
            root, select=select, ignore=ignore, baseline=baseline, paths=paths,
            on_loaded=lambda project: shown.relabel(f"linting {what_is_checked(project)}"),
        )  # fmt: skip
    if fix:
        from quiver.lint.fix import apply_fixes

        fixed = apply_fixes(root, outcome.findings)
        if fixed:
            click.echo(f"fixed {fixed} finding(s)", err=True)
            outcome = lint(root, select=select, ignore=ignore, baseline=baseline, paths=paths)
    changed = None
    findings = outcome.findings
    if changed_only:
        from quiver.report.changes import changed_lines, in_scope

        changed = changed_lines(root, base)
        findings = tuple(in_scope(findings, changed))
    ctx = ReportContext(
        tool="lint",
        rules=LazyRuleTable(),
        root=root,
        color=color,
        changed_lines=changed,
        summary={"suppressed": outcome.suppressed, "baselined": outcome.baselined},
        nothing=nothing_found(outcome.project, root),
    )
    text = render(findings, fmt, ctx)
    if output is not None:
        write_output(output, text, root=root)
    else:
        click.echo(text, nl=False, color=color)  # FORCE_COLOR keeps the colors when piped
    for path in outcome.outside:
        click.echo(
            f"note: {path}: not a file quiver reads (agent files, MCP configs, the quiver config, the lock): "
            "nothing to check there",
            err=True,
        )
    if outcome.input_errors:
        return 2  # an input file in scope could not be read: its QVR002 finding above names it
    return 1 if at_or_above(findings, fail_on) else 0


def nothing_found(project: Project, root: Path) -> str:
    """What a project without agent files, MCP configs and a lock lacks (the report says it); "" otherwise."""
    if project.agents or project.configs or project.lock is not None or project.errors:
        return ""
    return (
        f"no agent file ({', '.join(AGENT_PATTERNS)}), MCP config ({', '.join(CONFIG_FILES)}) or "
        f"`{project.config.lock}` in {root}"
    )


def what_is_checked(project: Project) -> str:
    """`3 agents, 2 MCP configs, the lock` or `nothing` (no agent file, MCP config, config nor lock)."""
    parts = []
    for count, noun in ((len(project.agents), "agent"), (len(project.configs), "MCP config")):
        if count:
            parts.append(f"{count} {noun}{'s' if count != 1 else ''}")
    if project.config.path:
        parts.append(f"`{project.config.path}`")
    if project.lock is not None:
        parts.append("the lock")
    return ", ".join(parts) or "nothing"


def _check_paths(paths: Sequence[str], baseline: Path | None) -> None:
    """A PATH or a --baseline that does not exist is a usage error, not an empty, passing run."""
    from quiver.errors import UsageError

    for path in paths:
        if not Path(path).exists():
            raise UsageError(
                f"{path}: no such file or directory", hint="name a file or directory of the project, or none for all"
            )
    if baseline is not None and not baseline.is_file():
        raise UsageError(
            f"{baseline}: no such baseline file",
            hint=f"create it with `quiver lint --baseline {baseline} --update-baseline`",
        )
