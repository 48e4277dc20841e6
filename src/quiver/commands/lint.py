"""`quiver lint`: run the linter, apply fixes or write a baseline, render the report, pick the exit code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quiver.commands.outcome import Outcome, failed
from quiver.commands.rule import LazyRuleTable
from quiver.errors import QuiverError, UsageError
from quiver.findings.severity import at_or_above
from quiver.lint.run import run as lint
from quiver.project import Project
from quiver.report.context import ReportContext
from quiver.report.render import render
from quiver.sources.agents import AGENT_GLOBS
from quiver.sources.baseline import render_baseline
from quiver.sources.files import write_output
from quiver.sources.mcp_config import CONFIG_FILES
from quiver.sources.skills import SKILL_DIRS

AGENT_PATTERNS = (*(glob for glob, _ in AGENT_GLOBS), "*.agent.md")


@dataclass(frozen=True, slots=True)
class LintOptions:
    root: Path
    paths: tuple[str, ...] = ()  # only these files and directories; none: the whole project
    select: tuple[str, ...] = ()  # rule ids, prefixes or names (comma lists already split)
    ignore: tuple[str, ...] = ()
    fmt: str = "text"
    fail_on: str = "error"
    baseline: Path | None = None  # report only findings whose fingerprint is not in it
    update_baseline: bool = False  # write every current finding to `baseline` instead
    fix: bool = False
    changed_only: bool = False  # only findings on lines changed against `base`
    base: str | None = None
    output: Path | None = None  # the report to this file instead of stdout
    color: bool = False


def run(options: LintOptions) -> Outcome:
    """Lint (fixing first with `fix`), then the report and its exit code: 2 when an input file in scope could
    not be read (its QVR002 finding names it), 1 for a finding at or above `fail_on`, else 0."""
    o, root = options, options.root
    _check_paths(o.paths, o.baseline if not o.update_baseline else None)
    if o.update_baseline:
        return _update_baseline(o)
    from quiver.commands._progress import Progress

    with Progress("linting") as shown:
        linted = lint(
            root, select=o.select, ignore=o.ignore, baseline=o.baseline, paths=o.paths,
            on_loaded=lambda project: shown.relabel(f"linting {what_is_checked(project)}"),
        )  # fmt: skip
    fixed = 0
    if o.fix:
        from quiver.lint.fix import apply_fixes

        fixed = apply_fixes(root, linted.findings)
    messages = (f"fixed {fixed} finding(s)",) if fixed else ()
    changed = None
    try:
        if fixed:
            linted = lint(root, select=o.select, ignore=o.ignore, baseline=o.baseline, paths=o.paths)
        if o.changed_only:
            from quiver.report.changes import changed_lines

            changed = changed_lines(root, o.base)
    except QuiverError as exc:  # a bad --base: after saying what was fixed
        return failed(messages, exc)
    findings = linted.findings
    if changed is not None:
        from quiver.report.changes import in_scope

        findings = tuple(in_scope(findings, changed))
    ctx = ReportContext(
        tool="lint",
        rules=LazyRuleTable(),
        root=root,
        color=o.color,
        changed_lines=changed,
        summary={"suppressed": linted.suppressed, "baselined": linted.baselined},
        nothing=nothing_found(linted.project, root),
    )
    notes = tuple(
        f"note: {path}: not a file quiver reads (agent files, skills, MCP configs, the quiver config, the lock): "
        "nothing to check there"
        for path in linted.outside
    )
    code = 2 if linted.input_errors else 1 if at_or_above(findings, o.fail_on) else 0
    text = render(findings, o.fmt, ctx)  # with FORCE_COLOR, `color` keeps the colors when piped
    return Outcome(text, messages, notes, code, output=o.output, root=root, color=o.color)


def _update_baseline(options: LintOptions) -> Outcome:
    """`--update-baseline`: every current finding written to `--baseline`; exit 0."""
    if options.baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE", hint="name the file to write")
    linted = lint(options.root, select=options.select, ignore=options.ignore, paths=options.paths)
    write_output(options.baseline, render_baseline(linted.all_findings), root=options.root)
    return Outcome(messages=(f"wrote {len(linted.all_findings)} finding(s) to {options.baseline}",))


def nothing_found(project: Project, root: Path) -> str:
    """What a project without agent files, skills, MCP configs and a lock lacks (the report says it); ""
    otherwise."""
    if project.agents or project.skills or project.configs or project.lock is not None or project.errors:
        return ""
    return (
        f"no agent file ({', '.join(AGENT_PATTERNS)}), skill ({', '.join(f'{d}/*/SKILL.md' for d in SKILL_DIRS)}), "
        f"MCP config ({', '.join(CONFIG_FILES)}) or "
        f"`{project.config.lock}` in {root}"
    )


def what_is_checked(project: Project) -> str:
    """`3 agents, 2 skills, 2 MCP configs, the lock` or `nothing` (no agent file, skill, MCP config, config
    nor lock)."""
    parts = []
    counts = ((len(project.agents), "agent"), (len(project.skills), "skill"), (len(project.configs), "MCP config"))
    for count, noun in counts:
        if count:
            parts.append(f"{count} {noun}{'s' if count != 1 else ''}")
    if project.config.path:
        parts.append(f"`{project.config.path}`")
    if project.lock is not None:
        parts.append("the lock")
    return ", ".join(parts) or "nothing"


def _check_paths(paths: Sequence[str], baseline: Path | None) -> None:
    """A PATH or a --baseline that does not exist is a usage error, not an empty, passing run."""
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
