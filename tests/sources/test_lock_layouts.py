"""The lock reader places servers and tools at their keys in any layout, not only the one `render_lock` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiver.errors import InputError
from quiver.model import Lock
from quiver.sources.lock import parse_lock

DEMO_LOCK = Path(__file__).resolve().parents[2] / "examples" / "demo" / "quiver.lock.json"
LAYOUTS = {
    "indent4": {"indent": 4},
    "indent1": {"indent": 1},
    "tabs": {"indent": "\t"},
    "minified": {"separators": (",", ":")},
    "unsorted-spaced": {"separators": (" ,", " :  ")},
}


def at(text: str, line: int, column: int) -> str:
    return text.split("\n")[line - 1][column - 1 :]


def places(lock: Lock, text: str) -> list[tuple[str, str, str]]:
    """(server, tool or "", the text from its position on) for every server and tool, in order."""
    out = []
    for server in lock.servers.values():
        out.append((server.name, "", at(text, server.location.line, server.location.column)))
        out.extend((server.name, t.name, at(text, t.location.line, t.location.column)) for t in server.tools)
    return out


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_server_and_tool_is_placed_at_its_key_in_any_layout(layout: str) -> None:
    canonical = DEMO_LOCK.read_text(encoding="utf-8")
    data = json.loads(canonical)
    if layout.startswith("unsorted"):  # keys in another order: `name` before the schemas, servers reversed
        data["servers"] = dict(reversed(list(data["servers"].items())))
        for entry in data["servers"].values():
            for item in entry["tools"]:
                item["tool"] = dict(sorted(item["tool"].items(), key=lambda kv: kv[0] != "name"))
    text = json.dumps(data, ensure_ascii=False, **LAYOUTS[layout])  # type: ignore[arg-type]
    expected, lock = parse_lock(canonical, "quiver.lock.json"), parse_lock(text, "quiver.lock.json")
    assert sorted(lock.servers) == sorted(expected.servers)
    for name, server in lock.servers.items():
        assert [t.definition for t in server.tools] == [t.definition for t in expected.servers[name].tools]
    for server, tool, written in places(lock, text):
        key = json.dumps(tool if tool else server, ensure_ascii=False)
        if tool:
            assert written.startswith('"name"') and written.split(":", 1)[1].lstrip().startswith(key)
        else:
            assert written.startswith(key)
    assert all(line > 0 for _, line in _locations(lock))


def _locations(lock: Lock) -> list[tuple[str, int]]:
    return [(s.name, s.location.line) for s in lock.servers.values()] + [
        (t.name, t.location.line) for s in lock.servers.values() for t in s.tools
    ]


def test_a_repeated_tool_name_keeps_the_place_of_each_entry() -> None:
    tool = {"name": "search", "inputSchema": {"type": "object"}}
    entries = [{"tool": tool}, {"tool": {"name": "other", "inputSchema": {}}}, {"tool": tool}]
    text = json.dumps({"servers": {"s": {"tools": entries}}}, separators=(",", ":"))
    lock = parse_lock(text, "quiver.lock.json")
    first, second = (t for t in lock.servers["s"].tools if t.name == "search")
    assert (first.location.line, second.location.line) == (1, 1)
    assert first.location.column < second.location.column
    assert text[second.location.column - 1 :].startswith('"name":"search"')


def test_a_tool_entry_without_a_name_is_an_error_at_the_entry() -> None:
    text = '{"servers": {"s": {"tools": [\n  {"tool": {"name": "a", "inputSchema": {}}},\n  {"tool": {}}]}}}'
    with pytest.raises(InputError) as caught:
        parse_lock(text, "quiver.lock.json")
    assert caught.value.one_line().startswith("quiver.lock.json:3:3: server `s` has a tool entry without `tool.name`")
