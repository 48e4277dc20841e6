"""A one-line progress display on stderr for long runs (compile, lint, snapshot, diff).

Only on a terminal (never in a pipe, a file or a CI log, so output stays byte-identical), and only
once the run has lasted `QUIVER_PROGRESS_DELAY` seconds (default 1): short runs print nothing. A
background thread redraws `label done/total (elapsed)` ten times a second, or a spinner when the total
is unknown, and the line is erased when the work ends, before the command prints its result.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import TextIO

DEFAULT_DELAY_S = 1.0
FRAME_S = 0.1
SPINNER = "|/-\\"
CLEAR = "\r\x1b[2K"


class Progress:
    """`with Progress("compiling", total=n) as p: ... p.advance()`; a no-op off a terminal."""

    def __init__(
        self, label: str, total: int | None = None, *, stream: TextIO | None = None, enabled: bool = True
    ) -> None:
        self.label = label
        self.enabled = enabled
        self.total = total
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False
        self._started = 0.0
        self._delay = DEFAULT_DELAY_S
        self._lock = threading.Lock()  # one writer at a time: the drawing thread, or `relabel`

    def advance(self, n: int = 1) -> None:
        self.done += n

    def relabel(self, label: str, total: int | None = None) -> None:
        """A new label (and total) once the work knows what it counts; shown at once when the line is up."""
        self.label = label
        self.total = total
        if self._thread is not None and time.monotonic() - self._started >= self._delay:
            self._draw(0)

    def __enter__(self) -> Progress:
        if self.enabled and _enabled(self._stream):
            self._started = time.monotonic()
            self._delay = _delay()
            self._thread = threading.Thread(target=self._run, name="quiver-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        with self._lock:
            if self._drawn:
                self._stream.write(CLEAR)
                self._stream.flush()
            self._thread = None  # a late `relabel` draws nothing

    def _run(self) -> None:
        if self._stop.wait(self._delay):
            return
        frame = 0
        while not self._stop.is_set():
            self._draw(frame)
            frame += 1
            self._stop.wait(FRAME_S)

    def _draw(self, frame: int) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            self._stream.write(CLEAR + self.line(time.monotonic() - self._started, frame))
            self._stream.flush()
            self._drawn = True

    def line(self, elapsed_s: float, frame: int = 0) -> str:
        """The text drawn after `elapsed_s` seconds (no newline)."""
        if self.total:
            return f"{self.label} {min(self.done, self.total)}/{self.total} ({elapsed_s:.0f}s)"
        return f"{self.label} {SPINNER[frame % len(SPINNER)]} ({elapsed_s:.0f}s)"


def _enabled(stream: TextIO) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM") != "dumb"


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("QUIVER_PROGRESS_DELAY", DEFAULT_DELAY_S)))
    except ValueError:
        return DEFAULT_DELAY_S
