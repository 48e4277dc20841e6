"""TOML with limits: `tomllib`, plus a one-line file:line:col error for what it cannot take.

`tomllib` recurses once per nesting level (5,000 nested arrays are a RecursionError) and converts
integers with `int()`, which refuses more than 4,300 digits (a ValueError). Both are the writer's
mistake, not a bug: the nesting is checked before parsing (`MAX_DEPTH` levels of arrays and inline
tables), and a number too long to convert is found and named.
"""

from __future__ import annotations

import re
import sys
import tomllib
from typing import Any

from quiver.errors import ConfigError, Position

MAX_DEPTH = 100  # arrays and inline tables inside one another
_DIGITS = (sys.get_int_max_str_digits() or 4300) - 1  # int() refuses more digits than this plus one
_LONG_NUMBER = re.compile(rf"(?<![\w.])[-+]?\d[\d_]{{{_DIGITS},}}")


def parse_toml(text: str, name: str) -> dict[str, Any]:
    """`tomllib.loads(text)`, or a ConfigError at the place in `name` that broke it."""

    deep = too_deep(text, MAX_DEPTH)
    if deep is not None:
        raise ConfigError(
            f"values nested deeper than {MAX_DEPTH} levels", position=Position(name, *deep), hint="flatten the value"
        )
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, col = _position(str(exc))
        raise ConfigError(
            f"invalid TOML: {str(exc).split(' (at')[0]}", position=Position(name, line, col), hint="fix the syntax"
        ) from None
    except (ValueError, RecursionError, MemoryError):
        match = _LONG_NUMBER.search(text)
        line, col = line_col(text, match.start()) if match else (0, 0)
        raise ConfigError(
            "a number too long to read" if match else "a value TOML cannot represent here",
            position=Position(name, line, col),
            hint="write the number with fewer digits (or as a string)",
        ) from None


def _position(message: str) -> tuple[int, int]:
    match = re.search(r"line (\d+), column (\d+)", message)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def line_col(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of `text[index]`."""
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def too_deep(text: str, limit: int) -> tuple[int, int] | None:
    """Line and column of the first `[` or `{` of a value nested more than `limit` levels deep, outside
    strings and comments (table headers `[a]` and `[[a]]` are not values: at most two levels); else None."""
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i = skip_string(text, i)
            continue
        if ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in "[{":
            depth += 1
            if depth > limit:
                return line_col(text, i)
        elif ch in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def skip_string(text: str, i: int) -> int:
    """The index after the TOML string starting at `i` (basic, literal, or multi-line)."""
    quote = text[i]
    if text.startswith(quote * 3, i):
        end = text.find(quote * 3, i + 3)
        while quote == '"' and end > 0 and _escaped(text, end):
            end = text.find(quote * 3, end + 1)
        return len(text) if end < 0 else end + 3
    j = i + 1
    while j < len(text) and text[j] != "\n":
        if text[j] == "\\" and quote == '"':
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    return j


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes - 1 >= 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1
