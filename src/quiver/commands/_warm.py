"""A warm `quiver compile`: what the last compile recorded (`quiver.sources.compile_state`) against digests of
every input, taken before any input is read, so that a compile skips the manifests it would only write again.

An agent's key digests the inputs every manifest reads (quiver itself, the options and environment that
change output, the quiver config candidates, the lock, the MCP configs and skills discovery finds, with their
bytes) and the agent file itself, with what discovery made of it. The project's digest adds every agent file
found. A compile whose project digest, report options and output files are as recorded prints what the
recorded run printed and builds nothing; else it builds every agent whose key or output files changed and
takes the others' index.json entries from the state. Digests are taken before the files are read for the
build, so a file that changes meanwhile leaves a state that no longer matches it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from quiver.compile import output_files
from quiver.config import load_config
from quiver.errors import QuiverError
from quiver.model import JSON, Agent
from quiver.project import Discovery, discover
from quiver.sources.compile_state import (
    STATE_FILE,
    AgentEntry,
    CompileState,
    Report,
    is_current,
    read_state,
    stamp_file,
    write_state,
)
from quiver.sources.files import MAX_LOCK_BYTES, read_bytes
from quiver.sources.skills import plugin_manifests

INPUTS_FORMAT = "quiver compile inputs 1"
ENV = ("QUIVER_CHECK_OUTPUT",)  # the environment compile's output depends on (os.environ reads in its path)
CONFIG_CANDIDATES = ("quiver.toml", "pyproject.toml")  # what `load_config` may read


@dataclass(frozen=True, slots=True)
class Inputs:
    """The digests of a compile's inputs: `shared` (all but the agent files), each agent file's key by path,
    and `project` (all of them); `files` names the project files digested."""

    found: Discovery
    out_dir: str
    shared: str
    agents: Mapping[str, str]
    project: str
    files: tuple[str, ...]

    def key_of(self, agent: Agent) -> str | None:
        """The key of an agent's inputs: its file's, or for a host's session (`@host`) the shared inputs'."""
        if agent.session:
            return _digest((self.shared, "session", agent.id))
        return self.agents.get(agent.path)


def inputs_of(root: Path, out: str | None, emit_hosts: Sequence[str], host: str | None) -> Inputs | None:
    """Digest the project's inputs under these compile options; None when the quiver config cannot be read
    (the compile reports it, and has nothing to skip)."""
    try:
        config = load_config(root)
    except QuiverError:
        return None
    found = discover(root, config)
    out_dir = out or config.out
    shared = _Digest(INPUTS_FORMAT, *_quiver_itself())
    shared.add(str(root.resolve()), out_dir, "--out" if out else "config", str((root / out_dir).resolve()))
    shared.add("--emit", *emit_hosts, "--host", host or "")
    for name in ENV:
        shared.add(name, os.environ.get(name, "\0unset"))
    files = _add_files(shared, root, found)
    key = shared.hexdigest()
    agents = {f.path: _digest((key, repr(f), file_digest(root / f.path))) for f in found.agents}
    project = _digest((key, *(part for item in sorted(agents.items()) for part in item)))
    return Inputs(found, out_dir, key, agents, project, (*files, *agents))


def _add_files(digest: _Digest, root: Path, found: Discovery) -> list[str]:
    """Add every project file but the agent files to `digest`, each by its path and bytes (a skill with its
    discovery record); returns their paths."""
    files = [*CONFIG_CANDIDATES, found.config.lock, *found.mcp_configs]
    for rel in files:
        digest.add(rel, file_digest(root / rel))
    for skill in found.skills:
        digest.add(repr(skill), file_digest(root / skill.path))
    plugins = plugin_manifests(root)  # discovery read them: whatever else a plugin.json says is an input too
    for rel in plugins:
        digest.add(rel, file_digest(root / rel))
    return [*files, *(s.path for s in found.skills), *plugins]


def file_digest(path: Path) -> str:
    """The sha256 of a file's bytes, or what kept it from being read (missing, too large, not a file)."""
    try:
        return hashlib.sha256(read_bytes(path, limit=MAX_LOCK_BYTES)).hexdigest()
    except OSError as exc:
        return f"unread: {type(exc).__name__} {exc.errno} {getattr(exc, 'size', '')}"


