"""Batch diff over a git history: each commit that touched a snapshot path, against its first parent.

One process, one `git cat-file --batch` reader, every blob parsed once (an unchanged tool is the same object
on both sides, so comparing it costs nothing). The path is a snapshot directory (`pkg/github/__toolsnaps__`),
a tools/list JSON or a lock file inside the repository; a commit where it does not exist is an empty catalog.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from quiver.contract.catalog_files import Catalog
from quiver.contract.git import SnapshotReader, git
from quiver.contract.hazards import TextScan
from quiver.model import Finding


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
