"""A decision procedure for `pattern` widenings: is every string the old pattern matches matched by the new?

Simple regular expressions (literals, classes, `.`, `\\d\\w\\s`, groups, alternation, `?*+{m,n}`, `^`/`$` at
the ends of the pattern or of its top-level alternatives) become NFAs over a finite partition of the code
points; `subset(old, new)` explores old x determinised(new) and answers True, False (with the shortest string
in old and not in new) or None when the pattern uses anything else (look-arounds, back-references, flags...).
ECMA-262 meanings, as JSON Schema asks: `\\d` is [0-9], `\\w` is [A-Za-z0-9_], `.` is anything but a line end.
"""

from __future__ import annotations

import importlib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

MAX_STATES = 2000  # NFA states per pattern, and explored state pairs: beyond, the answer is "unknown"
_TOP = 0x10FFFF
Intervals = tuple[tuple[int, int], ...]
_LINE_ENDS: Intervals = ((10, 10), (13, 13), (0x2028, 0x2029))
_CLASSES: dict[str, Intervals] = {
    "CATEGORY_DIGIT": ((48, 57),),
    "CATEGORY_WORD": ((48, 57), (65, 90), (95, 95), (97, 122)),
    "CATEGORY_SPACE": (
        (9, 13),
        (32, 32),
        (160, 160),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
        (0xFEFF, 0xFEFF),
    ),
}


class _Unsupported(Exception):
    pass


@dataclass
class _Nfa:
    edges: list[list[tuple[Intervals, int]]] = field(default_factory=list)
    eps: list[list[int]] = field(default_factory=list)

    def state(self) -> int:
        if len(self.edges) >= MAX_STATES:
            raise _Unsupported("too large")
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1


def subset(old: str, new: str) -> bool | None:
    """True: every string matching `old` matches `new`; False: one does not; None: cannot tell."""
    return counterexample(old, new)[0]


@lru_cache(maxsize=256)
def counterexample(old: str, new: str) -> tuple[bool | None, str | None]:
    """(subset?, a string `old` matches and `new` does not, when there is one)."""
    try:
        a, b = _compile(old), _compile(new)
    except (_Unsupported, Exception):  # re's parser raises its own error types
        return None, None
    (na, sa, fa), (nb, sb, fb) = a, b
    points = sorted(
        {p for nfa in (na, nb) for edges in nfa.edges for label, _ in edges for lo, hi in label for p in (lo, hi + 1)}
        | {0}
    )
    atoms = [p for p in points if p <= _TOP]
    start = (_closure(na, {sa}), _closure(nb, {sb}))
    queue: deque[tuple[tuple[frozenset[int], frozenset[int]], str]] = deque([(start, "")])
    seen = {start}
    while queue:
        (xa, xb), text = queue.popleft()
        if fa in xa and fb not in xb:
            return False, text
        for atom in atoms:
            ya = _closure(na, _step(na, xa, atom))
            if not ya:
                continue
            pair = (ya, _closure(nb, _step(nb, xb, atom)))
            if pair not in seen:
                if len(seen) >= MAX_STATES:
                    return None, None
                seen.add(pair)
                queue.append((pair, text + chr(atom)))
    return True, None


def _step(nfa: _Nfa, states: Iterable[int], char: int) -> set[int]:
    return {to for s in states for label, to in nfa.edges[s] if any(lo <= char <= hi for lo, hi in label)}


def _closure(nfa: _Nfa, states: set[int]) -> frozenset[int]:
    stack, out = list(states), set(states)
    while stack:
        for to in nfa.eps[stack.pop()]:
            if to not in out:
                out.add(to)
                stack.append(to)
    return frozenset(out)


def _compile(pattern: str) -> tuple[_Nfa, int, int]:
    parsed: Any = importlib.import_module("re._parser").parse(pattern)
    if parsed.state.flags & ~0x20:  # anything but the default UNICODE flag (inline flags such as (?i))
        raise _Unsupported("flags")
    items = list(parsed)
    nfa = _Nfa()
    start, end = nfa.state(), nfa.state()
    alternatives = items[0][1][1] if len(items) == 1 and str(items[0][0]) == "BRANCH" else [items]
    for alternative in alternatives:
        body = list(alternative)
        head = bool(body) and _is_at(body[0], ("AT_BEGINNING", "AT_BEGINNING_STRING"))
        tail = bool(body) and _is_at(body[-1], ("AT_END", "AT_END_STRING"))
        body = body[int(head) : len(body) - int(tail)]
        s, e = nfa.state(), nfa.state()
        nfa.eps[start].append(s)
        if not head:
            nfa.edges[s].append((((0, _TOP),), s))
        inner_end = _sequence(nfa, body, s)
        nfa.eps[inner_end].append(e)
        if not tail:
            nfa.edges[e].append((((0, _TOP),), e))
        nfa.eps[e].append(end)
    return nfa, start, end


def _is_at(item: Any, names: tuple[str, ...]) -> bool:
    return str(item[0]) == "AT" and str(item[1]) in names


def _sequence(nfa: _Nfa, items: Iterable[Any], start: int) -> int:
    current = start
    for op, arg in items:
        current = _item(nfa, str(op), arg, current)
    return current


def _item(nfa: _Nfa, op: str, arg: Any, start: int) -> int:
    if op in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
        end = nfa.state()
        nfa.edges[start].append((_label(op, arg), end))
        return end
    if op == "SUBPATTERN":
        if arg[1] or arg[2]:
            raise _Unsupported("group flags")
        return _sequence(nfa, arg[3], start)
    if op == "BRANCH":
        end = nfa.state()
        for alternative in arg[1]:
            nfa.eps[_sequence(nfa, alternative, start)].append(end)
        return end
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, body = arg
        current = start
        for _ in range(low):
            current = _sequence(nfa, body, current)
        if high == importlib.import_module("re._constants").MAXREPEAT:
            loop = nfa.state()
            nfa.eps[current].append(loop)
            nfa.eps[_sequence(nfa, body, loop)].append(loop)
            return loop
        end = nfa.state()
        nfa.eps[current].append(end)
        for _ in range(high - low):
            current = _sequence(nfa, body, current)
            nfa.eps[current].append(end)
        return end
    raise _Unsupported(op)


def _label(op: str, arg: Any) -> Intervals:
    if op == "LITERAL":
        return ((arg, arg),)
    if op == "NOT_LITERAL":
        return _negate(((arg, arg),))
    if op == "ANY":
        return _negate(_LINE_ENDS)
    members = list(arg)
    negate = bool(members) and str(members[0][0]) == "NEGATE"
    spans: list[tuple[int, int]] = []
    for kind, value in members[int(negate) :]:
        kind = str(kind)
        if kind == "LITERAL":
            spans.append((value, value))
        elif kind == "RANGE":
            spans.append((value[0], value[1]))
        elif kind == "CATEGORY" and str(value) in _CLASSES:
            spans.extend(_CLASSES[str(value)])
        elif kind == "CATEGORY" and str(value).replace("NOT_", "") in _CLASSES:
            spans.extend(_negate(_CLASSES[str(value).replace("NOT_", "")]))
        else:
            raise _Unsupported(kind)
    merged = _merge(spans)
    return _negate(merged) if negate else merged


def _merge(spans: Iterable[tuple[int, int]]) -> Intervals:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _negate(spans: Intervals) -> Intervals:
    out, low = [], 0
    for lo, hi in _merge(spans):
        if lo > low:
            out.append((low, lo - 1))
        low = hi + 1
    if low <= _TOP:
        out.append((low, _TOP))
    return tuple(out)