def _quiver_itself() -> tuple[str, ...]:
    """quiver's version, every file of the installed package by size and mtime (an edited checkout changes
    output under the same version), Python's version and orjson's (which renders the output)."""
    import orjson

    import quiver

    package = Path(quiver.__file__).parent
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            info = os.stat(os.path.join(dirpath, name))
            digest.update(f"{dirpath}/{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return quiver.__version__, digest.hexdigest(), sys.version, orjson.__version__


class _Digest:
    """sha256 over strings, each length-prefixed (no two sequences digest alike)."""

    def __init__(self, *parts: str) -> None:
        self._sha = hashlib.sha256()
        self.add(*parts)

    def add(self, *parts: str) -> None:
        for part in parts:
            data = part.encode("utf-8", "surrogateescape")
            self._sha.update(len(data).to_bytes(8, "big") + data)

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def _digest(parts: Iterable[str]) -> str:
    return _Digest(*parts).hexdigest()


def report_key(quiet: bool, fmt: str) -> str:
    """What the report (`text`) of a compile depends on beyond its inputs."""
    return f"quiet={quiet} format={fmt}"


@dataclass(frozen=True, slots=True)
class Warm:
    """A compile's inputs and the state the last one recorded (None: none to trust)."""

    root: Path
    inputs: Inputs
    state: CompileState | None
    emit_hosts: tuple[str, ...]

    def unchanged(self, key: str | None) -> CompileState | None:
        """The recorded state when nothing changed: the same inputs, every output file as it was left, and
        (`key`, None for `--check`, which prints no report) the same report options."""
        state = self.state
        if state is None or state.project != self.inputs.project:
            return None
        if key is not None and state.report.key != key:
            return None
        return state if all(is_current(self.root / rel, s) for rel, s in state.outputs.items()) else None

    def kept(self, agent: Agent) -> AgentEntry | None:
        """The recorded entry of an agent whose inputs and output files are as the last compile left them."""
        state = self.state
        entry = state.agents.get(agent.id) if state is not None else None
        if state is None or entry is None or entry.key != self.inputs.key_of(agent):
            return None
        files = output_files(self.inputs.out_dir, agent.id, self.emit_hosts)
        stamps = [state.outputs.get(rel) for rel in files]
        if all(s is not None and is_current(self.root / rel, s) for rel, s in zip(files, stamps, strict=True)):
            return entry
        return None

    def record(
        self, outputs: Iterable[str], agents: Iterable[Agent], index: Mapping[str, Mapping[str, JSON]], report: Report
    ) -> None:
        """Record a compile that left `outputs` current: each compiled agent's key and index.json entry, what
        it reported, a stamp of every output. Without a stamp of each output no state is left at all."""
        path = self.root / STATE_FILE
        now = time.time_ns()
        stamps = {rel: stamp_file(self.root / rel, now) for rel in outputs}
        kept = {rel: s for rel, s in stamps.items() if s is not None}
        entries = {}
        for agent in agents:
            key = self.inputs.key_of(agent)
            if key is not None and agent.id in index:
                entries[agent.id] = AgentEntry(key, index[agent.id])
        if len(kept) == len(stamps):
            write_state(path, CompileState(self.inputs.project, report, entries, kept))
        else:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def start(root: Path, out: str | None, emit_hosts: Sequence[str], host: str | None) -> Warm | None:
    """The warm start of a compile: None under `QUIVER_NO_CACHE=1`, or when the quiver config is unreadable."""
    if os.environ.get("QUIVER_NO_CACHE"):
        return None
    inputs = inputs_of(root, out, emit_hosts, host)
    if inputs is None:
        return None
    return Warm(root, inputs, read_state(root / STATE_FILE), tuple(emit_hosts))
