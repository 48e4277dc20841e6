"""The two sides of `quiver diff`: a git ref, the working tree, a lock file, a tools/list JSON or a
directory of per-tool snapshots, each read into tool catalogs (and, for projects, resolved agents)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from quiver.errors import InputError, UsageError
from quiver.model import JSON, Location
from quiver.resolve import ResolvedAgent

DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a diff: {server: {tool: MCP Tool}} plus where each tool is written."""

    label: str
    catalogs: Mapping[str, Mapping[str, Mapping[str, JSON]]]
    locations: Mapping[tuple[str, str], Location] = field(default_factory=dict)
    server_locations: Mapping[str, Location] = field(default_factory=dict)
    agents: tuple[ResolvedAgent, ...] = ()


def git(root: Path, *args: str, binary: bool = False) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise UsageError("git is not installed", hint="install git, or pass two lock files") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {' '.join(args[:2])} failed: {message[-1] if message else 'unknown error'}")
    return proc.stdout.decode("utf-8", "replace")


def is_git_ref(root: Path, ref: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def default_base(root: Path) -> str:
    """The merge-base of HEAD with the default branch (origin/HEAD, origin/main, main, ...)."""
    for branch in DEFAULT_BRANCHES:
        if is_git_ref(root, branch):
            return git(root, "merge-base", "HEAD", branch).strip()
    raise UsageError(
        "cannot find the default branch to diff against",
        hint="name the base explicitly: `quiver diff BASE` (a git ref, a lock file or a tools/list JSON)",
    )


def load_side(root: Path, spec: str | None, *, server: str, lock_rel: str) -> Side:
    """`spec` None = the working tree; else a path (lock, tools/list JSON, snapshot dir) or a git ref."""
    if spec is None:
        return _project_side(root, "working tree")
    path = Path(spec) if Path(spec).is_absolute() else Path.cwd() / spec
    if path.exists():
        return _path_side(path, spec, server)
    if is_git_ref(root, spec):
        return _git_side(root, spec, lock_rel)
    raise UsageError(
        f"`{spec}` is neither a file, a directory nor a git ref",
        hint="pass a git ref (main, HEAD~1), a quiver.lock.json, a tools/list JSON or a snapshot directory",
    )


def _path_side(path: Path, spec: str, server: str) -> Side:
    from quiver.sources._json import load_json_fast
    from quiver.sources.files import MAX_LOCK_BYTES, read_text
    from quiver.sources.imports import import_catalog
    from quiver.sources.lock import parse_lock

    if path.is_file():
        text = read_text(path, spec, limit=MAX_LOCK_BYTES)
        data = load_json_fast(text, spec)
        if isinstance(data, dict) and isinstance(data.get("servers"), dict):
            lock = parse_lock(text, spec)
            return _lock_side(spec, lock)
    catalog = import_catalog(path, server, spec)
    tools = {str(t["name"]): t for t in catalog.tools}
    return Side(spec, {server: tools})


def _lock_side(label: str, lock: object, agents: tuple[ResolvedAgent, ...] = ()) -> Side:
    from quiver.model import Lock

    assert isinstance(lock, Lock)
    catalogs = {name: {t.name: t.definition for t in s.tools} for name, s in lock.servers.items()}
    locations = {(name, t.name): t.location for name, s in lock.servers.items() for t in s.tools}
    server_locations = {name: s.location for name, s in lock.servers.items()}
    return Side(label, catalogs, locations, server_locations, agents)


def _project_side(root: Path, label: str) -> Side:
    from quiver.project import load_project
    from quiver.resolve import resolve_project

    project = load_project(root)
    if project.errors:
        raise project.errors[0]
    agents = tuple(resolve_project(project))
    if project.lock is None:
        raise InputError(
            f"{label}: no lock file ({project.config.lock})", hint="run `quiver snapshot` first, or pass lock files"
        )
    return _lock_side(label, project.lock, agents)


def _git_side(root: Path, ref: str, lock_rel: str) -> Side:
    """Read the lock file, configs and agent files at `ref` through git, without a checkout."""
    from quiver.sources.agents import AGENT_GLOBS
    from quiver.sources.mcp_config import CONFIG_FILES

    top = Path(git(root, "rev-parse", "--show-toplevel").strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    names = git(root, "ls-tree", "-r", "--name-only", "--full-tree", ref).splitlines()
    wanted = []
    for name in names:
        if not name.startswith(prefix):
            continue
        rel = name[len(prefix) :]
        if (
            rel in (lock_rel, "quiver.toml", "pyproject.toml", *CONFIG_FILES)
            or rel.endswith(".agent.md")
            or any(Path(rel).match(g) for g in AGENT_GLOBS)
        ):
            wanted.append(rel)
    if lock_rel not in wanted:
        raise InputError(f"`{ref}` has no {prefix}{lock_rel}", hint="diff against a ref that has a lock file")
    with tempfile.TemporaryDirectory(prefix="quiver-diff-") as tmp:
        for rel in wanted:
            target = Path(tmp) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(git(top, "show", f"{ref}:{prefix}{rel}"), encoding="utf-8")
        return _project_side(Path(tmp), ref)
