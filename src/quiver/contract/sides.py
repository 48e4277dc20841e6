"""The two sides of `quiver diff`: a git ref, the working tree, a lock file, a tools/list JSON or a
directory of per-tool snapshots, each read into tool catalogs (and, for projects, resolved agents)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from quiver.contract.git import SnapshotReader, git
from quiver.contract.places import ToolSource
from quiver.contract.positions import Pointer
from quiver.errors import InputError, UsageError
from quiver.model import JSON, Location

if TYPE_CHECKING:  # resolving a project is only needed for git and working-tree sides
    from quiver.resolve import ResolvedAgent

DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")


UNNAMED = ""  # the server key of a tools/list or snapshot side until `name_servers` names it


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a diff: {server: {tool: MCP Tool}} plus where each tool is written."""

    label: str
    catalogs: Mapping[str, Mapping[str, Mapping[str, JSON]]]
    locations: Mapping[tuple[str, str], Location] = field(default_factory=dict)
    server_locations: Mapping[str, Location] = field(default_factory=dict)
    agents: tuple[ResolvedAgent, ...] = ()
    file: Location | None = None  # the side's own file, line 1: where a finding with no place of its own goes
    missing_lock: str | None = None  # a project side without its lock file (an empty catalog): the lock's path
    sources: Mapping[tuple[str, str], ToolSource] = field(default_factory=dict)  # the file each tool is read from

    @property
    def unnamed(self) -> bool:
        return list(self.catalogs) == [UNNAMED]


def name_servers(old: Side, new: Side, server: str | None) -> tuple[Side, Side]:
    """Give a tools/list or snapshot side its server name: `--server`, else the other side's only server,
    else none (its findings name no server: a file name is no server name). A side holding several servers
    against one server's tools is cut down to that server; `--server` cuts every side down to it."""
    if server is None and old.unnamed and len(new.catalogs) == 1 and not new.unnamed:
        server = next(iter(new.catalogs))
    if server is None and new.unnamed and len(old.catalogs) == 1 and not old.unnamed:
        server = next(iter(old.catalogs))
    if server is None:
        for side, other in ((old, new), (new, old)):
            if side.unnamed and len(other.catalogs) > 1:
                servers = ", ".join(f"`{n}`" for n in sorted(other.catalogs))
                raise UsageError(
                    f"`{side.label}` is one server's tools; the other side `{other.label}` has servers {servers}",
                    hint="name the server this side belongs to: `--server NAME`",
                )
        return old, new
    locks = [side for side in (old, new) if side.catalogs and not side.unnamed]  # an empty lock has no names
    if locks and all(server not in side.catalogs for side in locks):
        servers = ", ".join(f"`{n}`" for n in sorted({n for side in locks for n in side.catalogs}))
        raise UsageError(
            f"no server `{server}` in `{locks[0].label}`" + (f" or `{locks[1].label}`" if len(locks) > 1 else ""),
            hint=f"pass `--server` one of: {servers}",
        )
    return _only(old, server), _only(new, server)


def _only(side: Side, server: str) -> Side:
    """The side cut down to `server` (an unnamed side becomes that server)."""
    tools = side.catalogs.get(UNNAMED if side.unnamed else server)
    return replace(
        side,
        catalogs={} if tools is None else {server: tools},
        locations={(server, tool): loc for (srv, tool), loc in side.locations.items() if srv in (server, UNNAMED)},
        sources={(server, tool): src for (srv, tool), src in side.sources.items() if srv in (server, UNNAMED)},
        server_locations={n: loc for n, loc in side.server_locations.items() if n == server},
    )


