"""File access with limits: read text safely, write whole files atomically."""

from __future__ import annotations

import os
from pathlib import Path

from quiver.errors import InputError, Position, UsageError

MAX_BYTES = 5 * 1024 * 1024  # agent files and configs: written by people
MAX_LOCK_BYTES = 256 * 1024 * 1024  # lock files and imports: written by machines, 10,000 tools is ~11 MB


def read_text(path: Path, shown: str | None = None, *, limit: int = MAX_BYTES) -> str:
    """Read a UTF-8 text file (BOM dropped, CRLF folded) no larger than `limit` bytes."""
    name = shown or str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError("file not found", position=Position(name), hint="check the path") from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", position=Position(name)) from None
    if size > limit:
        raise InputError(
            f"file is {size / 1048576:.1f} MB, over the {limit // 1048576} MB limit",
            position=Position(name),
            hint="quiver reads agent files, configs and lock files; is this the right file?",
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", position=Position(name)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            "file is not valid UTF-8", position=Position(name, line, col), hint="save it as UTF-8"
        ) from None
    return text.replace("\r\n", "\n")


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write `content` to `path` through a temp file and rename: readers never see half a file. A path that
    cannot be written (its folder is a file, no permission, disk full) is the user's `UsageError`, exit 2."""
    try:
        _write_atomic(path, content)
    except OSError as exc:
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        reason = f"{blocker} is not a directory" if blocker else (exc.strerror or str(exc)).lower()
        raise UsageError(f"cannot write {path}: {reason}", hint="choose a path in a folder you can write to") from None


def _write_atomic(path: Path, content: str | bytes) -> None:
    """Text is written as UTF-8 with `\n` line ends; bytes as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # here: with shutil and random it costs 3 ms of every start-up

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if isinstance(content, bytes):
            with os.fdopen(fd, "wb") as binary:
                binary.write(content)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(content)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


IGNORE_ALL = "# Automatically created by quiver: everything here is machine-written.\n*\n"


def machine_dir(directory: Path) -> Path:
    """Create a folder only quiver writes, holding a `.gitignore` of `*` (as ruff's cache does), so a
    `git add -A` never stages it and a pre-commit hook never shows it as modified."""
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / ".gitignore"
    if not marker.exists():
        _write_atomic(marker, IGNORE_ALL)
    return directory


def ignore_in(directory: Path, pattern: str, why: str) -> None:
    """Have `directory/.gitignore` list `pattern`: created holding it (with `why` as its comment) when
    absent, the line appended when the file exists without it (or without `*`), left alone otherwise."""
    marker = directory / ".gitignore"
    try:
        text = marker.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = f"# Automatically created by quiver: {why}\n"
    lines = {line.strip() for line in text.splitlines()}
    if pattern in lines or "*" in lines:
        return
    separator = "" if not text or text.endswith("\n") else "\n"
    write_atomic(marker, f"{text}{separator}{pattern}\n")


def write_cache(path: Path, content: str) -> None:
    """`write_atomic` into a machine-written folder (see `machine_dir`)."""
    machine_dir(path.parent)
    _write_atomic(path, content)  # an OSError here is the caller's to ignore: a cache only saves time
