"""Rate-limited warnings: a flood of refused requests is a few log lines, not one line per request.

`Throttle.warn(kind, message, *args)` logs the first occurrence of `kind` in a window of `window_s`
seconds; the ones after it in that window are counted, and the first one of a later window is logged
with how many were left out (`... (and 998 more like it in the last 10 s)`). `throttle_logger` does the
same to another library's logger, per message template.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

WINDOW_S = 10.0


class _Windows:
    def __init__(self, window_s: float, clock: Callable[[], float]) -> None:
        self.window_s, self._clock = window_s, clock
        self._opened: dict[str, float] = {}  # kind -> when its window opened
        self._left_out: dict[str, int] = {}

    def admit(self, kind: str) -> int | None:
        """None: leave this one out; else log it, with the count of those left out since the last one logged."""
        now = self._clock()
        opened = self._opened.get(kind)
        if opened is not None and now - opened < self.window_s:
            self._left_out[kind] = self._left_out.get(kind, 0) + 1
            return None
        self._opened[kind] = now
        return self._left_out.pop(kind, 0)

    def suffix(self, left_out: int) -> str:
        return f" (and {left_out} more like it in the last {self.window_s:g} s)" if left_out else ""


class Throttle:
    def __init__(
        self, logger: logging.Logger, *, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._logger, self._windows = logger, _Windows(window_s, clock)

    def warn(self, kind: str, message: str, *args: object) -> None:
        left_out = self._windows.admit(kind)
        if left_out is not None:
            self._logger.warning(message + self._windows.suffix(left_out), *args)


def throttle_logger(name: str, *, window_s: float = WINDOW_S) -> None:
    """Throttle every record of logger `name` (another library's) per message template."""
    logging.getLogger(name).addFilter(_ThrottleFilter(_Windows(window_s, time.monotonic)))


class _ThrottleFilter(logging.Filter):
    def __init__(self, windows: _Windows) -> None:
        super().__init__()
        self._windows = windows

    def filter(self, record: logging.LogRecord) -> bool:
        left_out = self._windows.admit(str(record.msg).split(":", 1)[0])  # "Invalid Host header: x" -> its kind
        if left_out is None:
            return False
        if left_out:
            record.msg, record.args = record.getMessage() + self._windows.suffix(left_out), None
        return True
