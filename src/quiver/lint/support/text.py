"""The model-facing texts of a project, each with the field it came from and where to report it. Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from quiver.lint.support.schema_walk import Path, walk
from quiver.model import JSON, Agent, Location, LockedServer, LockedTool
from quiver.project import Project

_LISTED = 6
_SCHEMA_TEXT_KEYS = ("description", "title", "default")
_MAX_SHOWN = 60


class Text(NamedTuple):
    """One string a model reads: a tool's description, a parameter's description, an agent's description, ...

    A NamedTuple rather than a dataclass: a large catalog makes hundreds of thousands of them.
    """

    value: str
    field: str  # `description`, `inputSchema.properties.path.description`, `instructions`, ...
    owner: str  # "tool `github/search`", "server `github`", "agent `reviewer`"
    location: Location | None
    server: str | None = None
    tool: str | None = None
    agent: str | None = None


def shown(text: str, limit: int = _MAX_SHOWN) -> str:
    """Text safe to put between backticks in a message: one line, invisible characters escaped, cut short."""
    if len(text) <= limit and text.isascii() and text.isprintable() and "`" not in text and "  " not in text:
        return text.strip()
    out = []
    for ch in text:
        if ch == "`":
            out.append("'")
        elif ch.isprintable() and ch != "\u00ad":
            out.append(ch)
        elif ch in "\n\r\t":
            out.append(" ")
        else:
            out.append(f"\\u{ord(ch):04X}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08X}")
    flat = " ".join("".join(out).split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def tool_texts(tool: LockedTool) -> Iterator[Text]:
    """Name, title, annotations.title, description, and every description/title/string default in its schemas."""
    owner = f"tool `{tool.server}/{shown(tool.name)}`"
    definition = tool.definition

    def text(value: str, field: str) -> Text:
        return Text(value, field, owner, tool.location, tool.server, tool.name)

    yield text(tool.name, "name")
    for key in ("title", "description"):
        value = definition.get(key)
        if isinstance(value, str) and value:
            yield text(value, key)
    annotations = tool.annotations
    if isinstance(annotations.get("title"), str) and annotations["title"]:
        yield text(annotations["title"], "annotations.title")
    for schema_key in ("inputSchema", "outputSchema"):
        for path, node in walk(definition.get(schema_key)):
            for key in _SCHEMA_TEXT_KEYS:
                value = node.get(key)
                if isinstance(value, str) and value:
                    yield text(value, ".".join((schema_key, *path, key)))


def server_texts(server: LockedServer) -> Iterator[Text]:
    """A locked server's `instructions` and the free-text fields of its `serverInfo`."""
    owner = f"server `{server.name}`"
    if server.instructions:
        yield Text(server.instructions, "instructions", owner, server.location, server.name)
    for key in ("title", "description"):
        value = server.server_info.get(key)
        if isinstance(value, str) and value:
            yield Text(value, f"serverInfo.{key}", owner, server.location, server.name)


def _hidden_body_lines(agent: Agent) -> Iterator[Text]:
    """Lines of an agent's prompt holding bidi controls or tag characters: what renders is not what the
    model reads (Trojan Source, ASCII smuggling). A lone zero-width space (a common way to break a code
    fence) is left alone, and the rest of the body is the author's own prompt, not scanned for phrases.
    """
    if agent.body.isascii() or _HIDDEN.search(agent.body) is None:
        return  # one pass over the body for the usual prompt that holds none of them
    from quiver.lint.support.injection import invisible

    for offset, line in enumerate(agent.body.split("\n")):
        if any(_HIDDEN.match(chr(h.code_point)) for h in invisible(line)):
            where = Location(agent.path, agent.body_line + offset, 1)
            yield Text(line, "body", f"agent `{agent.id}`", where, agent=agent.id)


_HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\U000e0000-\U0010ffff]")  # bidi controls, tag characters


def project_texts(project: Project) -> Iterator[Text]:
    """Configured server descriptions (shown while their tools are deferred), agent descriptions, and
    agent prompt lines that hold invisible characters."""
    for name in sorted(project.servers):
        server = project.servers[name]
        if server.description:
            where = server.key_locations.get("description", server.location)
            yield Text(server.description, "description", f"server `{name}`", where, name)
    for agent in project.agents:
        if agent.description:
            where = agent.key_locations.get("description", agent.location)
            yield Text(agent.description, "description", f"agent `{agent.id}`", where, agent=agent.id)
        yield from _hidden_body_lines(agent)
        for server in agent.mcp_servers:
            if server.description:
                where = server.key_locations.get("description", server.location)
                owner = f"server `{server.name}` of agent `{agent.id}`"
                yield Text(server.description, "description", owner, where, server.name, agent=agent.id)


def describe(value: JSON) -> str:
    """A short, user-facing name for a JSON value's type."""
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int | float):
        return f"the number `{value}`"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'the string `"{shown}"`'
    if isinstance(value, list):
        odd = next((v for v in value if not isinstance(v, str)), None)
        return "a list" if odd is None else f"a list holding {describe(odd)}"
    return "a mapping"


def tool_values(tool: LockedTool) -> dict[str, Any]:
    """What every tool finding fills in: location, server, tool and the tool's name as messages show it."""
    return {"location": tool.location, "server": tool.server, "tool": tool.name, "shown_name": shown(tool.name)}


def listed(names: list[str]) -> str:
    """`a`, `b` and 3 more."""
    head = ", ".join(f"`{shown(n, 40)}`" for n in names[:_LISTED])
    return head + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def where(field: str, path: Path) -> str:
    return ".".join((field, *path))


def as_json(value: JSON) -> str:
    return shown(json.dumps(value, ensure_ascii=False, sort_keys=True), 40)
