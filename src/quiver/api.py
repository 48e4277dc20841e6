"""quiver from Python: load a project, compile, lint, diff, search and explain, without the CLI.

Every function takes the project root (`-C` of the CLI) and returns plain data: frozen dataclasses, and the
same JSON values the CLI's `--format json` prints (their schemas are `quiver schema NAME`). Nothing is
printed, and nothing is written but quiver's own git-ignored caches (`.quiver/cache/`); a user's mistake
raises `QuiverError` (its `one_line()` is what the CLI would print before exiting 2). docs/api.md shows
each function at work.

Stability: the names in `__all__` are the supported Python surface, versioned like the CLI (see the
README's "Versions and releases": before 1.0 a minor release may change them, a patch release does not).
Every other module of the package is internal and may change in any release.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quiver.errors import QuiverError
from quiver.model import Finding, Location
from quiver.project import Project

__all__ = [
    "Compiled",
    "Finding",
    "Location",
    "Project",
    "QuiverError",
    "SearchResult",
    "compile_project",
    "diff",
    "explain",
    "lint",
    "load_project",
    "search",
]


@dataclass(frozen=True, slots=True)
class Compiled:
    """What `quiver compile` would write, in memory."""

    manifests: Mapping[str, Mapping[str, Any]]  # agent id -> its manifest (schema `manifest`)
    index: Mapping[str, Any]  # `index.json` (schema `index`)
    exports: Mapping[str, Mapping[str, Any]]  # `<agent>.<host>.json` -> the host export (schema `emit`)
    findings: tuple[Finding, ...]  # what compile reports (unresolved `tools` entries, info findings)
    errors: tuple[str, ...]  # agent files that could not be read, one line each (their agents are skipped)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One ranked tool, as `quiver search --format json` gives it."""

    server: str
    tool: str
    score: float
    matched: tuple[str, ...]
    description: str


def load_project(root: str | Path = ".") -> Project:
    """Read the project at `root`: its config, agent files, MCP configs and lock. Raises `QuiverError` when
    a project-wide file (config, MCP config, lock) cannot be read."""
    from quiver.project import load_project as load

    return load(Path(root))


def compile_project(root: str | Path = ".", *, emit: Sequence[str] = ()) -> Compiled:
    """Resolve every agent of the project at `root`; `emit` adds host exports (`anthropic`, `openai`)."""

    from quiver.commands.compile import build

    result = build(Path(root), emit_hosts=tuple(emit))
    if result.project.blocking:
        raise result.project.blocking[0]
    manifests: dict[str, Mapping[str, Any]] = {}
    exports: dict[str, Mapping[str, Any]] = {}
    index: Mapping[str, Any] = {}
    for rel, data in sorted(result.outputs.items()):
        name = rel.rsplit("/", 1)[-1]
        value = json.loads(data)
        if name == "index.json":
            index = value
        elif isinstance(value.get("agent"), dict):
            manifests[str(value["agent"]["id"])] = value
        else:  # a host export: `{"agent": ID, "host": HOST, "tools": [...]}`
            exports[name] = value
    errors = tuple(e.one_line() for e in result.errors)
    return Compiled(manifests, index, exports, tuple(result.findings), errors)


def lint(
    root: str | Path = ".", *, select: Sequence[str] = (), ignore: Sequence[str] = (), paths: Sequence[str] = ()
) -> tuple[Finding, ...]:
    """The findings `quiver lint` reports for the project at `root` (config selection, severities,
    suppressions applied), sorted. A file that cannot be read is a QVR002 finding, as in the CLI."""
    from quiver.lint.run import run

    return run(Path(root), select=select, ignore=ignore, paths=paths).findings


def diff(
    base: str | None = None, head: str | None = None, *, root: str | Path = ".", server: str | None = None
) -> tuple[Finding, ...]:
    """The contract findings of `quiver diff BASE HEAD` (each side a git ref, a lock file, a tools/list JSON
    or a snapshot directory; `base` None: the merge-base with the default branch; `head` None: the working
    tree), with the project's severities and `.quiver/contract-ignore.yaml` applied."""
    from quiver.commands.diff import compare, contract_overrides, contract_table
    from quiver.config import load_config
    from quiver.contract.sides import default_base

    project = Path(root)
    config = load_config(project)
    overrides = contract_overrides(dict(config.severity), contract_table())
    base_spec = base if base is not None else default_base(project)
    _, _, (kept, _) = compare(project, base_spec, head, server, lock=config.lock, overrides=overrides)
    return tuple(kept)


def search(
    query: str, *, root: str | Path = ".", agent: str | None = None, limit: int = 5, lexical: bool = False
) -> list[SearchResult]:
    """Rank the project's tools (or `agent`'s) for `query`, as the gateway's `search_tools` does."""

    from quiver.commands.search import search_tools

    rows = json.loads(search_tools(Path(root), query, agent, limit, "json", lexical=lexical))
    return [
        SearchResult(r["server"], r["tool"], float(r["score"]), tuple(r["matched"]), r["description"]) for r in rows
    ]


def explain(agent: str, tool: str | None = None, *, root: str | Path = ".") -> dict[str, Any]:
    """Why each of `agent`'s tools (or only `tool`) is preloaded or deferred: `quiver explain --format json`."""

    from quiver.commands.explain import explain_agent

    value: dict[str, Any] = json.loads(explain_agent(Path(root), agent, tool, "json"))
    return value
