"""`quiver compile`: resolve every agent, write manifests and index.json (or check they are current)."""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from quiver.capabilities.overrides import Classifier
from quiver.commands.outcome import Outcome, failed
from quiver.compile import (
    CheckUnit,
    CheckUnits,
    Definitions,
    Policies,
    budget_of,
    build_index,
    build_manifest,
    index_entry,
    output_files,
    render_json,
)
from quiver.errors import ConfigError, QuiverError
from quiver.findings.order import sort_findings
from quiver.gc_pause import gc_paused
from quiver.host_exports import emit
from quiver.lint.agt.host_references import host_findings
from quiver.lint.agt.tool_references import reference_findings
from quiver.lint.agt.unverifiable_tool_references import unverified_findings
from quiver.lint.mcp.server_not_snapshotted import unsnapshotted_findings
from quiver.lint.mcp.unserved_tool_entries import unserved_findings
from quiver.model import JSON, Finding
from quiver.policy import policy_errors
from quiver.project import Project, load_project
from quiver.resolve import ResolvedAgent, resolve_project
from quiver.sources.agents import agent_id
from quiver.sources.capability_cache import CAPABILITY_CACHE_FILE, CapabilityCache
from quiver.sources.compile_state import CompileState, Report
from quiver.sources.files import inside, write_atomic
from quiver.sources.token_cache import TOKEN_CACHE_FILE, TokenCache
from quiver.sources.validated import VALIDATED_FILE, read_validated, write_validated

if TYPE_CHECKING:
    from quiver.commands._progress import Progress
    from quiver.commands._warm import Warm

CACHE_FILE = TOKEN_CACHE_FILE
CHECK_OUTPUT_ENV = "QUIVER_CHECK_OUTPUT"
NO_AGENTS = (
    "note: no agent files found (.github/agents/*.md, *.agent.md, .claude/agents/*.md, "
    ".github/chatmodes/*.chatmode.md, or `agents` in the quiver config)"
)


@dataclass(frozen=True, slots=True)
class CompileOptions:
    root: Path
    check: bool = False  # write nothing; exit 1 when a committed output is stale
    emit_hosts: tuple[str, ...] = ()
    out: str | None = None  # the output directory; None: `out` of the config
    quiet: bool = False  # no budget table
    fmt: str = "text"
    host: str | None = None


def run(options: CompileOptions) -> Outcome:
    """Build, report the problems on stderr, then write the outputs (with a budget table and what was
    written), or with `check` name the stale ones. Exit 2 for a broken input (nothing is written while a
    project-wide one is broken), 1 for a stale output or an error finding (a `tools` entry that resolves to
    nothing, as `lint --fail-on error`), else 0."""
    from quiver.commands import _warm
    from quiver.config import unknown_key_warnings
    from quiver.report.lines import stderr_lines

    root = options.root
    warm = _warm.start(root, options.out, options.emit_hosts, options.host)
    key = _warm.report_key(options.quiet, options.fmt)
    unchanged = warm.unchanged(None if options.check else key) if warm is not None else None
    if warm is not None and unchanged is not None:
        return replayed(unchanged, warm.inputs.out_dir, options.check)
    result = build(root, out=options.out, emit_hosts=options.emit_hosts, progress=True, host=options.host, warm=warm)
    out_dir = options.out or result.project.config.out
    messages = [*unknown_key_warnings(result.project.config), *stderr_lines(result.findings)]
    messages += [f"error: {error.one_line()}" for error in result.errors]
    if result.project.blocking:
        return Outcome(messages=tuple(messages), code=2)
    code = 2 if result.errors else 1 if any(f.severity == "error" for f in result.findings) else 0
    if options.check:
        stale = stale_outputs(root, result, out_dir)
        messages += [f"stale: {rel}" for rel in stale]
        if stale:
            messages.append(f"{len(stale)} manifest file(s) out of date: run `quiver compile` and commit")
            return Outcome(messages=tuple(messages), code=2 if result.errors else 1)
        messages.append(f"{len(result.outputs)} manifest file(s) up to date")
        return Outcome(messages=tuple(messages), code=code)
    try:
        done = write(root, result, out_dir)
    except QuiverError as exc:  # an unwritable output directory: after the problems already found
        return failed(messages, exc)
    before = tuple(messages)
    messages += [f"removed: {rel}" for rel in done.removed]
    text = ""
    no_agents = not result.resolved and not result.errors
    if no_agents:
        messages.append(NO_AGENTS)
    elif not options.quiet:
        text = budget_report(root, result.resolved, options.fmt)
    if warm is not None:
        agents = [r.agent for r in result.resolved]
        warm.record((*result.outputs, *result.kept), agents, result.entries, Report(key, before, text, no_agents, code))
    return Outcome(text, tuple(messages), (done.summary(out_dir),), code)


