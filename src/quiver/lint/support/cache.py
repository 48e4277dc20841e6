"""Result caches for lint checks (shared helpers; no rules here).

`ToolCheckCache`: per-tool checks whose outcome depends only on the tool's definition (lint/tool/schema.py).
`ToolScanCache`: per tool, what the SEC text scan saw in its texts (lint/sec/tool_poisoning.py).
`cached_check`: whole-project checks reused while no input file changed (lint/route/).

Keyed by server, tool sha256 and quiver's version, stored in `.quiver/cache/` (git-ignored;
`QUIVER_NO_CACHE=1` stops writing it). A warm `quiver lint` then skips the JSON Schema meta-checks
and never imports jsonschema (0.1 s of start-up).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from quiver import __version__
from quiver.model import Finding, LockedTool, finding_from_json
from quiver.sources.files import MAX_LOCK_BYTES, read_bytes, write_cache

if TYPE_CHECKING:
    from quiver.lint.engine import LintContext

CACHE_FILE = ".quiver/cache/tool-checks.json"


class ToolCheckCache:
    def __init__(self, root: Path) -> None:
        self.path = root / CACHE_FILE
        self.dirty = False
        self.entries: dict[str, list[dict[str, str | None]]] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") == __version__:
                self.entries = data["entries"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.entries = {}

    def findings(self, tool: LockedTool, compute: Callable[[LockedTool], Iterable[Finding]]) -> list[Finding]:
        key = f"{tool.server}\x1f{tool.sha256}"
        cached = self.entries.get(key)
        if cached is None:
            found = list(compute(tool))
            self.entries[key] = [
                {"rule": f.rule, "name": f.name, "severity": f.severity, "message": f.message, "hint": f.hint}
                for f in found
            ]
            self.dirty = True
            return found
        return [
            Finding(
                rule=str(e["rule"]),
                name=str(e["name"]),
                severity=e["severity"],  # type: ignore[arg-type]
                message=str(e["message"]),
                hint=e["hint"],
                location=tool.location,
                server=tool.server,
                tool=tool.name,
            )
            for e in cached
        ]

    def save(self) -> None:
        if not self.dirty or os.environ.get("QUIVER_NO_CACHE"):
            return

        text = json.dumps({"version": __version__, "entries": self.entries}, sort_keys=True, separators=(",", ":"))
        try:
            write_cache(self.path, text + "\n")
        except OSError:
            return  # a cache that cannot be written only costs time


SCAN_CACHE_FILE = ".quiver/cache/tool-scans.json"


class ToolScanCache:
    """Per tool (server, sha256, quiver's version): whether its joined texts match an injection pattern or hold
    invisible characters, and the distinctive identifiers they mention (the cross-tool check's input, which
    also depends on the rest of the catalog, so the names are kept, not a verdict)."""

    def __init__(self, root: Path) -> None:
        self.path = root / SCAN_CACHE_FILE
        self.dirty = False
        self.entries: dict[str, list[object]] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") == __version__ and isinstance(data.get("entries"), dict):
                self.entries = data["entries"]
        except (OSError, ValueError, TypeError, AttributeError):
            self.entries = {}

    def scan(self, tool: LockedTool, compute: Callable[[], tuple[bool, list[str]]]) -> tuple[bool, list[str]]:
        key = f"{tool.server}\x1f{tool.sha256}"
        cached = self.entries.get(key)
        if isinstance(cached, list) and len(cached) == 2 and isinstance(cached[1], list):
            return bool(cached[0]), [str(n) for n in cached[1]]
        hit, names = compute()
        self.entries[key] = [int(hit), names]
        self.dirty = True
        return hit, names

    def save(self) -> None:
        if not self.dirty or os.environ.get("QUIVER_NO_CACHE"):
            return

        text = json.dumps({"version": __version__, "entries": self.entries}, sort_keys=True, separators=(",", ":"))
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            write_cache(self.path, text + "\n")
        self.dirty = False


PROJECT_CACHE_FILE = ".quiver/cache/project-checks.json"


def project_key(ctx: LintContext) -> str:
    """A digest of every input file of the project (config, MCP configs, lock, agents) and quiver's version."""

    cached = ctx.memo.get("project-key")
    if isinstance(cached, str):
        return cached
    project = ctx.project
    files = sorted(
        {
            *(a.path for a in project.agents),
            *(c.path for c in project.configs),
            project.config.lock,
            *(name for name in ("quiver.toml", "pyproject.toml") if (project.root / name).is_file()),
        }
    )
    digest = hashlib.sha256(__version__.encode())
    for rel in files:
        digest.update(rel.encode() + b"\0")
        try:
            digest.update(read_bytes(project.root / rel, limit=MAX_LOCK_BYTES))
        except OSError:
            digest.update(b"\1missing")
    key = digest.hexdigest()
    ctx.memo["project-key"] = key
    return key


def cached_project_findings(ctx: LintContext, name: str) -> list[Finding] | None:
    """The findings a whole-project check `name` stored for the project's current inputs, or None."""
    found = _project_cache(ctx).get(f"{name}:{project_key(ctx)}")
    return [finding_from_json(item) for item in found] if isinstance(found, list) else None


def has_project_findings(ctx: LintContext, name: str) -> bool:
    """Whether `cached_project_findings` has them (without building the findings)."""
    return isinstance(_project_cache(ctx).get(f"{name}:{project_key(ctx)}"), list)


def store_project_findings(ctx: LintContext, name: str, found: list[Finding]) -> None:
    """Keep `found` as check `name`'s findings for the current inputs (replacing its older entries); the file
    is written when the run's checks are done (`LintContext.finish`)."""
    if os.environ.get("QUIVER_NO_CACHE"):
        return

    data = _project_cache(ctx)
    kept = {k: v for k, v in data.items() if not k.startswith(f"{name}:")}
    kept[f"{name}:{project_key(ctx)}"] = [f.to_json() for f in found]
    ctx.memo[_PROJECT_CACHE_MEMO] = kept

    def write() -> None:  # once per run, when the checks are done: every check's entries in one write
        text = json.dumps(ctx.memo[_PROJECT_CACHE_MEMO], sort_keys=True, separators=(",", ":")) + "\n"
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            write_cache(ctx.project.root / PROJECT_CACHE_FILE, text)

    ctx.at_finish(_PROJECT_CACHE_MEMO, write)


_PROJECT_CACHE_MEMO = "project-cache"


def _project_cache(ctx: LintContext) -> dict[str, object]:
    cached = ctx.memo.get(_PROJECT_CACHE_MEMO)
    if isinstance(cached, dict):
        return cached
    try:
        data = json.loads((ctx.project.root / PROJECT_CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    ctx.memo[_PROJECT_CACHE_MEMO] = data
    return data


class ProjectCheck:
    """A whole-project check whose findings are reused while no input file changed (`cached_check`).

    Callable like any check; `name` keys its cache entries and `compute` is the check itself, which
    `lint/parallel.py` runs in a worker process. It keeps the check's module and name, so a rule's `check`
    still names the module that holds it."""

    def __init__(self, name: str, compute: Callable[[LintContext], Iterable[Finding]]) -> None:
        self.name = name
        self.compute = compute
        functools.update_wrapper(self, compute)

    def __call__(self, ctx: LintContext) -> list[Finding]:
        found = cached_project_findings(ctx, self.name)
        if found is None:
            found = list(self.compute(ctx))
            store_project_findings(ctx, self.name, found)
        return found


def cached_check(name: str, check: Callable[[LintContext], Iterable[Finding]]) -> ProjectCheck:
    """Wrap a whole-project check: its findings are reused while no input file changed."""
    return ProjectCheck(name, check)
