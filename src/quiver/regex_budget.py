"""Bounded regular expressions for the `pattern`s of tool schemas: a schema from an upstream server is not
trusted, and Python's `re` backtracks (`^(a+)+$` against 30 `a`s and a `!` runs for minutes).

`search(pattern, text)` answers as `re.search(pattern, text) is not None` would, within a time budget:

1. linear time, where it can (`linear_search`): RE2 (google-re2) when the pattern and the text are in the
   subset where RE2 and Python's `re` agree. That subset leaves out what RE2 lacks (lookarounds,
   backreferences, possessive and atomic groups, inline flags), what the two spell alike but read
   differently (`{,n}`, POSIX classes, `\\Z`, `$` before a final newline) and, unless the text is ASCII,
   the classes `\\d \\w \\s \\b` (Unicode in `re`, ASCII in RE2; `\\s` also differs on five ASCII controls).
   tests/test_regex_budget.py checks the agreement against `re` on generated patterns and texts.
2. otherwise Python's `re` in a worker process, which is killed when the budget runs out
   (`PatternTimeout`); a worker is reused by later searches and started again after a kill. Nothing
   runs on the caller's thread, so a hostile pattern costs its caller at most the budget and never holds
   the GIL of the process that asked.

`bounded_validator(schema)` is a jsonschema validator whose `pattern`, `patternProperties` and
`additionalProperties` go through `search`; the gateway validates arguments with it (first `linear_only`,
then, if a pattern needs the worker, off the event loop), lint checks `default`s and the contract diff its
witnesses. Without google-re2 installed every search goes to the worker, still bounded.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import functools
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = [
    "DEFAULT_BUDGET_S",
    "NeedsBacktracking",
    "PatternTimeout",
    "bounded_class",
    "bounded_validator",
    "budget",
    "close_workers",
    "linear_only",
    "linear_search",
    "search",
]

DEFAULT_BUDGET_S = 1.0  # per search outside a `budget` block; a gateway call's budget covers all its searches
MAX_WORKERS = 4


class PatternTimeout(Exception):
    """A pattern that `re` could not finish within the budget (catastrophic backtracking, most likely)."""

    def __init__(self, pattern: str, budget_s: float) -> None:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        super().__init__(f"matching `pattern` {shown!r} took longer than its {budget_s:g} s budget")
        self.pattern, self.budget_s = pattern, budget_s


class NeedsBacktracking(Exception):
    """Raised by `search` inside `linear_only()`: this pattern and text need the worker (the caller retries
    off its event loop)."""


# (deadline, budget) of the enclosing `budget` block, or "linear" inside `linear_only`
_SCOPE: contextvars.ContextVar[tuple[float, float] | str | None] = contextvars.ContextVar("regex_budget", default=None)


@contextlib.contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Every `search` in the block shares one deadline, `seconds` from now."""
    token = _SCOPE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _SCOPE.reset(token)


@contextlib.contextmanager
def linear_only() -> Iterator[None]:
    """In the block, a search that would need the worker raises `NeedsBacktracking` instead."""
    token = _SCOPE.set("linear")
    try:
        yield
    finally:
        _SCOPE.reset(token)


def search(pattern: str, text: str) -> bool:
    """`re.search(pattern, text) is not None`, bounded (see the module docstring). `re.error` for a pattern
    Python does not compile; `PatternTimeout` past the budget."""
    found = linear_search(pattern, text)
    if found is not None:
        return found
    scope = _SCOPE.get()
    if scope == "linear":
        raise NeedsBacktracking(pattern)
    deadline, seconds = scope if isinstance(scope, tuple) else (time.monotonic() + DEFAULT_BUDGET_S, DEFAULT_BUDGET_S)
    return _POOL.search(pattern, text, deadline, seconds)


# --- linear time ----------------------------------------------------------------------------------------

_CLASSES = frozenset("dDwWsSbB")  # Unicode in `re`, ASCII in RE2
_SAME_ESCAPES = frozenset("AntrfvdDwWsSbBx")
_S_DIFFERS = frozenset("\x0b\x1c\x1d\x1e\x1f")  # ASCII whitespace to `re`'s `\s`, not to RE2's


@functools.lru_cache(maxsize=4096)
def _linear(pattern: str) -> tuple[Any, bool, bool, bool] | None:
    """(RE2 program, uses `\\d\\w\\s\\b`-classes, uses `\\s`, uses `$`) when RE2 reads `pattern` as `re` does for
    the texts `linear_search` lets through; None when only `re` can answer."""
    classes = spaces = dollar = False
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n:
                return None
            nxt = pattern[i + 1]
            if nxt.isalnum():
                if nxt not in _SAME_ESCAPES:
                    return None  # \1 backreferences, \Z, \u, \N{...}, \p, \z ... : spelled or read differently
                if nxt == "x" and not all(c in "0123456789abcdefABCDEF" for c in pattern[i + 2 : i + 4]):
                    return None
                classes |= nxt in _CLASSES
                spaces |= nxt in "sS"
            elif ord(nxt) > 127:
                return None
            i += 2
            continue
        if ch == "(" and pattern.startswith("(?", i) and not pattern.startswith(("(?:", "(?P<"), i):
            return None  # lookarounds, inline flags, atomic groups, comments, conditionals
        if ch == "[" and pattern.startswith("[:", i + 1):
            return None  # a POSIX class to RE2, a set of characters to `re`
        if ch == "{" and pattern.startswith("{,", i):
            return None  # {0,n} to `re`, literal to RE2
        if ch in "*+?}" and i + 1 < n and pattern[i + 1] == "+":
            return None  # possessive
        dollar |= ch == "$"
        i += 1
    try:
        import re2  # type: ignore[import-untyped]  # google-re2 ships no type hints
    except ImportError:
        return None
    options = re2.Options()
    options.log_errors = False
    try:
        program = re2.compile(pattern, options=options)
    except re2.error:
        return None  # RE2 does not take it (backreferences, large repeats, ...): `re` decides
    return program, classes, spaces, dollar