def replayed(state: CompileState, out_dir: str, check: bool) -> Outcome:
    """What a compile prints when its inputs and outputs are as the last one recorded: that run's problems
    and report, and that every output is current."""
    report = state.report
    if check:
        current = f"{len(state.outputs)} manifest file(s) up to date"
        return Outcome(messages=(*report.messages, current), code=report.code)
    messages = (*report.messages, *((NO_AGENTS,) if report.no_agents else ()))
    summary = Written((), tuple(state.outputs), ()).summary(out_dir)
    return Outcome(report.text, messages, (summary,), report.code)


def budget_report(root: Path, resolved: Sequence[ResolvedAgent], fmt: str) -> str:
    """The budget table (or its JSON) of the compiled agents, by agent id."""
    from quiver.report.budget import budget_json, budget_table, compile_rows, rows_of

    cache = TokenCache(root / CACHE_FILE)
    rows = [(r, budget_of(r, cache)) for r in sorted(resolved, key=lambda r: r.agent.id)]
    return budget_json(compile_rows(rows)) if fmt == "json" else budget_table(rows_of(rows))


@dataclass(frozen=True, slots=True)
class CompileResult:
    project: Project
    resolved: tuple[ResolvedAgent, ...]
    outputs: dict[str, bytes]  # project-relative path -> the UTF-8 bytes to write
    findings: tuple[Finding, ...]
    errors: tuple[QuiverError, ...]
    kept: frozenset[str] = frozenset()  # outputs not built: as the last compile left them (a warm compile)
    entries: Mapping[str, Mapping[str, JSON]] = field(default_factory=dict)  # agent id -> its index.json entry

    @property
    def files(self) -> set[str]:
        """Every output of the run: built or kept."""
        return {*self.outputs, *self.kept}


def build(
    root: Path,
    *,
    out: str | None = None,
    emit_hosts: Sequence[str] = (),
    progress: bool = False,
    host: str | None = None,
    warm: Warm | None = None,
) -> CompileResult:
    """Everything compile would write, in memory: nothing when a project-wide input is broken (with
    `progress`, a progress line on a terminal); `host` resolves every agent for that host (`--host`). With
    `warm`, an agent whose inputs and files are as the last compile left them is not built (`kept`)."""
    from quiver.commands._progress import Progress

    with Progress("compiling agents", enabled=progress) as shown, gc_paused():
        return _build(root, out, emit_hosts, shown, host, warm)


