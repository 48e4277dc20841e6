"""What every host module provides: a `Host` record of its facts and rule functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from quiver.hosts.model import BuiltinRef, Carried, HostId, HostSplit, SplitJob
from quiver.model import Location


def skill_lines(skills: Sequence[tuple[str, str]]) -> str:
    """Claude Code's listing of skills (name, description), as 2.1.332 puts it in a system reminder."""
    head = "The following skills are available for use with the Skill tool:\n\n"
    return head + "".join(f"- {name}: {description}\n" for name, description in skills) if skills else ""


def skill_xml(skills: Sequence[tuple[str, str]]) -> str:
    """Copilot CLI's listing of skills (name, description), as 1.0.102 puts it in its system prompt."""
    if not skills:
        return ""
    entries = "".join(
        f"<skill>\n  <name>{name}</name>\n  <description>{description}</description>\n  <location>project</location>\n"
        "</skill>\n"
        for name, description in skills
    )
    return f"<available_skills>\n{entries}</available_skills>\n"


@dataclass(frozen=True, slots=True)
class Host:
    """One host: its name, the version its rules were measured on (or the docs they encode), the `names`
    key of its model-facing tool names, its description limit, the settings quiver.toml may give it
    (`[hosts.<id>]`), and its rules: which `tools` entries name its own tools, how it splits an agent's
    tools, and what it does with quiver serve's tools."""

    id: HostId
    name: str
    version: str
    basis: str  # "measured on <host> <version>", or the docs the rules encode
    names_key: str
    description_limit: int | None
    settings: frozenset[str]
    builtin: Callable[[str, Location], BuiltinRef | None]
    split: Callable[[SplitJob], HostSplit] | None  # None: the caller decides what to defer (quiver's gateway rules)
    behind_gateway: Callable[[], str]
    bare_names_resolve: bool = True  # whether a bare MCP tool name in `tools` reaches the tool
    config_files: frozenset[str] | None = None  # the project MCP config files it reads (None: every one)
    config_basis: str = ""  # where that list comes from
    project_config: str = ".mcp.json"  # the file to define a project's servers in for this host
    skill_dirs: tuple[str, ...] = (".github/skills", ".claude/skills")  # the project skill folders it lists
    builtin_servers: frozenset[str] = frozenset()  # MCP servers the host brings itself (no config needed)
    # its own servers whose name wins over a user's server of that name in `server/tool` references
    shadowing_servers: frozenset[str] = frozenset()
    skill_listing: Callable[[Sequence[tuple[str, str]]], str] = skill_xml

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


def model_facing_tokens(item: Carried) -> int:
    """The tokens of one tool's schema as the lock recorded them (an estimate of 1 token per 4 bytes of
    its description when the lock has no count)."""
    if item.tool.tokens is not None:
        return item.tool.tokens
    return -(-len(item.tool.description.encode("utf-8")) // 4) + 20


def api_behind_gateway() -> str:
    """What a model API host does behind quiver's gateway: whatever its caller sends (both API hosts)."""
    return "an API caller sends what it chooses; quiver's export marks the deferred tools"