def linear_search(pattern: str, text: str) -> bool | None:
    """`re.search(pattern, text) is not None` in linear time, or None when only `re` can say it."""
    try:
        compiled = _linear(pattern)
    except (TypeError, ValueError):
        return None
    if compiled is None:
        return None
    program, classes, spaces, dollar = compiled
    if (classes and not text.isascii()) or (dollar and "\n" in text):
        return None
    if spaces and not _S_DIFFERS.isdisjoint(text):
        return None
    try:
        return program.search(text) is not None
    except (UnicodeEncodeError, TypeError):  # a lone surrogate cannot be UTF-8 for RE2
        return None


# --- Python's re in worker processes --------------------------------------------------------------------

_WORKER = """
import json, re, sys
for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = "1" if re.search(request[0], request[1]) is not None else "0"
    except re.error as exc:
        answer = "E" + str(exc).replace("\\n", " ")
    sys.stdout.write(answer + "\\n")
    sys.stdout.flush()
"""


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WORKER],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self._buffer = b""

    def ask(self, pattern: str, text: str, deadline: float, seconds: float) -> bool:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = json.dumps([pattern, text], ensure_ascii=True).encode() + b"\n"
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise PatternTimeout(pattern, seconds)
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("the pattern worker exited")
            self._buffer += chunk
        answer, _, self._buffer = self._buffer.partition(b"\n")
        if answer.startswith(b"E"):
            raise re.error(answer[1:].decode("utf-8", "replace"))
        return answer == b"1"

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class _Pool:
    """Idle workers, reused; one per concurrent search up to MAX_WORKERS (more wait for one)."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_WORKERS)

    def search(self, pattern: str, text: str, deadline: float, seconds: float) -> bool:
        if not self._slots.acquire(timeout=max(deadline - time.monotonic(), 0)):
            raise PatternTimeout(pattern, seconds)
        try:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            if worker is None or worker.proc.poll() is not None:
                worker = _Worker()
            try:
                found = worker.ask(pattern, text, deadline, seconds)
            except BaseException as exc:
                if isinstance(exc, re.error):
                    self._keep(worker)
                else:
                    worker.kill()  # still matching, or broken: never reused
                raise
            self._keep(worker)
            return found
        finally:
            self._slots.release()

    def _keep(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


_POOL = _Pool()
atexit.register(_POOL.close)  # idle workers go with the process (a killed one's worker sees its stdin close)


def close_workers() -> None:
    """Stop the idle worker processes now (a later search starts one again)."""
    _POOL.close()


# --- jsonschema with bounded patterns -------------------------------------------------------------------


def bounded_validator(schema: Any, default: Any = None) -> Any:
    """A jsonschema validator for `schema` (its `$schema` dialect, else `default`, else 2020-12) whose pattern
    keywords use `search`. Raises what jsonschema raises for an invalid schema only when the caller checks
    it (`check_schema` on the returned validator's class)."""
    import jsonschema

    base = jsonschema.validators.validator_for(schema, default=default or jsonschema.Draft202012Validator)
    return bounded_class(base)(schema)


@functools.cache
def bounded_class(base: Any) -> Any:
    """`base` (a jsonschema validator class) with its pattern keywords going through `search`."""
    import jsonschema

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(patrn, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for each, subschema in patterns.items():
            for key, value in instance.items():
                if search(each, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=each)

    original = base.VALIDATORS.get("additionalProperties")

    def additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object") or "patternProperties" not in schema:
            if original is not None:
                yield from original(validator, additional, instance, schema)
            return
        declared = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = [k for k in instance if k not in declared and not any(search(p, k) for p in patterns)]
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], additional, path=extra)
        elif not additional and extras:  # jsonschema's own wording
            shown = ", ".join(repr(e) for e in sorted(extras))
            verb = "does" if len(extras) == 1 else "do"
            yield jsonschema.ValidationError(
                f"{shown} {verb} not match any of the regexes: {', '.join(repr(p) for p in sorted(patterns))}"
            )

    keywords = {"pattern": pattern, "patternProperties": pattern_properties}
    if original is not None:
        keywords["additionalProperties"] = additional_properties
    return jsonschema.validators.extend(base, keywords)
