"""Read custom agent files: YAML frontmatter + Markdown body, every field with its position.

The reader is lenient about field *types* (a wrong type is treated as unset and left to lint);
it is strict about syntax: malformed YAML, duplicate keys or an alias bomb raise InputError.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from quiver.errors import InputError, Position
from quiver.model import JSON, Agent, Location, Server, ToolRef
from quiver.sources._yaml import YNode, parse_yaml
from quiver.sources.files import inside, read_text
from quiver.sources.mcp_config import servers_from_mapping

AGENT_GLOBS = (
    ".github/agents/*.md",
    ".claude/agents/*.md",
    ".github/chatmodes/*.chatmode.md",
)
# `fixtures`: test fixtures of agent tooling (quiver's own included) are not the repository's agents.
SKIP_DIRS = frozenset(
    {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__", ".tox", ".quiver", "fixtures"}
)
_FM_BOUNDARY = re.compile(r"^-{3,}[ \t]*\r?$", re.MULTILINE)


def agent_id(path: str) -> str:
    """Agent id = file name without `.agent.md`, `.chatmode.md` or `.md`."""
    name = path.rsplit("/", 1)[-1]
    for suffix in (".agent.md", ".chatmode.md", ".md"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def agent_kind(path: str) -> str:
    if path.startswith(".claude/") or "/.claude/" in path:
        return "claude"
    if path.endswith(".chatmode.md"):
        return "chatmode"
    return "copilot"


def discover_agents(root: Path, extra_globs: Iterable[str] = ()) -> list[str]:
    """Project-relative posix paths of every agent file, sorted."""
    found: set[str] = set()
    for pattern in (*AGENT_GLOBS, *extra_globs):
        for path in root.glob(pattern):
            if path.is_file() and inside(root, path.relative_to(root)):  # no symlinked way out of the project
                found.add(path.relative_to(root).as_posix())
    for dirpath, _dirnames, filenames in _walk(root):
        for name in filenames:
            if name.endswith(".agent.md"):
                found.add((dirpath / name).relative_to(root).as_posix())
    return sorted(found)


def _walk(root: Path) -> Iterable[tuple[Path, list[str], list[str]]]:
    import os

    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        yield Path(dirpath), dirnames, filenames


def split_frontmatter(text: str, path: str) -> tuple[str | None, int, str, int]:
    """Return (frontmatter text or None, line offset of the frontmatter, body, first body line)."""
    from frontmatter.default_handlers import YAMLHandler

    handler = YAMLHandler()
    if not handler.detect(text):
        return None, 0, text, 1
    first = _FM_BOUNDARY.search(text)
    assert first is not None
    second = _FM_BOUNDARY.search(text, first.end())
    if second is None:
        raise InputError(
            "frontmatter is not closed",
            position=Position(path, 1, 1),
            hint="end the YAML frontmatter with a line `---`",
        )
    fm_start = first.end() + 1 if text[first.end() : first.end() + 1] == "\n" else first.end()
    fm = text[fm_start : second.start()]
    offset = text.count("\n", 0, fm_start)
    body_start = second.end() + 1 if text[second.end() : second.end() + 1] == "\n" else second.end()
    body_line = text.count("\n", 0, body_start) + 1
    return fm, offset, text[body_start:], body_line


def read_agent(root: Path, rel: str) -> Agent:
    """Read one agent file (project-relative path)."""
    text = read_text(root / rel, rel)
    fm_text, offset, body, body_line = split_frontmatter(text, rel)
    node = parse_yaml(fm_text, rel, line_offset=offset) if fm_text is not None else YNode({}, 1, 1)
    if fm_text is not None and node.value is None:
        node = YNode({}, offset + 1, 1)
    if not isinstance(node.value, dict):
        raise InputError(
            "frontmatter is not a mapping",
            position=Position(rel, node.line, node.column),
            hint="write `key: value` lines between the `---` markers",
        )
    return build_agent(rel, node, body, body_line)


def build_agent(rel: str, node: YNode, body: str, body_line: int) -> Agent:
    fm: Mapping[str, JSON] = node.value
    key_locations = {k: Location(rel, line, col) for k, (line, col) in node.key_positions.items()}

    def text(key: str) -> str | None:
        value = fm.get(key)
        return value if isinstance(value, str) else None

    models: tuple[str, ...] = ()
    for key in ("models", "model"):
        value = fm.get(key)
        if isinstance(value, str) and value.strip():
            models = (value.strip(),)
            break
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            models = tuple(v.strip() for v in value)
            break

    servers: tuple[Server, ...] = ()
    mcp = node.get("mcp-servers")
    if mcp is not None and isinstance(mcp.value, dict):
        servers = tuple(servers_from_mapping(mcp, rel, dialect="agent"))

    dtl = fm.get("deferred-tool-loading")
    return Agent(
        id=agent_id(rel),
        path=rel,
        kind=agent_kind(rel),  # type: ignore[arg-type]  # agent_kind returns one of the Literal values
        location=Location(rel, 1, 1),
        frontmatter=fm,
        key_locations=key_locations,
        body=body,
        body_line=body_line,
        name=text("name"),
        description=text("description"),
        target=text("target"),
        tools=_tool_refs(node.get("tools"), rel),
        models=models,
        mcp_servers=servers,
        deferred_tool_loading=dtl is True,
    )


def _tool_refs(node: YNode | None, rel: str) -> tuple[ToolRef, ...] | None:
    """`tools`: a list, or a comma-separated string; None when unset or of another type."""
    if node is None or node.value is None:
        return None
    if isinstance(node.value, str):
        refs = []
        offset = 1 if node.quoted else 0  # a quoted scalar's text starts after the quote
        raw = node.value
        for part in raw.split(","):
            stripped = part.strip()
            lead = len(part) - len(part.lstrip())
            if stripped:
                refs.append(ToolRef(stripped, Location(rel, node.line, node.column + offset + lead)))
            offset += len(part) + 1
        return tuple(refs)
    if isinstance(node.value, list):
        return tuple(
            ToolRef(item.value.strip(), Location(rel, item.line, item.column))
            for item in node.items
            if isinstance(item.value, str) and item.value.strip()
        )
    return None
