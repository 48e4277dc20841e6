"""Which lines changed against a git base: what `quiver lint --changed-only` annotates.

`changed_lines(root, base)` maps each changed file (posix path relative to `root`) to the line numbers of
the working tree that were added or modified since the merge-base of `HEAD` and `base`. A file whose only
change is a deletion maps to an empty set (it changed, but no current line did); untracked files count as
wholly changed. Without `base`, the first of DEFAULT_BASES that exists is used; when none does (a repository
with no default branch and no remote), the base is `HEAD`, so only uncommitted changes count, and in a
repository with no commit yet every file counts as wholly changed.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from quiver.errors import UsageError
from quiver.model import Finding
from quiver.sources.files import MAX_LOCK_BYTES, read_bytes

# tried in order when no --base is given; each is merged-based with HEAD
DEFAULT_BASES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree object
BASE_HINT = "pass --base with a branch, tag or commit that exists locally, e.g. `--base origin/main`"

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_QUOTED = re.compile(rb"\\([0-7]{3}|.)", re.DOTALL)
_ESCAPES = {b"a": b"\a", b"b": b"\b", b"t": b"\t", b"n": b"\n", b"v": b"\v", b"f": b"\f", b"r": b"\r"}


def changed_lines(root: Path, base: str | None) -> dict[str, frozenset[int]]:
    """Lines added or modified in the working tree of `root` relative to `base` (see the module doc)."""
    _git(
        root, "rev-parse", "--git-dir", what="`--changed-only` needs a git repository", hint="run it in a git work tree"
    )
    against = _resolve_base(root, base)
    diff = _git(
        root,
        "diff",
        "--unified=0",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        "--relative",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        against,
        "--",
        what=f"cannot diff against `{base or against}`",
        hint=BASE_HINT,
    )
    changed = parse_diff(diff)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", what="cannot list untracked files")
    for rel in filter(None, untracked.split("\0")):
        changed[rel] = _all_lines(root / rel)
    return dict(sorted(changed.items()))


def on_changed(finding: Finding, changed: Mapping[str, frozenset[int]]) -> bool:
    """Whether `finding` touches a changed line (a line-0 finding: whether its file changed at all)."""
    loc = finding.location
    if loc is None or loc.file not in changed:
        return False
    if loc.line <= 0:
        return True
    lines = changed[loc.file]
    return any(n in lines for n in range(loc.line, max(loc.line, loc.end_line) + 1))


def in_scope(findings: Sequence[Finding], changed: Mapping[str, frozenset[int]] | None) -> list[Finding]:
    """The findings the exit code counts: all of them, or with `--changed-only` those on changed lines
    plus those with no file (they concern the project as a whole, so no change can be blamed)."""
    if changed is None:
        return list(findings)
    return [f for f in findings if f.location is None or on_changed(f, changed)]


def parse_diff(text: str) -> dict[str, frozenset[int]]:
    """Parse `git diff --unified=0` output: new-side file -> new-side line numbers of its hunks."""
    out: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in text.split("\n"):
        if line.startswith("+++ "):
            target = line[4:]
            if target == "/dev/null":  # a deleted file: nothing of it is left to annotate
                current = None
                continue
            current = out.setdefault(_unquote(target).removeprefix("b/"), set())
        elif line.startswith("@@") and current is not None:
            match = _HUNK.match(line)
            if match:
                start = int(match.group(1))
                count = 1 if match.group(2) is None else int(match.group(2))
                current.update(range(start, start + count))
    return {rel: frozenset(lines) for rel, lines in out.items()}


def _resolve_base(root: Path, base: str | None) -> str:
    """The commit to diff against: the merge-base of HEAD and `base` (or of the first default that exists)."""
    head = _commit(root, "HEAD")
    if base is not None:
        commit = None if base.startswith("-") else _commit(root, base)
        if commit is None:
            raise UsageError(f"`{base}` is not a commit in this repository", hint=BASE_HINT)
        return (_merge_base(root, commit) if head else None) or commit
    if head is None:  # no commit yet: everything is new
        return EMPTY_TREE
    for candidate in DEFAULT_BASES:
        commit = _commit(root, candidate)
        if commit is not None:
            return _merge_base(root, commit) or head
    return head


def _commit(root: Path, ref: str) -> str | None:
    result = _run(root, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
    return _output(result)


def _merge_base(root: Path, commit: str) -> str | None:
    return _output(_run(root, ["merge-base", "HEAD", commit]))


def _output(result: subprocess.CompletedProcess[str]) -> str | None:
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def _git(root: Path, *args: str, what: str, hint: str | None = None) -> str:
    result = _run(root, list(args))
    if result.returncode != 0:
        detail = next((line.strip() for line in result.stderr.splitlines() if line.strip()), "git failed")
        raise UsageError(f"{what}: {detail}", hint=hint)
    return result.stdout


def _run(root: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            check=False,
        )
    except FileNotFoundError:
        raise UsageError("`--changed-only` needs git, and git is not on PATH", hint="install git") from None


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of unusual paths (`"b/a\\tb.md"`); octal escapes are UTF-8 bytes."""
    if not (len(path) >= 2 and path.startswith('"') and path.endswith('"')):
        return path
    body = path[1:-1].encode("utf-8", "surrogateescape")
    return _QUOTED.sub(_unescape, body).decode("utf-8", "replace")


def _unescape(match: re.Match[bytes]) -> bytes:
    token = match.group(1)
    if len(token) == 3:
        return bytes([int(token, 8) & 0xFF])
    return _ESCAPES.get(token, token)


def _all_lines(path: Path) -> frozenset[int]:
    try:
        data = read_bytes(path, limit=MAX_LOCK_BYTES)
    except OSError:
        return frozenset()
    count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return frozenset(range(1, count + 1))
