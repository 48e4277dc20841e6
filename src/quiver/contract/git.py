"""git for the diff: one git command's output (`git`), and the catalog of a snapshot path at any commit, read
through one long-running `git cat-file --batch` (`SnapshotReader`). Below `sides.py` (git sides) and
`history.py` (a batch diff over commits), which both use them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from quiver.contract.catalog_files import UNREADABLE, Catalog, add_snapshot, read_tools_list
from quiver.errors import InputError, UsageError
from quiver.model import JSON
from quiver.sources.imports import SNAPSHOT_SUFFIXES


def git(root: Path, *args: str, binary: bool = False) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise UsageError("git is not installed", hint="install git, or pass two lock files") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {' '.join(args[:2])} failed: {message[-1] if message else 'unknown error'}")
    return proc.stdout.decode("utf-8", "replace")


class SnapshotReader:
    """Catalogs of `path` at any commit, read through one long-running `git cat-file --batch`."""

    def __init__(self, repo: Path, path: str) -> None:
        self.repo, self.path = repo, path.strip("/")
        self._blobs: dict[str, JSON] = {}
        self._trees: dict[str, list[tuple[str, str]]] = {}
        self._catalogs: dict[tuple[tuple[str, str], ...], Catalog] = {}
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

    def entries(self, commit: str) -> list[tuple[str, str]]:
        """(blob sha, path) of what `path` is at `commit`: the file itself, else the files directly in the
        folder (a snapshot folder's subfolders are not read); [] where the commit has no such path. Read
        through the same `cat-file` process (no `ls-tree` per commit), each tree once."""
        if commit in self._trees:
            return self._trees[commit]
        kind, sha, data = self._object(f"{commit}:{self.path}")
        if kind == "blob":
            found = [(sha, self.path)]
        elif kind == "tree":
            found = [(blob, f"{self.path}/{name}") for blob, name in _tree_blobs(data, len(sha) // 2)]
        else:
            found = []
        self._trees[commit] = found
        return found

    def catalog(self, commit: str | None) -> Catalog:
        if commit is None:
            return {}
        blobs = self.entries(commit)
        key = tuple(blobs)
        if key in self._catalogs:  # the same files as an earlier commit: the same catalog
            return self._catalogs[key]
        out: Catalog = {}
        if len(blobs) == 1 and blobs[0][1] == self.path:  # a file: a tools/list JSON
            data = self._json(blobs[0][0], f"{commit[:12]}:{self.path}")
            if isinstance(data, dict) and isinstance(data.get("servers"), dict):
                raise UsageError("a lock file history is diffed by ref: `quiver diff REF~1 REF`")
            out = read_tools_list(data, f"{commit[:12]}:{self.path}")
        else:
            for sha, name in blobs:
                filename = name.rsplit("/", 1)[-1]
                if not filename.endswith(SNAPSHOT_SUFFIXES):
                    continue
                try:
                    tool = self._json(sha, f"{commit[:12]}:{name}")
                except InputError as error:
                    tool = {"name": filename.rsplit(".", 1)[0], UNREADABLE: f"cannot be read: {error.message}"}
                add_snapshot(out, filename, tool)
        self._catalogs[key] = out
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
        return self._object(sha)[2]

    def _object(self, name: str) -> tuple[str, str, bytes]:
        """(type, sha, content) of an object name (`sha`, `commit:path`); type "missing" when there is none."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(name.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode("utf-8", "replace").split()
        if len(header) != 3:  # `NAME missing` / `NAME ambiguous`
            return "missing", "", b""
        size = int(header[2])
        return header[1], header[0], self._proc.stdout.read(size + 1)[:size]


_BLOB_MODES = (b"100644", b"100755", b"120000")  # files and symlinks (`git ls-tree` calls all three blobs)


def _tree_blobs(data: bytes, hash_bytes: int) -> list[tuple[str, str]]:
    """(sha, name) of the blobs of one raw tree object: `MODE NAME\\0` and the binary id, entry after entry."""
    out = []
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        mode, name = data[at:space], data[space + 1 : nul]
        if mode in _BLOB_MODES:
            out.append((data[nul + 1 : nul + 1 + hash_bytes].hex(), name.decode("utf-8", "surrogateescape")))
        at = nul + 1 + hash_bytes
    return out