def _build(
    root: Path,
    out: str | None,
    emit_hosts: Sequence[str],
    progress: Progress,
    host: str | None = None,
    warm: Warm | None = None,
) -> CompileResult:
    project = load_project(root, collect=True, found=warm.inputs.found if warm is not None else None)
    bad_policy = tuple(policy_errors(project.config)) if not project.blocking else ()
    if out is None and not project.blocking and not inside(root, project.config.out):
        bad_policy += (outside_project(project, "out", "pass `--out DIR` on the command line to write there"),)
    if bad_policy:  # every bad policy key and value at once; the config is broken, so nothing is written
        project = replace(project, errors=(*project.errors, *bad_policy), blocking=(*project.blocking, *bad_policy))
    if project.blocking:
        return CompileResult(project, (), {}, (), project.errors)
    duplicates = {e.position.file for e in project.duplicates if e.position}
    if duplicates:  # the later file of each id is not compiled: its error says which file has the id
        first = tuple(a for a in project.agents if a.path not in duplicates)
        project = replace(project, agents=first, errors=(*project.errors, *project.duplicates))
    progress.total = len(project.agents)
    resolved = tuple(resolve_project(project, host))
    out_dir = out or project.config.out
    cache = TokenCache(root / CACHE_FILE)
    outputs: dict[str, bytes] = {}
    kept: set[str] = set()  # outputs a warm compile did not build
    entries: dict[str, Mapping[str, JSON]] = {}
    policies: Policies = {}
    definitions: Definitions = {}
    labels = CapabilityCache(root / CAPABILITY_CACHE_FILE)
    classifier = Classifier(project.config, project.lock, project.servers, labels)
    checks = CheckUnits() if checking_output() else None
    for item in resolved:
        progress.advance()
        recorded = warm.kept(item.agent) if warm is not None else None
        if recorded is not None:
            kept.update(output_files(out_dir, item.agent.id, emit_hosts))
            entries[item.agent.id] = recorded.index
            continue
        manifest = build_manifest(item, project.config, cache, project.lock, policies, definitions, classifier)
        files = output_files(out_dir, item.agent.id, emit_hosts)
        outputs[files[0]] = render_json(manifest)
        for rel, api in zip(files[1:], emit_hosts, strict=True):
            outputs[rel] = render_json(emit(manifest, api, cache))
        if checks is not None:  # the tools are rendered: the checks keep the skeleton only
            checks.manifest(item.agent.id, manifest)
        entries[item.agent.id] = index_entry(item.agent.id, manifest)
    index = build_index(entries, out_dir)
    if checks is not None:
        checks.index(index)
        _check_new(root, checks.units)
    if entries or not project.errors:
        outputs[f"{out_dir}/index.json"] = render_json(index)
    cache.save()
    classifier.save()
    findings = [*unsnapshotted_findings(resolved), *unserved_findings(project)]
    for item in resolved:
        findings.extend(reference_findings(item))
        findings.extend(host_findings(item))
        findings.extend(unverified_findings(item))
    findings.extend(input_findings(project, resolved))
    findings = sort_findings(findings)
    return CompileResult(project, resolved, outputs, tuple(findings), project.errors, frozenset(kept), entries)


# Lint's error rules about the shape of what quiver reads (a value of the wrong type, a server that cannot
# start as written): compile reports each of them too, as lint does, and exits 1 after writing.
INPUT_RULES = ("AGT003", "AGT014", "MCP001", "MCP002", "MCP003", "MCP015", "MCP016", "MCP019")


def input_findings(project: Project, resolved: Sequence[ResolvedAgent]) -> list[Finding]:
    """The error findings of `INPUT_RULES`, after the project's selection, severities, per-file ignores and
    suppression comments, as `quiver lint` keeps them."""
    from quiver.findings import suppress
    from quiver.findings.select import per_file_ignored, selected_codes
    from quiver.findings.severity import apply_severity
    from quiver.lint.engine import LintContext, run_checks
    from quiver.lint.registry import lint_codes, rules_with
    from quiver.lint.run import suppressions

    config = project.config
    chosen = selected_codes(lint_codes(), config.select, config.ignore) & set(INPUT_RULES)
    ctx = LintContext(project, tuple(resolved))
    raw = [f for f in run_checks(ctx, rules_with(chosen)) if f.rule in chosen]
    raw = apply_severity([f for f in raw if not per_file_ignored(f, config.per_file_ignores)], config.severity)
    kept, _, _ = suppress.apply(raw, suppressions(project))
    return [f for f in kept if f.severity == "error"]


def outside_project(project: Project, key: str, then: str) -> ConfigError:
    """A path the committed config names (`out`, `lock`) that leads out of the project, symlinks followed:
    a cloned repository does not choose where quiver writes."""
    value = str(getattr(project.config, key))
    return ConfigError(
        f"`{key}` = {value!r} leads outside the project ({project.root.resolve()}), "
        "so quiver does not write there on the config's word",
        position=project.config.position(key),
        hint=then,
    )


def checking_output() -> bool:
    """Whether this run checks its output against the schemas: with `QUIVER_CHECK_OUTPUT=1` (the test suite
    sets it). A failed check is a bug of quiver's (exit 3); users do not pay for it on every compile."""
    return os.environ.get(CHECK_OUTPUT_ENV) == "1"


def _check_new(root: Path, units: dict[str, CheckUnit]) -> None:
    """`_check_schema` for the units (`CheckUnits`) whose exact JSON was not checked before by this quiver and
    these schemas (`.quiver/cache/validated.json`). When none is new, jsonschema is not even imported."""
    from quiver import __version__
    from quiver.validation import schemas_sha

    key = f"{__version__}:{schemas_sha()}"
    path = root / VALIDATED_FILE
    done = read_validated(path, key)
    new = [unit for sha, unit in units.items() if sha not in done]
    if new:
        _check_schema(new)
        write_validated(path, key, units)


