"""`quiver lint`: load, resolve, run every family, then select, override, suppress and baseline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from quiver.findings import suppress
from quiver.findings.baseline import split_baselined
from quiver.findings.catalog import resolve_id
from quiver.findings.order import sort_findings
from quiver.findings.select import per_file_ignored, selected_codes
from quiver.findings.severity import apply_severity
from quiver.gc_pause import gc_paused
from quiver.lint.engine import LintContext
from quiver.lint.parallel import run_checks
from quiver.lint.qvr.unused_suppression import UNUSED_SUPPRESSION
from quiver.lint.registry import lint_codes, rules_with
from quiver.model import Finding
from quiver.project import Project, load_project
from quiver.resolve import resolve_project
from quiver.sources.baseline import read_baseline
from quiver.sources.files import read_bytes

SUPPRESSIBLE_FILES = (".vscode/mcp.json",)


@dataclass(frozen=True, slots=True)
class LintOutcome:
    project: Project
    findings: tuple[Finding, ...]  # after selection, overrides, suppressions and baseline
    all_findings: tuple[Finding, ...]  # after selection and overrides only (what a baseline records)
    suppressed: int
    baselined: int
    input_errors: int = 0  # unreadable input files in scope: each is a QVR002 finding, and lint exits 2
    outside: tuple[str, ...] = ()  # PATHS that hold no file quiver reads


def input_files(project: Project) -> set[str]:
    """Every project-relative file lint reads: agent files, skills, MCP configs, the quiver config, the lock,
    and the files that could not be read."""
    files = {a.path for a in project.agents} | {s.path for s in project.skills} | {c.path for c in project.configs}
    files |= {e.position.file for e in project.errors if e.position}
    if project.config.path:
        files.add(project.config.path)
    if project.lock is not None or (project.root / project.config.lock).is_file():
        files.add(project.config.lock)
    return files


def suppressions(project: Project) -> list[suppress.Suppression]:
    files = {a.path for a in project.agents} | {s.path for s in project.skills}
    files |= {c.path for c in project.configs if c.path in SUPPRESSIBLE_FILES}
    files |= {e.position.file for e in project.errors if e.position and e.position.file.endswith(".md")}
    out: list[suppress.Suppression] = []
    for rel in sorted(files):
        try:
            text = read_bytes(project.root / rel).decode("utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(suppress.parse(rel, text.replace("\r\n", "\n")))
    return out


def _under(path: Path, paths: Sequence[str]) -> bool:
    """Whether `path` is one of `paths` or inside one of them (a directory argument)."""
    resolved = path.resolve()
    return any(resolved == (wanted := Path(p).resolve()) or wanted in resolved.parents for p in paths)


def run(
    root: Path,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    baseline: Path | None = None,
    paths: Sequence[str] = (),
    on_loaded: Callable[[Project], None] | None = None,
) -> LintOutcome:
    """`on_loaded(project)` is called once the project is read, before the checks (the progress line)."""
    with gc_paused():  # a fleet's resolutions and findings live until the report: collecting frees nothing
        return _run(root, select, ignore, baseline, paths, on_loaded)


def _run(
    root: Path,
    select: Sequence[str],
    ignore: Sequence[str],
    baseline: Path | None,
    paths: Sequence[str],
    on_loaded: Callable[[Project], None] | None = None,
) -> LintOutcome:
    project = load_project(root, collect=True)
    if on_loaded is not None:
        on_loaded(project)
    ctx = LintContext(project, tuple(resolve_project(project)))
    config = project.config
    chosen = selected_codes(lint_codes(), select or config.select, [*config.ignore, *ignore])
    raw = [f for f in run_checks(ctx, rules_with(chosen)) if f.rule in chosen]
    raw = [f for f in raw if not per_file_ignored(f, config.per_file_ignores)]
    raw = apply_severity(raw, config.severity)
    kept, unused, suppressed = suppress.apply(raw, suppressions(project))
    if UNUSED_SUPPRESSION.code in chosen:
        for s in unused:
            if not s.codes or any(resolve_id(c) in chosen or c[:3].isalpha() for c in s.codes):
                directive = f"ignore[{', '.join(s.codes)}]" if s.codes else "ignore"
                kept.append(UNUSED_SUPPRESSION.finding(location=s.location, directive=directive))
    everything = sort_findings(kept)
    errors = project.errors
    outside: tuple[str, ...] = ()
    if paths:
        # A broken project-wide file (config, MCP config, lock) changes what PATHS are checked against, so
        # it is shown (and fails the run) wherever it is; a broken agent file elsewhere is out of scope.
        wide = {e.position.file for e in project.blocking if e.position}
        everything = [
            f for f in everything if f.location and (_under(root / f.location.file, paths) or f.location.file in wide)
        ]
        errors = tuple(
            e for e in errors if not e.position or e.position.file in wide or _under(root / e.position.file, paths)
        )
        read = input_files(project)
        outside = tuple(p for p in paths if not any(_under(root / rel, (p,)) for rel in read))
    shown, baselined = everything, 0
    if baseline is not None and baseline.exists():
        shown, baselined = split_baselined(everything, read_baseline(baseline))
    return LintOutcome(project, tuple(shown), tuple(everything), suppressed, baselined, len(errors), outside)
