"""The positioned JSON reader (`quiver.sources._json`): every key and value keeps the place it is written at,
in any layout, also when the values below a depth are read whole by the C scanner (`whole_from`, the lock)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from quiver.errors import InputError
from quiver.sources._json import Node, _Parser, parse_json

DOC = {
    "servers": {
        "git": {"tools": [{"sha256": "ab", "tokens": 12, "tool": {"name": "log", "inputSchema": {"type": "object"}}}]},
        'we"ird \u00e9\\name': {"tools": [], "serverInfo": {"name": "w", "version": "1.0"}},
    },
    "list": [1, -2.5e3, True, False, None, "x", [], {}, [[{"deep": {"name": "inner"}}]]],
    "encoding": "o200k_base",
}
LAYOUTS = {
    "indent2": json.dumps(DOC, indent=2),
    "indent4": json.dumps(DOC, indent=4),
    "indent1": json.dumps(DOC, indent=1),
    "tabs": json.dumps(DOC, indent="\t"),
    "minified": json.dumps(DOC, separators=(",", ":")),
    "spaced": json.dumps(DOC, separators=(" , ", " : ")),
    "ascii": json.dumps(DOC, indent=3, ensure_ascii=True),
}


def offset(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    assert 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1, (line, column)
    return sum(len(part) + 1 for part in lines[: line - 1]) + column - 1


def walk(node: Node, depth: int = 0) -> Iterator[tuple[str, Node, int]]:
    """(key or "", node, depth) for every positioned node below `node` (keys of objects, items of arrays)."""
    for key, child in node.children.items():
        yield key, child, depth + 1
        yield from walk(child, depth + 1)
    for item in node.items:
        yield "", item, depth + 1
        yield from walk(item, depth + 1)


def check_places(text: str, node: Node) -> int:
    """Every key position points at the key as written, every value position at the value: their count."""
    decoder = json.JSONDecoder()
    checked = 0
    for parent in (node, *(n for _, n, _ in walk(node))):
        for key, (line, column) in parent.key_positions.items():
            written, _ = decoder.raw_decode(text, offset(text, line, column))
            assert written == key
            checked += 1
        for child in (*parent.children.values(), *parent.items):
            value, _ = decoder.raw_decode(text, offset(text, child.line, child.column))
            assert value == child.value
            checked += 1
    return checked


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_key_and_value_is_placed_where_it_is_written_in_any_layout(layout: str) -> None:
    text = LAYOUTS[layout]
    node = parse_json(text, "f.json")
    assert node.value == DOC
    assert (node.line, node.column) == (1, 1)
    assert check_places(text, node) == check_places(LAYOUTS["indent2"], parse_json(LAYOUTS["indent2"], "f.json"))
    if layout == "minified":  # one line: only the columns tell the keys apart
        assert {n.line for _, n, _ in walk(node)} == {1}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("whole_from", [1, 2, 3, 6])
def test_values_below_whole_from_are_read_whole_and_the_rest_keeps_its_places(layout: str, whole_from: int) -> None:
    text = LAYOUTS[layout]
    full = parse_json(text, "f.json")
    shallow = parse_json(text, "f.json", whole_from=whole_from)
    assert shallow.value == DOC == json.loads(text)
    deep = {(key, n.line, n.column, d) for key, n, d in walk(full) if d <= whole_from}
    kept = {(key, n.line, n.column, d) for key, n, d in walk(shallow)}
    assert kept == deep
    assert all(not n.children and not n.items for _, n, d in walk(shallow) if d == whole_from)
    check_places(text, shallow)


def error(text: str, **options: int) -> str:
    with pytest.raises(InputError) as caught:
        parse_json(text, "f.json", **options)  # type: ignore[arg-type]
    return caught.value.one_line()


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"b": {"c": 1, "c": 2}}}',  # a duplicate key
        '{"a": {"b": [1, 2,]}}',  # a trailing comma
        '{"a": {"b": [1 2]}}',
        '{"a": {"b": {"c": NaN}}}',  # `json` reads NaN; JSON has none
        '{"a": {"b": {"c": -Infinity}}}',
        '{"a": {"b": {"c": ' + "9" * 5000 + "}}}",  # more digits than int() converts
        '{"a": {"b": ' + "[" * 5000 + "]" * 5000 + "}}",  # deeper than MAX_DEPTH and Python's recursion limit
        '{"a": {"b": "tab\tinside"}}',  # a control character in a string
        '{"a": {"b": "open}}',
        '{"a": {"b": {"c": 1}}',  # cut short
        '{"a":\n  {"b":\n    {"c": tru}}}',
        '{"a": 1, "a": 2}',  # a duplicate at the top, read by the fast path
        '{"a": [1, 2, 3,]}',
        '{"a" 1}',
        '{"a": "x\\qy"}',  # an unknown escape
        '{"a\\q": 1}',  # in a key
    ],
)
def test_a_fault_is_named_where_the_character_by_character_reader_names_it(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast paths (members by regular expression, values by the C scanner) leave every fault to the
    reader that names it: the same message at the same place as without them."""
    found = [error(text), error(text, whole_from=2), error(text, whole_from=1)]
    monkeypatch.setattr(_Parser, "fast_obj", _Parser.obj)
    monkeypatch.setattr(_Parser, "fast_arr", _Parser.arr)
    assert found == [error(text)] * 3


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 01}',  # read whole, `0` then `1`: "expected `,`" one column on, as `json` says
        # read whole, nesting is the C scanner's (docs/decisions.md, "Readers and size limits")
        "[" * 199 + '{"deep": [1, 2]}' + "]" * 199,
    ],
)
def test_the_fast_path_names_faults_as_the_character_by_character_reader(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = error(text)
    monkeypatch.setattr(_Parser, "fast_obj", _Parser.obj)
    monkeypatch.setattr(_Parser, "fast_arr", _Parser.arr)
    assert found == error(text)


def test_duplicate_keys_are_refused_at_every_depth_with_their_place() -> None:
    text = '{\n  "a": {\n    "x": {"k": 1,\n          "k": 2}\n  }\n}'
    assert error(text, whole_from=2).startswith("f.json:4:11: duplicate key `k` (first at line 3)")


def test_jsonc_keeps_every_position_and_its_comments() -> None:
    text = '{\n  // servers\n  "servers": {"a": {"command": "x",},}, /* end */\n}'
    node = parse_json(text, ".vscode/mcp.json", jsonc=True, whole_from=1)  # JSONC is never read whole
    servers = node.get("servers")
    assert servers is not None and servers.key_positions == {"a": (3, 15)}
    assert node.key_positions == {"servers": (3, 3)}
    assert servers.children["a"].key_positions == {"command": (3, 21)}