def _check_schema(units: Sequence[CheckUnit]) -> None:
    """quiver validates what it writes: output that breaks its schema is a bug (exit 3), not output.

    Full validation of 1,000 large manifests took 40 s; a manifest without its tools takes about 0.4 ms.
    """
    from quiver.validation import validate

    problems = [f"{unit.label}: {p}" for unit in units for p in validate(unit.document, unit.schema)]
    if problems:
        raise RuntimeError("compiled output breaks its schema:\n" + "\n".join(problems[:20]))


def previous_outputs(root: Path, out_dir: str) -> set[str]:
    """Files a previous compile wrote, according to its index.json."""
    index = root / out_dir / "index.json"
    if not index.is_file():
        return set()
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
        agents = [a["id"] for a in data.get("agents", [])]
    except (ValueError, KeyError, TypeError, AttributeError):
        return set()
    found = set()
    for ident in agents:
        for suffix in (".json", ".anthropic.json", ".openai.json"):
            rel = f"{out_dir}/{ident}{suffix}"
            if (root / rel).is_file():
                found.add(rel)
    return found


def stale_outputs(root: Path, result: CompileResult, out_dir: str) -> list[str]:
    """Outputs whose file differs from what compile would write now, or that it would remove."""
    stale = []
    for rel, data in sorted(result.outputs.items()):
        path = root / rel
        if not path.is_file() or not _same_text(path, data):
            stale.append(rel)
    broken = _failed_ids(result)
    files = result.files
    for rel in sorted(previous_outputs(root, out_dir) - files):
        if _output_agent(rel) not in broken and not _other_host_export(rel, files):
            stale.append(rel)
    return sorted(stale)


def _same_text(path: Path, data: bytes) -> bool:
    """Whether the file holds this text: the same bytes, or the same text once its line ends are read as
    `\n` (a checkout with CRLF line ends is not stale)."""
    raw = path.read_bytes()
    if raw == data:
        return True
    if b"\r" not in raw:
        return False
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n") == data.decode("utf-8")


def _other_host_export(rel: str, outputs: Collection[str]) -> bool:
    """A host export (`a.openai.json`) of an agent still compiled, for a host this run does not `--emit`:
    compile without `--emit openai` neither judges it nor removes it (only `--emit openai` rewrites it)."""
    name = rel.rsplit("/", 1)[-1]
    host = next((h for h in (".anthropic.json", ".openai.json") if name.endswith(h)), None)
    if host is None:
        return False
    manifest = rel[: -len(host)] + ".json"
    return manifest in outputs and not any(o.endswith(host) for o in outputs)


def _failed_ids(result: CompileResult) -> set[str]:
    return {agent_id(e.position.file) for e in result.errors if e.position}


def _output_agent(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    for suffix in (".anthropic.json", ".openai.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


@dataclass(frozen=True, slots=True)
class Written:
    """What `write` did: the outputs it wrote (new or changed), those already current, the files it removed."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]

    def summary(self, out_dir: str) -> str:
        if not self.written:
            return f"{out_dir}/ is up to date: {len(self.unchanged)} file(s) unchanged, none written"
        unchanged = f" ({len(self.unchanged)} unchanged)" if self.unchanged else ""
        return f"wrote {len(self.written)} file(s) to {out_dir}/{unchanged}"


def write(root: Path, result: CompileResult, out_dir: str) -> Written:
    """Write every output that is new or changed, atomically; remove manifests of agents that no longer exist."""
    old = previous_outputs(root, out_dir)
    written, unchanged = [], sorted(result.kept)
    for rel, data in sorted(result.outputs.items()):
        path = root / rel
        if path.is_file() and _same_text(path, data):
            unchanged.append(rel)
            continue
        write_atomic(path, data)
        written.append(rel)
    failed_ids = _failed_ids(result)
    removed = []
    files = result.files
    for rel in sorted(old - files):
        if _output_agent(rel) in failed_ids or _other_host_export(rel, files):
            continue  # keep the last good manifest of an agent that failed to read, and other hosts' exports
        (root / rel).unlink(missing_ok=True)
        removed.append(rel)
    return Written(tuple(written), tuple(unchanged), tuple(removed))
