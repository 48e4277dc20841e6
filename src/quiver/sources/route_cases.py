"""Routing case files (`.quiver/routes.yaml`, the `routes` config key): the one reader.

A list of `{query, expect: server/tool, agent?, k?}` entries, or a mapping whose `cases` key holds that list;
a malformed entry is an InputError at its file:line:col. quiver.routes ranks and scores the cases.
"""

from __future__ import annotations

from dataclasses import dataclass

from quiver.errors import InputError, Position
from quiver.sources._yaml import YNode, parse_yaml
from quiver.suggest import did_you_mean

DEPTH = 10  # results read per query (the largest `k`); a tool ranked lower has no rank and scores 0
DEFAULT_K = 5
_KEYS = ("query", "expect", "agent", "k")


@dataclass(frozen=True, slots=True)
class RouteCase:
    """One routing case: a request and the tool that should serve it."""

    query: str
    server: str
    tool: str
    agent: str | None
    k: int
    position: Position

    @property
    def expect(self) -> str:
        return f"{self.server}/{self.tool}"

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies a case across runs: agent, query and expected tool (not its line)."""
        return (self.agent or "", self.query, self.expect)


def parse_cases(text: str, path: str) -> tuple[RouteCase, ...]:
    """The cases of a routes file; a malformed entry is an InputError at its file:line:col."""
    root = parse_yaml(text, path)
    if root.value is None:
        return ()
    entries = root
    if isinstance(root.value, dict) and "cases" in root.children:
        for key in root.children:
            if key != "cases":
                raise _error(path, root, f"unknown key `{key}` in a routes file", "keep the cases under `cases:`", key)
        entries = root.children["cases"]
    if not isinstance(entries.value, list):
        raise _error(path, entries, "a routes file is a list of cases", "start each case with `- query: ...`")
    return tuple(_case(item, path) for item in entries.items)


def _case(node: YNode, path: str) -> RouteCase:
    if not isinstance(node.value, dict):
        raise _error(path, node, "a case is a mapping", "write `- query: ...` with `expect: server/tool` under it")
    for key in node.children:
        if key not in _KEYS:
            raise _error(
                path, node, f"unknown key `{key}` in a case", did_you_mean(key, _KEYS, "keys: " + ", ".join(_KEYS)), key
            )
    query = node.get("query")
    if query is None or not isinstance(query.value, str) or not query.value.strip():
        raise _error(path, query or node, "a case needs a `query` (text)", "write the request as a user would")
    expect = node.get("expect")
    if expect is None or not isinstance(expect.value, str) or expect.value.count("/") < 1:
        raise _error(path, expect or node, "a case needs `expect: server/tool`", "name the server and the tool")
    server, tool = expect.value.strip().split("/", 1)
    if not server or not tool:
        raise _error(path, expect, f"`{expect.value}` is not `server/tool`", "name the server and the tool")
    agent = node.get("agent")
    if agent is not None and (not isinstance(agent.value, str) or not agent.value.strip()):
        raise _error(path, agent, "`agent` must be an agent id", "use the agent file's name without `.agent.md`")
    k = node.get("k")
    if k is not None and (not isinstance(k.value, int) or isinstance(k.value, bool) or not 1 <= k.value <= DEPTH):
        raise _error(path, k, f"`k` must be a whole number from 1 to {DEPTH}", f"the default is {DEFAULT_K}")
    return RouteCase(
        query=query.value.strip(),
        server=server,
        tool=tool,
        agent=agent.value.strip() if agent is not None and isinstance(agent.value, str) else None,
        k=k.value if k is not None and isinstance(k.value, int) else DEFAULT_K,
        position=Position(path, node.line, node.column),
    )


def _error(path: str, node: YNode, message: str, hint: str, key: str | None = None) -> InputError:
    line, column = node.key_positions.get(key, (node.line, node.column)) if key else (node.line, node.column)
    return InputError(message, position=Position(path, line, column), hint=hint)
