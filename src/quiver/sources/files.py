"""File access with limits: read text safely, write whole files atomically."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from quiver.errors import InputError, Position, UsageError

MAX_BYTES = 5 * 1024 * 1024  # agent files and configs: written by people
MAX_LOCK_BYTES = 256 * 1024 * 1024  # lock files and imports: written by machines, 10,000 tools is ~11 MB


class NotRegular(OSError):
    """The path names something other than a regular file (a FIFO, a device, a socket, a directory)."""


def read_bytes(path: Path, *, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; never blocks, never trusts `stat`.

    The file is opened without blocking (a FIFO opens at once) and checked with `fstat` on the open
    descriptor (a symlink to `/dev/zero` is a character device), then read in chunks up to `limit + 1`
    bytes: a file that grows, or lies about its size, stops there. Raises `NotRegular`, `FileTooLarge`
    or the `OSError` of the open or the read (FileNotFoundError: the file vanished)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(errno.EINVAL, _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file"))
        if info.st_size > limit:
            raise FileTooLarge(limit, info.st_size)
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise FileTooLarge(limit)  # it grew, or its size lied
        return b"".join(chunks)
    finally:
        os.close(fd)


class FileTooLarge(OSError):
    """A file over the reader's limit: `size` is what `fstat` said, None when reading found the excess."""

    def __init__(self, limit: int, size: int | None = None) -> None:
        shown = f"file is {size / 1048576:.1f} MB, over" if size is not None else "file is over"
        super().__init__(errno.EFBIG, f"{shown} the {_size(limit)} limit")
        self.size, self.limit = size, limit


def _size(n: int) -> str:
    return f"{n // 1048576} MB" if n >= 1048576 else f"{n // 1024} KB" if n >= 1024 else f"{n} bytes"


_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO), not a regular file",
    stat.S_IFCHR: "a character device, not a regular file",
    stat.S_IFBLK: "a block device, not a regular file",
    stat.S_IFSOCK: "a socket, not a regular file",
    stat.S_IFDIR: "a directory, not a file",
}


def read_text(path: Path, shown: str | None = None, *, limit: int = MAX_BYTES) -> str:
    """Read a UTF-8 text file (BOM dropped, CRLF folded) no larger than `limit` bytes: a regular file only
    (`read_bytes`); anything else, a missing or vanished file, or an undecodable one is an InputError
    naming it (UTF-16 and other encodings are named as such)."""
    name = shown or str(path)
    try:
        data = read_bytes(path, limit=limit)
    except FileNotFoundError:
        raise InputError("file not found", position=Position(name), hint="check the path") from None
    except FileTooLarge as exc:
        raise InputError(
            str(exc.strerror),
            position=Position(name),
            hint="quiver reads agent files, configs and lock files; is this the right file?",
        ) from None
    except NotRegular as exc:
        raise InputError(
            f"cannot read: {exc.strerror}", position=Position(name), hint="point quiver at a regular file"
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", position=Position(name)) from None
    return decode_text(data, name)


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 (a BOM dropped, CRLF folded), or an InputError at the first bad byte's line:column."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("file is UTF-16, not UTF-8", position=Position(name, 1, 1), hint="save it as UTF-8")
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


def inside(root: Path, rel: str | Path) -> bool:
    """Whether `root / rel`, symlinks followed (as far as they exist), stays inside `root`."""
    base = root.resolve()
    target = (root / rel).resolve()
    return target == base or base in target.parents


def write_output(path: Path, content: str | bytes, *, root: Path | None = None) -> None:
    """`write_atomic` for a file the command line names (a report, a baseline, a patch): a missing folder is
    created only inside the working directory or the project `root`; elsewhere it is a UsageError
    (`--html /nonexistent/r.html` must not create `/nonexistent`)."""
    if not path.parent.exists():
        target = path.parent.resolve()
        bases = [Path.cwd().resolve(), *([root.resolve()] if root is not None else [])]
        if not any(target == base or base in target.parents for base in bases):
            missing = next((p for p in reversed((path.parent, *path.parent.parents)) if not p.exists()), path.parent)
            raise UsageError(
                f"cannot write {path}: folder {missing} does not exist",
                hint="create it first, or choose a path in an existing folder",
            )
    write_atomic(path, content)


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
