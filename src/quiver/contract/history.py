"""Batch diff over a git history: each commit that touched a snapshot path, against its first parent.

One process, one `git cat-file --batch` reader, every blob parsed once (an unchanged tool is the same object
on both sides, so comparing it costs nothing). The path is a snapshot directory (`pkg/github/__toolsnaps__`),
a tools/list JSON or a lock file inside the repository; a commit where it does not exist is an empty catalog.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from quiver.contract.catalog_files import UNREADABLE, Catalog, add_snapshot, read_tools_list
from quiver.contract.hazards import TextScan
from quiver.contract.sides import git
from quiver.errors import InputError, UsageError
from quiver.model import JSON, Finding
from quiver.sources.imports import SNAPSHOT_SUFFIXES


@dataclass(frozen=True, slots=True)
class Step:
    """One commit of the history and its first parent (None for a root commit)."""

    parent: str | None
    commit: str
    subject: str


def commits(repo: Path, rev_range: str, path: str) -> list[Step]:
    """The commits of `rev_range` that touched `path`, oldest first."""
    out = git(repo, "log", "--reverse", "--format=%H%x00%P%x00%s", rev_range, "--", path)
    steps = []
    for line in out.splitlines():
        commit, parents, subject = [*line.split("\x00"), "", ""][:3]
        steps.append(Step(parents.split()[0] if parents.split() else None, commit, subject))
    return steps


class SnapshotReader:
    """Catalogs of `path` at any commit, read through one long-running `git cat-file --batch`."""

    def __init__(self, repo: Path, path: str) -> None:
        self.repo, self.path = repo, path.strip("/")
        self._blobs: dict[str, JSON] = {}
        self._proc = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> SnapshotReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def catalog(self, commit: str | None) -> Catalog:
        if commit is None:
            return {}
        listing = git(self.repo, "ls-tree", "-r", commit, "--", self.path)
        entries = [line.split(None, 3) for line in listing.splitlines()]
        blobs = [(sha, name) for _, kind, sha, name in entries if kind == "blob"]
        out: Catalog = {}
        if len(blobs) == 1 and blobs[0][1] == self.path:  # a file: a tools/list JSON
            data = self._json(blobs[0][0], f"{commit[:12]}:{self.path}")
            if isinstance(data, dict) and isinstance(data.get("servers"), dict):
                raise UsageError("a lock file history is diffed by ref: `quiver diff REF~1 REF`")
            return read_tools_list(data, f"{commit[:12]}:{self.path}")
        for sha, name in blobs:
            filename = name.rsplit("/", 1)[-1]
            if "/" in name[len(self.path) + 1 :] or not filename.endswith(SNAPSHOT_SUFFIXES):
                continue
            try:
                tool = self._json(sha, f"{commit[:12]}:{name}")
            except InputError as error:
                tool = {"name": filename.rsplit(".", 1)[0], UNREADABLE: f"cannot be read: {error.message}"}
            add_snapshot(out, filename, tool)
        return out

    def text(self, sha: str) -> str:
        """One blob's text (UTF-8, undecodable bytes replaced)."""
        return self._read(sha).decode("utf-8", "replace")

    def _json(self, sha: str, shown: str) -> JSON:
        if sha not in self._blobs:
            from quiver.sources._json import load_json_fast

            self._blobs[sha] = load_json_fast(self._read(sha).decode("utf-8", "replace"), shown)
        return self._blobs[sha]

    def _read(self, sha: str) -> bytes:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(sha.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        size = int(header[2])
        data = self._proc.stdout.read(size + 1)[:size]
        return data


def diff_history(
    repo: Path, rev_range: str, path: str, *, server: str, scan: TextScan | None = None
) -> Iterator[tuple[Step, list[Finding]]]:
    """(step, findings) for each commit of `rev_range` that touched `path` (`scan`: see `diff_catalogs`)."""
    from quiver.contract.diff import diff_catalogs

    with SnapshotReader(repo, path) as reader:
        cache: dict[str | None, Catalog] = {}
        for step in commits(repo, rev_range, path):
            old = cache[step.parent] if step.parent in cache else reader.catalog(step.parent)
            new = reader.catalog(step.commit)
            cache = {step.commit: new}
            yield step, diff_catalogs(old, new, server=server, scan=scan)
