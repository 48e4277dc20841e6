"""A JSON / JSONC reader that keeps positions, rejects duplicate keys and reports errors as file:line:col.

Positions come from the text as written, in any layout (indented by 2, 4 or tabs, or all on one line):
a hand-written recursive-descent parser gives every key and value its line and column. Config files are
small and keep every position; a large machine-written file (the lock) asks for positions down to a
depth (`whole_from`) and the values below are read whole by the `json` module's C scanner (same
duplicate-key refusal; on any fault the value is read again here, so the error names its place).
`load_json_fast` is `json.loads` for files whose positions nobody asks for.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from quiver.errors import InputError, Position
from quiver.model import JSON

MAX_DEPTH = 200
_BLANK = re.compile(r"[ \t\r\n]*")
# the fast path of plain JSON: a whole member's key and colon, what follows a value, an empty container
_MEMBER = re.compile(r'[ \t\r\n]*"([^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*)"[ \t\r\n]*:[ \t\r\n]*')
_AFTER = re.compile(r"[ \t\r\n]*([,}\]])")
_EMPTY = re.compile(r"[ \t\r\n]*[}\]]")


@dataclass(slots=True)
class Node:
    """A parsed value with its position and, for objects, the position of every key."""

    value: JSON
    line: int
    column: int
    children: dict[str, Node] = field(default_factory=dict)  # object members by key
    items: list[Node] = field(default_factory=list)  # array elements
    key_positions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def get(self, key: str) -> Node | None:
        return self.children.get(key)


class _Parser:
    def __init__(self, text: str, path: str, *, jsonc: bool, whole_from: int | None = None) -> None:
        self.text = text
        self.path = path
        self.jsonc = jsonc
        self.whole_from = whole_from  # values this deep or deeper are read whole, without positions
        self.i = 0
        self.line = 1
        self.line_start = 0

    def fail(self, message: str, hint: str, at: tuple[int, int] | None = None) -> InputError:
        line, col = at or (self.line, self.i - self.line_start + 1)
        return InputError(message, position=Position(self.path, line, col), hint=hint)

    def advance(self, end: int) -> None:
        """Move to `end`, counting the newlines passed."""
        newlines = self.text.count("\n", self.i, end)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.i, end) + 1
        self.i = end

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.i < n:
            blank = _BLANK.match(text, self.i)
            if blank is not None and blank.end() > self.i:
                self.advance(blank.end())
            elif self.jsonc and text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            elif self.jsonc and text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment", "close the comment with */")
                chunk = text[self.i : end + 2]
                newlines = chunk.count("\n")
                if newlines:
                    self.line += newlines
                    self.line_start = self.i + chunk.rfind("\n") + 1
                self.i = end + 2
            else:
                return

    def parse(self) -> Node:
        self.skip()
        node = self.value(0)
        self.skip()
        if self.i < len(self.text):
            raise self.fail("unexpected text after the JSON value", "remove it, or wrap both values in an array")
        return node

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels", "flatten the document")
        if self.i >= len(self.text):
            raise self.fail("unexpected end of file", "the JSON document is cut short")
        ch = self.text[self.i]
        line, col = self.line, self.i - self.line_start + 1
        if self.whole_from is not None and depth >= self.whole_from:
            return self.whole(depth, line, col)
        if ch == "{":
            return self.obj(depth, line, col) if self.jsonc else self.fast_obj(depth, line, col)
        if ch == "[":
            return self.arr(depth, line, col) if self.jsonc else self.fast_arr(depth, line, col)
        if ch == '"':
            return Node(self.string(), line, col)
        return Node(self.scalar(), line, col)

    def whole(self, depth: int, line: int, col: int) -> Node:
        """The value here read by the C scanner, without positions inside it; a value it refuses (a syntax
        error, a duplicate key, a number too long, nesting too deep) is read again with positions."""
        try:
            value, end = _SCAN(self.text, self.i)
        except (StopIteration, ValueError, RecursionError, _DuplicateKey):  # JSONDecodeError is a ValueError
            limit, self.whole_from = self.whole_from, None
            try:
                return self.value(depth)  # raises the error at its place (or reads what C would not)
            finally:
                self.whole_from = limit
        self.advance(end)
        return Node(value, line, col)

    def fast_obj(self, depth: int, line: int, col: int) -> Node:
        """An object of plain JSON, a member per regular-expression match and its value by the C scanner
        when it is a scalar or read whole; anything unexpected (a syntax error, a duplicate key, a value
        the C scanner refuses) reads the object again with `obj`, which names the fault."""
        text, start = self.text, (self.i, self.line, self.line_start)
        node = Node({}, line, col)
        children, places, values = node.children, node.key_positions, node.value
        empty = _EMPTY.match(text, self.i + 1)
        if empty is not None and text[empty.end() - 1] == "}":
            self.advance(empty.end())
            return node
        whole = self.whole_from is not None and depth + 1 >= self.whole_from
        at = self.i + 1
        while depth < MAX_DEPTH:
            member = _MEMBER.match(text, at)
            if member is None:
                break
            key = member.group(1)
            if "\\" in key:
                try:
                    key = _scanstring(text, member.start(1), True)[0]
                except json.JSONDecodeError:
                    break
            if key in children:
                break
            self.advance(member.start(1) - 1)
            places[key] = (self.line, self.i - self.line_start + 1)
            self.advance(member.end())
            if whole or text[self.i : self.i + 1] not in ("{", "["):
                try:
                    value, end = _SCAN(text, self.i)
                except (StopIteration, ValueError, RecursionError, _DuplicateKey):
                    break
                children[key] = child = Node(value, self.line, self.i - self.line_start + 1)
                self.advance(end)
            else:
                children[key] = child = self.value(depth + 1)
            values[key] = child.value
            after = _AFTER.match(text, self.i)
            if after is None or after.group(1) == "]":
                break
            if after.group(1) == "}":
                self.advance(after.end())
                return node
            at = after.end()
        self.i, self.line, self.line_start = start
        return self.obj(depth, line, col)

    def fast_arr(self, depth: int, line: int, col: int) -> Node:
        """An array of plain JSON (see `fast_obj`; `arr` reads it again on a fault)."""
        text, start = self.text, (self.i, self.line, self.line_start)
        node = Node([], line, col)
        items, values = node.items, node.value
        empty = _EMPTY.match(text, self.i + 1)
        if empty is not None and text[empty.end() - 1] == "]":
            self.advance(empty.end())
            return node
        whole = self.whole_from is not None and depth + 1 >= self.whole_from
        at = self.i + 1
        while depth < MAX_DEPTH:
            blank = _BLANK.match(text, at)
            self.advance(blank.end() if blank is not None else at)
            if whole or text[self.i : self.i + 1] not in ("{", "["):
                try:
                    value, end = _SCAN(text, self.i)
                except (StopIteration, ValueError, RecursionError, _DuplicateKey):
                    break
                child = Node(value, self.line, self.i - self.line_start + 1)
                self.advance(end)
            else:
                child = self.value(depth + 1)
            items.append(child)
            values.append(child.value)
            after = _AFTER.match(text, self.i)
            if after is None or after.group(1) == "}":
                break
            if after.group(1) == "]":
                self.advance(after.end())
                return node
            at = after.end()
        self.i, self.line, self.line_start = start
        return self.arr(depth, line, col)

    def obj(self, depth: int, line: int, col: int) -> Node:
        self.i += 1
        node = Node({}, line, col)
        self.skip()
        if self.text.startswith("}", self.i):
            self.i += 1
            return node
        while True:
            self.skip()
            if self.jsonc and self.text.startswith("}", self.i) and node.children:
                self.i += 1
                return node
            if not self.text.startswith('"', self.i):
                raise self.fail("expected a quoted key", "object keys must be double-quoted strings")
            kline, kcol = self.line, self.i - self.line_start + 1
            key = self.string()
            if key in node.children:
                first = node.key_positions[key]
                raise self.fail(
                    f"duplicate key `{key}` (first at line {first[0]})",
                    "keep one of them; JSON readers disagree on which one wins",
                    at=(kline, kcol),
                )
            self.skip()
            if not self.text.startswith(":", self.i):
                raise self.fail(f"expected `:` after key `{key}`", 'write `"key": value`')
            self.i += 1
            self.skip()
            child = self.value(depth + 1)
            node.children[key] = child
            node.key_positions[key] = (kline, kcol)
            node.value[key] = child.value
            self.skip()
            if self.text.startswith(",", self.i):
                self.i += 1
                self.skip()
                if self.text.startswith("}", self.i):
                    if not self.jsonc:
                        raise self.fail("trailing comma before `}`", "remove the comma")
                    self.i += 1
                    return node
                continue
            if self.text.startswith("}", self.i):
                self.i += 1
                return node
            raise self.fail("expected `,` or `}`", "separate members with commas")

    def arr(self, depth: int, line: int, col: int) -> Node:
        self.i += 1
        node = Node([], line, col)
        self.skip()
        if self.text.startswith("]", self.i):
            self.i += 1
            return node
        while True:
            self.skip()
            child = self.value(depth + 1)
            node.items.append(child)
            node.value.append(child.value)
            self.skip()
            if self.text.startswith(",", self.i):
                self.i += 1
                self.skip()
                if self.text.startswith("]", self.i):
                    if not self.jsonc:
                        raise self.fail("trailing comma before `]`", "remove the comma")
                    self.i += 1
                    return node
                continue
            if self.text.startswith("]", self.i):
                self.i += 1
                return node
            raise self.fail("expected `,` or `]`", "separate array items with commas")

    def string(self) -> str:
        start = self.i
        end = start + 1
        text = self.text
        # find the closing quote, honouring escapes
        while True:
            q = text.find('"', end)
            nl = text.find("\n", end, q if q >= 0 else len(text))
            if q < 0 or nl >= 0:
                raise self.fail("unterminated string", "close the string with a double quote")
            backslashes = 0
            k = q - 1
            while text[k] == "\\":
                backslashes += 1
                k -= 1
            if backslashes % 2 == 0:
                break
            end = q + 1
        try:
            value, stop = _scanstring(text, start + 1, True)
        except json.JSONDecodeError as exc:
            raise self.fail(f"invalid string: {exc.msg}", "check the escape sequences") from None
        self.i = stop
        return str(value)

    def scalar(self) -> JSON:
        text = self.text
        for word, val in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, self.i):
                self.i += len(word)
                return val
        j = self.i
        while j < len(text) and text[j] in "+-0123456789.eE":
            j += 1
        token = text[self.i : j]
        if not token:
            raise self.fail(f"unexpected character {text[self.i]!r}", "this is not valid JSON here")
        try:
            number = json.loads(token)
        except json.JSONDecodeError:
            raise self.fail(f"invalid number {_clipped(token)}", "write a plain JSON number") from None
        except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
            raise self.fail(
                f"number of {len(token):,} characters is too long to read", "write it with fewer digits"
            ) from None
        self.i = j
        return number


def parse_json(text: str, path: str, *, jsonc: bool = False, whole_from: int | None = None) -> Node:
    """Parse JSON (or JSONC: comments and trailing commas) keeping positions. A BOM is ignored.

    `whole_from`: values at this depth or deeper (the root is depth 0) keep their own position but none
    inside them: they are read by the C scanner, for a large file (JSON only, not JSONC)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    return _Parser(text, path, jsonc=jsonc, whole_from=None if jsonc else whole_from).parse()


