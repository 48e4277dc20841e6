"""Line and column of every value of a JSON text, by JSON pointer: where a diff finding about a tool points.

A side's file (a snapshot, a tools/list JSON, a lock) is parsed once more, only when a finding needs a place
in it. Tokens come from one regular expression (the scan runs in C); an object member is placed at its key,
an array item at its first character. A text that is not JSON gives what was read before the fault.
`locate` maps a pointer to the deepest part of it the text has: a property the new schema removed is placed
at the object that held it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence

Pointer = tuple[str | int, ...]
Positions = Mapping[Pointer, tuple[int, int]]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
_BRANCHES = ("oneOf", "anyOf", "allOf")
_MAX_BRANCH = 8
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Open:
    """One container being read: its pointer; for an array the next index, for an object the last key."""

    __slots__ = ("index", "key", "pointer", "wants_key")

    def __init__(self, pointer: Pointer, *, array: bool) -> None:
        self.pointer = pointer
        self.index: int | None = 0 if array else None
        self.key: str | None = None
        self.wants_key = not array


def positions(text: str) -> dict[Pointer, tuple[int, int]]:
    """{pointer: (line, column)}, 1-based, for the root and every member and item of the JSON text."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    out: dict[Pointer, tuple[int, int]] = {}
    stack: list[_Open] = []

    def place(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    for match in _TOKEN.finditer(text):
        token, offset = match.group(), match.start()
        top = stack[-1] if stack else None
        if top is not None and top.wants_key:  # an object waiting for a key (or its end)
            if token.startswith('"'):
                top.key, top.wants_key = _unquote(token), False
                out.setdefault((*top.pointer, top.key), place(offset))
            elif token == "}":
                stack.pop()
            continue
        if token == ":":
            continue
        if token == ",":
            if top is not None and top.index is None:
                top.wants_key = True
            continue
        if token in ("}", "]"):
            if stack:
                stack.pop()
            continue
        if top is None:
            pointer: Pointer = ()
            out.setdefault(pointer, place(offset))
        elif top.index is None:
            if top.key is None:
                return out  # not JSON from here on
            pointer = (*top.pointer, top.key)
        else:
            pointer = (*top.pointer, top.index)
            top.index += 1
            out.setdefault(pointer, place(offset))
        if token in ("{", "["):
            stack.append(_Open(pointer, array=token == "["))
    return out


def locate(found: Positions, pointer: Sequence[str | int], *, floor: int = 0) -> tuple[int, int] | None:
    """The position of `pointer`; else of the pointer with one `anyOf`/`oneOf`/`allOf` branch step put in
    (a diff's paths skip branches: `labels[].confidence` may be written under `items/oneOf/1`); else of its
    longest prefix that the text has (of `floor` parts at least); None when the text has none."""
    whole = tuple(pointer)
    if whole in found:
        return found[whole]
    for at in range(len(whole), floor - 1, -1):
        for keyword in _BRANCHES:
            for index in range(_MAX_BRANCH):
                hit = found.get((*whole[:at], keyword, index, *whole[at:]))
                if hit is not None:
                    return hit
    for end in range(len(whole), floor - 1, -1):
        hit = found.get(whole[:end])
        if hit is not None:
            return hit
    return None


def _unquote(token: str) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    return _ESCAPE.sub(lambda m: _decode(m.group(1)), body)


def _decode(escape: str) -> str:
    if escape.startswith("u") and len(escape) == 5:
        return chr(int(escape[1:], 16))
    return _SIMPLE.get(escape, escape)
