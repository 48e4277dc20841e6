"""`quiver snapshot`: capture what each server really serves into the lock file, or check for drift."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from quiver._search._lock_vectors import lock_vectors
from quiver._search._scope import warm_catalogs
from quiver.commands._progress import Progress
from quiver.commands.outcome import Outcome
from quiver.config import Config, load_config
from quiver.errors import ConfigError, InputError, Position, UsageError
from quiver.extras import require
from quiver.model import Lock, Server, sha256_json
from quiver.project import load_project
from quiver.sources.files import inside, write_atomic
from quiver.sources.imports import import_catalog
from quiver.sources.live import fetch_catalog_sync
from quiver.sources.lock import ServerCatalog, catalogs_from_lock, known_tokens, read_lock, render_lock
from quiver.variables import expand


@dataclass(frozen=True, slots=True)
class SnapshotOptions:
    root: Path
    servers: tuple[str, ...] = ()  # only these servers; with `import_paths`, the one each path's tools belong to
    import_paths: tuple[str, ...] = ()  # tools/list JSON files or directories of tool snapshots, not live servers
    check: bool = False  # write nothing; exit 1 when a live server no longer matches the lock
    timeout: float | None = None  # seconds per server (default: its timeout_ms, else 30)


def run(options: SnapshotOptions) -> Outcome:
    """Import a catalog into the lock, or snapshot (or check) the live servers; the report is on stderr."""

    root = options.root
    config = load_config(root)
    if options.import_paths:
        return Outcome(messages=tuple(run_import(root, config, options.import_paths, options.servers)))

    require("serve", "`quiver snapshot` of live servers")  # MCP client; `--import` needs nothing more
    code, lines = run_live(root, config, options.servers, check=options.check, timeout_s=options.timeout)
    return Outcome(messages=tuple(lines), code=code)


@dataclass(frozen=True, slots=True)
class Drift:
    server: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    missing: bool = False  # not in the lock at all

    def lines(self) -> list[str]:
        if self.missing:
            return [f"{self.server}: not in the lock file"]
        out = [f"{self.server}: tool `{n}` added" for n in self.added]
        out += [f"{self.server}: tool `{n}` removed" for n in self.removed]
        out += [f"{self.server}: tool `{n}` changed (sha256 differs from its pin)" for n in self.changed]
        return out


def all_servers(root: Path) -> dict[str, Server]:
    """Project servers plus every agent's inline `mcp-servers` definitions (first definition wins)."""
    project = load_project(root)
    servers = {n: s for n, s in project.servers.items() if s.is_definition}
    for agent in project.agents:
        for server in agent.mcp_servers:
            if server.is_definition:
                servers.setdefault(server.name, server)
    return servers


def capture(server: Server, environ: Mapping[str, str], timeout_s: float) -> ServerCatalog:
    """One server's catalog, live. InputError names the server and its definition's file:line:col."""

    # The SDK logs a traceback for each non-protocol line a server prints; our error says it in one line.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)

    where = f"{server.location}: server `{server.name}`"
    if server.type is None:
        raise InputError(f"{where} has transport type `{server.raw_type}`", hint="use stdio, http or sse")
    try:
        captured = fetch_catalog_sync(
            transport=server.type,
            command=expand(server.command, environ, where=where) if server.command else None,
            args=[expand(a, environ, where=where) for a in server.args],
            env={k: expand(v, environ, where=where) for k, v in server.env},
            cwd=expand(server.cwd, environ, where=where) if server.cwd else None,
            url=expand(server.url, environ, where=where) if server.url else None,
            headers={k: expand(v, environ, where=where) for k, v in server.headers},
            timeout_s=timeout_s,
            name=server.name,
        )
    except InputError as exc:
        if exc.position is not None or exc.message.startswith(where):
            raise
        raise InputError(exc.message, position=_position(server), hint=exc.hint) from None
    return ServerCatalog(
        server.name, captured.server_info, captured.instructions, captured.protocol_version, tuple(captured.tools)
    )


def _position(server: Server) -> Position:
    loc = server.location
    return Position(loc.file, loc.line, loc.column)


def select(servers: Mapping[str, Server], names: Sequence[str]) -> list[Server]:
    unknown = [n for n in names if n not in servers]
    if unknown:
        known = ", ".join(sorted(servers)) or "none"
        raise UsageError(f"no configured server named `{unknown[0]}`", hint=f"configured servers: {known}")
    return [servers[n] for n in (names or sorted(servers))]