def load_json_fast(text: str, path: str) -> JSON:
    """`json.loads` with duplicate-key rejection and a file:line:col error, for large machine-written files."""
    if text.startswith("\ufeff"):
        text = text[1:]

    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON: {exc.msg}", position=Position(path, exc.lineno, exc.colno), hint="fix the syntax"
        ) from None
    except (_DuplicateKey, ValueError, RecursionError):
        # a duplicate key, a number too long to convert, nesting too deep: re-parse with positions to say where
        parse_json(text, path)
        raise InputError(
            "cannot read this JSON document", position=Position(path, 1, 1), hint="regenerate the file"
        ) from None


def _clipped(token: str) -> str:
    return repr(token) if len(token) <= 40 else f"{token[:40]!r}... ({len(token):,} characters)"


class _DuplicateKey(Exception):
    pass


def _unique_pairs(items: list[tuple[str, JSON]]) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    for key, value in items:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> JSON:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: `json` reads them, the positioned parser does not


# the C scanner (`json.loads` runs it): no positions, duplicate keys and NaN/Infinity refused as above
_SCAN: Callable[[str, int], tuple[JSON, int]] = json.scanner.make_scanner(
    json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_no_constant)  # type: ignore[arg-type]
)  # (typeshed types the C scanner's argument as the scanner class itself)
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
