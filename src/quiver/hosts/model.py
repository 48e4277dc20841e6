"""The host model's shapes: which host, what it is told (a `SplitJob`), what it does (a `HostSplit`).

Pure data, no rules: each host's rules live in its own module (`claude_code.py`, `copilot_cli.py`, ...),
every fact with its source (docs/hosts.md lists them all).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from quiver.host_ids import HostId as HostId  # re-exported: the host model's callers read it here
from quiver.model import JSON, Agent, Load, Location, LockedTool, Server

SearchUnit = Literal["tools", "tokens", ""]


@dataclass(frozen=True, slots=True)
class ToolSearch:
    """Whether the host defers tools behind a search for this agent, and why.

    `threshold` is in `unit`: a tool count (Copilot CLI: built-ins and MCP tools together), or tokens
    (Claude Code's `auto:N`); `mcp_tools` is the MCP tools the agent carries; `measured` the tools or tokens
    the threshold was compared with.
    """

    active: bool
    reason: str
    mcp_tools: int
    threshold: int
    unit: SearchUnit = "tools"
    measured: int = 0


@dataclass(frozen=True, slots=True)
class Decision:
    """Why one tool is up front or deferred: the rule (`code`, a number for quiver's gateway rules), the text,
    where its cause is written, and the host fact behind it (`basis`: the host version it was measured on,
    or the doc it encodes)."""

    rule: int
    code: str
    text: str
    source: Location | None
    host: str = ""
    basis: str = ""


@dataclass(frozen=True, slots=True)
class Carried:
    """One MCP tool an agent carries, as a host's split sees it: `via` is the `tools` entry that reached it,
    `named` whether the entry named it (not a wildcard)."""

    server: Server
    tool: LockedTool
    via: Location
    named: bool


@dataclass(frozen=True, slots=True)
class BuiltinRef:
    """A `tools` entry that names one of the host's own tools: `sent` are the host's tool names it stands for
    (empty when the host knows the name but does not send such a tool in the version measured: `note` says
    why)."""

    ref: str
    canonical: str
    kind: str  # alias | vscode | qualified | extension | claude
    location: Location
    sent: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class SplitJob:
    """What a host decides on: the agent, the model that runs it, the host's settings and the tools."""

    agent: Agent
    model: str | None
    model_source: str
    settings: Mapping[str, JSON]
    tools: Sequence[Carried]
    builtins: Sequence[BuiltinRef]
    explicit_tools: bool  # the agent lists its tools (else it gets the host's default set)
    session: bool = False  # the host's main session (`sessions` in quiver.toml), not a custom agent


@dataclass(frozen=True, slots=True)
class HostSplit:
    """A host's split of one agent's tools: a (load, decision) per `SplitJob.tools` entry, in order.

    `builtins_up` and `builtins_deferred` are the host's own tool names it sends up front and defers;
    `search_tool` its tool-search tool when it defers; `search_tool_tokens` what that tool's schema costs
    when the host adds it only to search deferred tools (0 when it is one of its built-ins anyway);
    `lists_deferred` whether the names of deferred tools are put in the context (Claude Code's reminder)."""

    tool_search: ToolSearch
    loads: tuple[tuple[Load, Decision], ...]
    builtins_up: tuple[str, ...] = ()
    builtins_deferred: tuple[str, ...] = ()
    search_tool: str | None = None
    search_tool_tokens: int = 0
    lists_deferred: bool = False
