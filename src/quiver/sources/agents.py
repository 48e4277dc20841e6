"""Read custom agent files: YAML frontmatter + Markdown body, every field with its position.

The reader is lenient about field *types* (a wrong type is treated as unset and left to lint);
it is strict about syntax: malformed YAML, duplicate keys or an alias bomb raise InputError, except where the
agent's host reads such a file anyway (a Claude Code subagent: sources.claude_frontmatter), where the agent
is read as that host reads it and keeps what was repaired for lint (AGT026).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from quiver.errors import InputError, Position
from quiver.globs import AgentGlob, matches_any
from quiver.model import JSON, Agent, AgentKind, Dialect, Location, Server, ToolRef
from quiver.sources._yaml import YNode
from quiver.sources.claude_frontmatter import parse_frontmatter
from quiver.sources.files import inside, read_text
from quiver.sources.mcp_config import servers_from_mapping

# Where hosts look for agent files, and the format each location holds (DESIGN §2).
AGENT_GLOBS: tuple[tuple[str, AgentKind], ...] = (
    (".github/agents/*.md", "copilot"),
    (".claude/agents/*.md", "claude"),
    (".github/chatmodes/*.chatmode.md", "chatmode"),
)
# `fixtures`: test fixtures of agent tooling (quiver's own included) are not the repository's agents.
SKIP_DIRS = frozenset(
    {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__", ".tox", ".quiver", "fixtures"}
)
# A folder's README or index describes the agents beside it; it is an agent only when a glob names it.
NOT_AGENTS = frozenset({"readme.md", "index.md", "contributing.md", "changelog.md", "license.md"})
PLUGIN_MANIFEST = ".claude-plugin/plugin.json"
_FM_BOUNDARY = re.compile(r"^-{3,}[ \t]*\r?$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class AgentFile:
    """An agent file found by discovery: where, in which format, under which id, and what found it."""

    path: str
    kind: AgentKind
    id: str
    origin: str
    host: str | None = None
    listed: bool = True  # False: a file beside a plugin's listed agents that its plugin.json leaves out


def agent_id(path: str) -> str:
    """Agent id = file name without `.agent.md`, `.chatmode.md` or `.md`."""
    name = path.rsplit("/", 1)[-1]
    for suffix in (".agent.md", ".chatmode.md", ".md"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def agent_kind(path: str) -> AgentKind:
    if path.startswith(".claude/") or "/.claude/" in path:
        return "claude"
    if path.endswith(".chatmode.md"):
        return "chatmode"
    return "copilot"


def discover_agents(root: Path, globs: Iterable[AgentGlob] = (), exclude: Sequence[str] = ()) -> list[AgentFile]:
    """Every agent file of the project, sorted by path: the hosts' own locations, `*.agent.md` anywhere,
    Claude Code plugins (`.claude-plugin/plugin.json`: ids `plugin:agent`) and the config's `agents` globs.
    A file an `exclude` glob matches is left out, and so is a README or index file a wildcard reached."""
    found: dict[str, AgentFile] = {}

    def add(item: AgentFile, named: bool = False) -> None:
        name = item.path.rsplit("/", 1)[-1].lower()
        known = found.get(item.path)
        if known is not None and (known.listed or not item.listed):
            return  # found already (an unlisted plugin file found again as an agent becomes one)
        if matches_any(item.path, tuple(exclude)) or (name in NOT_AGENTS and not named):
            return
        found[item.path] = item

    for pattern, kind in AGENT_GLOBS:
        for rel in _glob(root, pattern):
            add(AgentFile(rel, kind, agent_id(rel), f"`{pattern}`"))
    for rel in _walk_files(root):
        if rel.endswith(".agent.md"):
            add(AgentFile(rel, "copilot", agent_id(rel), "a `*.agent.md` file"))
        elif rel.endswith(PLUGIN_MANIFEST):
            for item in _plugin_agents(root, rel):
                add(item)
    for entry in globs:
        named = not any(c in entry.path.rsplit("/", 1)[-1] for c in "*?[")
        origin = f"`agents` glob `{entry.path}`"
        for rel in _glob(root, entry.path):
            kind = entry.kind or agent_kind(rel)
            add(AgentFile(rel, kind, agent_id(rel), origin, entry.host), named)
    return [found[rel] for rel in sorted(found)]


def _glob(root: Path, pattern: str) -> list[str]:
    out = []
    for path in root.glob(pattern):
        if path.is_file() and inside(root, path.relative_to(root)):  # no symlinked way out of the project
            rel = path.relative_to(root).as_posix()
            if not SKIP_DIRS.intersection(rel.split("/")[:-1]):
                out.append(rel)
    return sorted(out)


def _walk_files(root: Path) -> Iterable[str]:

    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS or d == ".claude-plugin")
        base = Path(dirpath).relative_to(root).as_posix()
        for name in sorted(filenames):
            yield name if base == "." else f"{base}/{name}"


def _plugin_agents(root: Path, manifest: str) -> list[AgentFile]:
    """A Claude Code plugin's subagents: its `agents/` folder and its `agents` paths (files or folders).
    Claude Code names them `<plugin name>:<agent>` (measured on 2.1.332 with `--plugin-dir`)."""

    plugin_dir = manifest[: -len(PLUGIN_MANIFEST)].rstrip("/")
    base = root / plugin_dir if plugin_dir else root
    try:
        data = json.loads((root / manifest).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return []  # an unreadable plugin.json: its agents are not found here (lint's QVR reports unreadable files)
    if not isinstance(data, dict):
        return []
    name = data.get("name") if isinstance(data.get("name"), str) and data["name"].strip() else base.name
    paths = data.get("agents", [])
    if isinstance(paths, str):
        paths = [paths]
    # Custom `agents` paths supplement the default `agents/` folder, they do not replace it (Claude Code
    # plugins reference, "Path behavior rules")
    paths = ["./agents", *paths] if isinstance(paths, list) else ["./agents"]
    out = []
    origin = f"Claude Code plugin `{name}` ({manifest})"
    for entry in paths if isinstance(paths, list) else []:
        if not isinstance(entry, str):
            continue
        target = (base / entry).resolve()
        try:
            target.relative_to(root.resolve())
        except ValueError:
            continue  # outside the project
        files = sorted(target.glob("*.md")) if target.is_dir() else [target] if target.is_file() else []
        for file in files:
            rel = file.relative_to(root.resolve()).as_posix()
            out.append(AgentFile(rel, "claude", f"{name}:{agent_id(rel)}", origin))
    return out + _unlisted_beside(root, base, out, f"plugin `{name}` lists its agents in {manifest}, and not this file")


def _unlisted_beside(root: Path, base: Path, listed: list[AgentFile], origin: str) -> list[AgentFile]:
    """Markdown files with frontmatter in the folders of a plugin's listed agent files that the list leaves
    out: Claude Code loads only what `agents` names, so such a file is never an agent there (AGT027)."""
    top = root.resolve()
    named = {item.path for item in listed}
    out = []
    default = (base / "agents").resolve()
    for folder in sorted({(top / item.path).parent for item in listed} - {default}):
        for file in sorted(folder.glob("*.md")):
            rel = file.relative_to(top).as_posix()
            if rel in named or file.name.lower() in NOT_AGENTS or not file.is_file():
                continue
            try:
                with file.open("rb") as handle:
                    if handle.read(3) != b"---":
                        continue
            except OSError:
                continue
            out.append(AgentFile(rel, "claude", agent_id(rel), origin, listed=False))
    return out


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


def read_agent(root: Path, rel: str, found: AgentFile | None = None) -> Agent:
    """Read one agent file (project-relative path), in the format and under the id discovery gave it."""
    text = read_text(root / rel, rel)
    fm_text, offset, body, body_line = split_frontmatter(text, rel)
    kind = found.kind if found is not None else agent_kind(rel)
    parsed = parse_frontmatter(fm_text, rel, offset, claude_code=kind == "claude")
    node = parsed.node
    if fm_text is not None and node.value is None:
        node = YNode({}, offset + 1, 1)
    if not isinstance(node.value, dict):
        raise InputError(
            "frontmatter is not a mapping",
            position=Position(rel, node.line, node.column),
            hint="write `key: value` lines between the `---` markers",
        )
    agent = build_agent(rel, node, body, body_line, found)
    return dataclasses.replace(agent, yaml_error=parsed.error, repaired=parsed.repaired) if parsed.error else agent


def build_agent(rel: str, node: YNode, body: str, body_line: int, found: AgentFile | None = None) -> Agent:
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

    kind = found.kind if found is not None else agent_kind(rel)
    servers: tuple[Server, ...] = ()
    mcp = node.get("mcpServers" if kind == "claude" else "mcp-servers")
    if mcp is not None and isinstance(mcp.value, dict):
        servers = tuple(servers_from_mapping(mcp, rel, dialect=Dialect.AGENT))

    dtl = fm.get("deferred-tool-loading")
    skills = fm.get("skills")
    if isinstance(skills, str):
        skills = [part.strip() for part in skills.split(",")]
    return Agent(
        id=found.id if found is not None else agent_id(rel),
        path=rel,
        kind=kind,
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
        disallowed=_tool_refs(node.get("disallowedTools"), rel) or () if kind == "claude" else (),
        skills=tuple(v for v in skills if isinstance(v, str) and v) if isinstance(skills, list) else (),
        host=found.host if found is not None else None,
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