def is_git_ref(root: Path, ref: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def git_ref(root: Path, spec: str) -> str | None:
    """The git ref a side spec reads from: the spec itself, the REF of `REF:PATH`, else None (a file)."""
    if is_git_ref(root, spec):
        return spec
    ref, colon, _ = spec.partition(":")
    return ref if colon and ref and is_git_ref(root, ref) else None


def default_base(root: Path) -> str:
    """The merge-base of HEAD with the default branch (origin/HEAD, origin/main, main, ...)."""
    for branch in DEFAULT_BRANCHES:
        if is_git_ref(root, branch):
            return git(root, "merge-base", "HEAD", branch).strip()
    raise UsageError(
        "cannot find the default branch to diff against",
        hint="name the base explicitly: `quiver diff BASE` (a git ref, a lock file or a tools/list JSON)",
    )


def load_side(root: Path, spec: str | None, *, lock_rel: str) -> Side:
    """`spec` None = the working tree; else a path (lock, tools/list JSON, snapshot dir) or a git ref.

    A tools/list or snapshot side holds one unnamed server: `name_servers` names it."""
    if spec is None:
        return _project_side(root, "working tree")
    path = Path(spec) if Path(spec).is_absolute() else Path.cwd() / spec
    if path.exists():
        return _path_side(path, _shown(root, path, spec))
    if is_git_ref(root, spec):
        return _git_side(root, spec, lock_rel)
    ref, colon, rel = spec.partition(":")
    if colon and ref and is_git_ref(root, ref):
        return _ref_path_side(root, ref, rel, spec)
    raise UsageError(
        f"`{spec}` is neither a file, a directory, a git ref nor REF:PATH",
        hint="pass a git ref (main, HEAD~1), a quiver.lock.json, a tools/list JSON, a snapshot directory, "
        "or one of these at a ref (`main:pkg/__toolsnaps__`)",
    )


def _path_side(path: Path, spec: str) -> Side:
    from quiver.contract.catalog_files import read_snapshot_dir
    from quiver.sources.files import MAX_LOCK_BYTES, read_text

    if path.is_dir():
        catalog, files = read_snapshot_dir(path, spec)
        return Side(
            spec,
            {UNNAMED: catalog},
            {(UNNAMED, tool): Location(file, 1, 1) for tool, file in files.items()},
            sources={
                (UNNAMED, tool): ToolSource(file, path=path / Path(file).name, base=()) for tool, file in files.items()
            },
        )
    return _file_side(read_text(path, spec, limit=MAX_LOCK_BYTES), spec, path)


def _file_side(text: str, spec: str, path: Path | None) -> Side:
    """A lock or a tools/list JSON, read from `path`; None: read at a git ref, whose lines are not the
    working tree's (its tools keep the side's file, at line 1, or their lock entry)."""
    from quiver.contract.catalog_files import read_tools_list
    from quiver.sources._json import load_json_fast
    from quiver.sources.imports import tools_list
    from quiver.sources.lock import parse_lock

    data = load_json_fast(text, spec)
    if isinstance(data, dict) and isinstance(data.get("servers"), dict):
        side = _lock_side(spec, parse_lock(text, spec))
        if path is None:
            return side
        return replace(
            side, sources={key: ToolSource(spec, path=path, server=key[0], tool=key[1]) for key in side.locations}
        )
    catalog = read_tools_list(data, spec)
    _, listed = tools_list(data, spec)
    prefix: Pointer = ("result", "tools") if isinstance(data, dict) and "result" in data else ("tools",)
    if not isinstance(data, dict):
        prefix = ()
    bases: dict[str, Pointer] = {}
    for index, raw in enumerate(listed):  # keyed as read_tools_list keys them (a later duplicate wins)
        name = raw.get("name") if isinstance(raw, dict) else None
        bases[name if isinstance(name, str) and name else f"(tool #{index + 1})"] = (*prefix, index)
    sources = {} if path is None else {(UNNAMED, n): ToolSource(spec, path=path, base=b) for n, b in bases.items()}
    return Side(spec, {UNNAMED: catalog}, file=Location(spec, 1, 1), sources=sources)


def _ref_path_side(root: Path, ref: str, rel: str, spec: str) -> Side:
    """`REF:PATH`: a snapshot directory, tools/list JSON or lock at a git ref, PATH from the project root. A
    path the ref does not have is an empty catalog, with no server (the change that adds the snapshots)."""
    from quiver.contract.catalog_files import UNREADABLE, add_snapshot
    from quiver.sources._json import load_json_fast
    from quiver.sources.imports import SNAPSHOT_SUFFIXES

    top = Path(git(root, "rev-parse", "--show-toplevel").strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    shown = Path(rel).as_posix().strip("/") or "."
    target = shown if prefix == "." else f"{prefix}/{shown}"
    with SnapshotReader(top, target) as reader:
        blobs = reader.entries(ref)
        if not blobs:
            return Side(spec, {})
        if len(blobs) == 1 and blobs[0][1] == target:
            return replace(_file_side(reader.text(blobs[0][0]), shown, None), label=spec)
        catalog: dict[str, dict[str, JSON]] = {}
        locations: dict[tuple[str, str], Location] = {}
        sources: dict[tuple[str, str], ToolSource] = {}
        for sha, name in blobs:
            filename = name.rsplit("/", 1)[-1]
            if not filename.endswith(SNAPSHOT_SUFFIXES):
                continue
            file, text = f"{shown}/{filename}", reader.text(sha)
            try:
                tool: JSON = load_json_fast(text, f"{ref}:{file}")
            except InputError as error:
                tool = {"name": filename.rsplit(".", 1)[0], UNREADABLE: f"cannot be read: {error.one_line()}"}
            key = add_snapshot(catalog, filename, tool)
            if key is not None:
                locations[(UNNAMED, key)] = Location(file, 1, 1)
                sources[(UNNAMED, key)] = ToolSource(file, text=text, base=())
    return Side(spec, {UNNAMED: catalog}, locations, sources=sources)


def _shown(root: Path, path: Path, spec: str) -> str:
    """A path side as reports name it: relative to the project (as every location is), else as given."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return spec


def _lock_side(label: str, lock: object, agents: tuple[ResolvedAgent, ...] = ()) -> Side:
    from quiver.model import Lock

    assert isinstance(lock, Lock)
    catalogs = {name: {t.name: t.definition for t in s.tools} for name, s in lock.servers.items()}
    locations = {(name, t.name): t.location for name, s in lock.servers.items() for t in s.tools}
    server_locations = {name: s.location for name, s in lock.servers.items()}
    return Side(label, catalogs, locations, server_locations, agents, file=Location(lock.path, 1, 1))


def _project_side(root: Path, label: str, *, on_disk: bool = True) -> Side:
    """The project at `root` (`on_disk`: its files stay there, so findings may point into its lock)."""
    from quiver.project import load_project
    from quiver.resolve import resolve_project

    project = load_project(root)
    if project.errors:
        raise project.errors[0]
    agents = tuple(resolve_project(project))
    if project.lock is None:  # no lock yet (the change that adds it) or no more: no tools, every tool added/removed
        return Side(label, {}, agents=agents, missing_lock=project.config.lock)
    side = _lock_side(label, project.lock, agents)
    if not on_disk:
        return side
    path = root / project.lock.path
    sources = {key: ToolSource(project.lock.path, path=path, server=key[0], tool=key[1]) for key in side.locations}
    return replace(side, sources=sources)


def _git_side(root: Path, ref: str, lock_rel: str) -> Side:
    """Read the lock file, configs and agent files at `ref` through git, without a checkout."""
    from quiver.sources.agents import AGENT_GLOBS, PLUGIN_MANIFEST
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
            or any(Path(rel).match(g) for g, _ in AGENT_GLOBS)
            or rel.endswith(PLUGIN_MANIFEST)
            or ("/agents/" in f"/{rel}" and rel.endswith(".md"))
        ):
            wanted.append(rel)
    with tempfile.TemporaryDirectory(prefix="quiver-diff-") as tmp:
        for rel in wanted:
            target = Path(tmp) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(git(top, "show", f"{ref}:{prefix}{rel}"), encoding="utf-8")
        return _project_side(Path(tmp), ref, on_disk=False)
