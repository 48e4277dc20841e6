"""`quiver compile`: resolve every agent, write manifests and index.json (or check they are current)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from quiver.compile import CheckUnit, CheckUnits, Policies, build_index, build_manifest, manifest_file, render_json
from quiver.errors import QuiverError
from quiver.findings.order import sort_findings
from quiver.gc_pause import gc_paused
from quiver.host_exports import emit
from quiver.lint.agt.host_references import host_findings
from quiver.lint.agt.tool_references import reference_findings
from quiver.lint.agt.unverifiable_tool_references import unverified_findings
from quiver.lint.mcp.server_not_snapshotted import unsnapshotted_findings
from quiver.lint.mcp.unserved_tool_entries import unserved_findings
from quiver.model import Finding
from quiver.policy import policy_errors
from quiver.project import Project, load_project
from quiver.resolve import ResolvedAgent, resolve_project
from quiver.sources.agents import agent_id
from quiver.sources.files import write_atomic
from quiver.sources.token_cache import TOKEN_CACHE_FILE, TokenCache
from quiver.sources.validated import VALIDATED_FILE, read_validated, write_validated

if TYPE_CHECKING:
    from quiver.commands._progress import Progress

CACHE_FILE = TOKEN_CACHE_FILE


@dataclass(frozen=True, slots=True)
class CompileResult:
    project: Project
    resolved: tuple[ResolvedAgent, ...]
    outputs: dict[str, bytes]  # project-relative path -> the UTF-8 bytes to write
    findings: tuple[Finding, ...]
    errors: tuple[QuiverError, ...]


def build(
    root: Path,
    *,
    out: str | None = None,
    emit_hosts: Sequence[str] = (),
    progress: bool = False,
    host: str | None = None,
) -> CompileResult:
    """Everything compile would write, in memory: nothing when a project-wide input is broken (with
    `progress`, a progress line on a terminal); `host` resolves every agent for that host (`--host`)."""
    from quiver.commands._progress import Progress

    with Progress("compiling agents", enabled=progress) as shown, gc_paused():
        return _build(root, out, emit_hosts, shown, host)


def _build(
    root: Path, out: str | None, emit_hosts: Sequence[str], progress: Progress, host: str | None = None
) -> CompileResult:
    project = load_project(root, collect=True)
    bad_policy = tuple(policy_errors(project.config)) if not project.blocking else ()
    if bad_policy:  # every bad policy key and value at once; the config is broken, so nothing is written
        project = replace(project, errors=(*project.errors, *bad_policy), blocking=(*project.blocking, *bad_policy))
    if project.blocking:
        return CompileResult(project, (), {}, (), project.errors)
    duplicates = {e.position.file for e in project.duplicates if e.position}
    if duplicates:  # the later file of each id is not compiled: its error says which file has the id
        kept = tuple(a for a in project.agents if a.path not in duplicates)
        project = replace(project, agents=kept, errors=(*project.errors, *project.duplicates))
    progress.total = len(project.agents)
    resolved = tuple(resolve_project(project, host))
    out_dir = out or project.config.out
    cache = TokenCache(root / CACHE_FILE)
    outputs: dict[str, bytes] = {}
    manifests = {}
    policies: Policies = {}
    checks = CheckUnits()
    for item in resolved:
        progress.advance()
        manifest = build_manifest(item, project.config, cache, project.lock, policies)
        outputs[f"{out_dir}/{manifest_file(item.agent.id)}"] = render_json(manifest)
        for api in emit_hosts:
            outputs[f"{out_dir}/{manifest_file(item.agent.id, f'.{api}.json')}"] = render_json(
                emit(manifest, api, cache)
            )
        manifests[item.agent.id] = checks.manifest(item.agent.id, manifest)  # the tools are rendered: let go
    index = build_index(manifests, out_dir)
    checks.index(index)
    _check_new(root, checks.units)
    if manifests or not project.errors:
        outputs[f"{out_dir}/index.json"] = render_json(index)
    cache.save()
    findings = [*unsnapshotted_findings(resolved), *unserved_findings(project)]
    for item in resolved:
        findings.extend(reference_findings(item))
        findings.extend(host_findings(item))
        findings.extend(unverified_findings(item))
    return CompileResult(project, resolved, outputs, tuple(sort_findings(findings)), project.errors)


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
    for rel in sorted(previous_outputs(root, out_dir) - set(result.outputs)):
        if _output_agent(rel) not in broken and not _other_host_export(rel, result.outputs):
            stale.append(rel)
    return stale


def _same_text(path: Path, data: bytes) -> bool:
    """Whether the file holds this text: the same bytes, or the same text once its line ends are read as
    `\n` (a checkout with CRLF line ends is not stale)."""
    raw = path.read_bytes()
    if raw == data:
        return True
    if b"\r" not in raw:
        return False
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n") == data.decode("utf-8")


def _other_host_export(rel: str, outputs: dict[str, bytes]) -> bool:
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


def write(root: Path, result: CompileResult, out_dir: str) -> list[str]:
    """Write every output atomically; remove manifests of agents that no longer exist. Returns removed paths."""
    old = previous_outputs(root, out_dir)
    for rel, data in sorted(result.outputs.items()):
        path = root / rel
        if path.is_file() and _same_text(path, data):
            continue
        write_atomic(path, data)
    failed_ids = _failed_ids(result)
    removed = []
    for rel in sorted(old - set(result.outputs)):
        if _output_agent(rel) in failed_ids or _other_host_export(rel, result.outputs):
            continue  # keep the last good manifest of an agent that failed to read, and other hosts' exports
        (root / rel).unlink(missing_ok=True)
        removed.append(rel)
    return removed