def merged_lock_text(lock: Lock | None, catalogs: Iterable[ServerCatalog], root: Path | None = None) -> str:
    """The lock with these catalogs replacing servers of the same name; the other servers kept, with every
    tool's purpose vector recorded (reused from `lock` or the vector cache under `root`, else encoded)."""
    by_name = {c.name: c for c in catalogs_from_lock(lock)} if lock else {}
    for catalog in catalogs:
        by_name[catalog.name] = catalog

    catalogs = list(by_name.values())
    return render_lock(catalogs, known_tokens(lock), lock_vectors(catalogs, lock, root))


def drift(lock: Lock | None, catalog: ServerCatalog) -> Drift | None:
    locked = lock.servers.get(catalog.name) if lock else None
    if locked is None:
        return Drift(catalog.name, (), (), (), missing=True)
    old = {t.name: t.sha256 for t in locked.tools}
    new = {str(t["name"]): sha256_json(t) for t in catalog.tools}
    result = Drift(
        catalog.name,
        added=tuple(sorted(set(new) - set(old))),
        removed=tuple(sorted(set(old) - set(new))),
        changed=tuple(sorted(n for n in set(old) & set(new) if old[n] != new[n])),
    )
    return result if result.added or result.removed or result.changed else None


def _confined(root: Path, lock_rel: str) -> None:
    """The config's `lock` must lead to a file inside the project (symlinks followed): a cloned repository
    does not choose where `quiver snapshot` writes."""

    if not inside(root, lock_rel):
        config = load_config(root)
        raise ConfigError(
            f"`lock` = {lock_rel!r} leads outside the project ({root.resolve()}), so quiver does not write there",
            position=config.position("lock"),
            hint="set `lock` to a path inside the project",
        )


def run_import(root: Path, config: Config, sources: Sequence[str], servers: Sequence[str]) -> list[str]:
    """Import each source as the server named beside it (the n-th `--server` for the n-th `--import`) in one
    read and one write of the lock: every source is read before anything is written."""
    if len(servers) != len(sources):
        raise UsageError(
            f"--import needs one --server NAME per source ({len(sources)} source(s), {len(servers)} name(s))",
            hint="name each source's server after it: `--import a.json --server a --import b.json --server b`",
        )
    twice = sorted({name for name in servers if servers.count(name) > 1})
    if twice:
        raise UsageError(
            f"--server {twice[0]} is named for more than one --import", hint="import each server from one source"
        )
    catalogs = []
    for source, server in zip(sources, servers, strict=True):
        path = Path(source) if Path(source).is_absolute() else (Path.cwd() / source)
        catalogs.append(import_catalog(path, server, source))
    lock_rel = config.lock
    text = merged_lock_text(read_lock(root, lock_rel), catalogs, root)
    _confined(root, lock_rel)
    write_atomic(root / lock_rel, text)
    warm_catalogs(root, config, catalogs)
    return [f"imported {len(c.tools)} tools of `{c.name}` into {lock_rel}" for c in catalogs]


def run_live(
    root: Path, config: Config, names: Sequence[str], *, check: bool, timeout_s: float | None
) -> tuple[int, list[str]]:
    """Snapshot (or check) live servers. Returns (exit code, report lines).

    Every selected server is tried, each bounded by its timeout. A broken one is an `error:` line naming
    it where it is defined, and exit 2; the lock is still written, atomically, with the servers that
    answered (a broken server keeps what the lock held for it), as `compile` names every broken file."""

    lock_rel = config.lock
    servers = select(all_servers(root), names)
    lock = read_lock(root, lock_rel)
    environ = dict(os.environ)

    catalogs = []
    errors: list[str] = []
    with Progress("snapshotting servers", total=len(servers)) as progress:
        for s in servers:
            try:
                catalogs.append(capture(s, environ, timeout_s or (s.timeout_ms or 30_000) / 1000))
            except InputError as exc:
                errors += [f"error: {line}" for line in exc.lines()]
            progress.advance()
    if check:
        lines = [line for c in catalogs if (d := drift(lock, c)) for line in d.lines()]
        if errors:
            return 2, [*lines, *errors]
        if lines:
            return 1, [*lines, f"{lock_rel} is out of date: run `quiver snapshot` and review the diff"]
        return 0, [f"{lock_rel} matches {len(catalogs)} live server(s)"]
    if catalogs:
        _confined(root, lock_rel)
        write_atomic(root / lock_rel, merged_lock_text(lock, catalogs, root))
        warm_catalogs(root, config, catalogs)  # the new tools' search vectors, so no later command waits for them
    written = [f"snapshotted `{c.name}`: {len(c.tools)} tools" for c in catalogs]
    return (2, [*written, *errors]) if errors else (0, written)
