"""Usage recording: one JSON line per gateway event, the raw material of `quiver stats` and `quiver advise`.

Where: `.quiver/usage/<agent-id>.jsonl` under the project root (`usage_path`), one file per agent,
because one gateway serves one manifest. Several gateways of the same agent may append to the same
file at once: the file is opened with `O_APPEND` and every event is one `os.write` of one whole line,
so lines never interleave (the kernel moves the offset to the end and writes in one step).

Line format (version 1, keys sorted, compact JSON): every line has `v`, `ts` (seconds since the epoch
from the injected clock), `event`, `session` and `agent`, plus:

    session_started  initial_tokens (tools/list + instructions the model reads before any call),
                     preloaded_tools (how many tools were preloaded)
    discovery        kind: search | list_servers | list_tools | describe; tokens (response size) or null
    tool_loaded      server, tool, via: describe | call (older logs: search), tokens (schema tokens joining tools/list)
    call             server, tool, outcome: ok | error | validation_failed | refused, preloaded (bool)
    session_ended    (nothing more)

Recording never breaks serving: if the file cannot be written the recorder logs one warning and
turns itself off. Standard library only, so importing it costs nothing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol

from quiver.jsonout import compact_line
from quiver.sources.usage_log import FORMAT_VERSION, USAGE_DIR, UsageLog, read_usage

__all__ = [
    "USAGE_DIR",
    "DiscoveryKind",
    "NullRecorder",
    "Outcome",
    "Recorder",
    "UsageLog",
    "UsageRecorder",
    "project_root_of",
    "read_usage",
    "usage_path",
]

logger = logging.getLogger(__name__)

PROJECT_MARKERS = ("quiver.toml", "pyproject.toml", ".mcp.json", ".git")
MAX_OPEN_SESSIONS = 4096  # sessions remembered for their agent id when the gateway never ends them

DiscoveryKind = Literal["search", "list_servers", "list_tools", "describe"]
LoadVia = Literal["search", "describe", "call"]
Outcome = Literal["ok", "error", "validation_failed", "refused"]

DISCOVERY_KINDS: tuple[str, ...] = ("search", "list_servers", "list_tools", "describe")
LOAD_VIAS: tuple[str, ...] = ("search", "describe", "call")
OUTCOMES: tuple[str, ...] = ("ok", "error", "validation_failed", "refused")


def usage_path(root: Path, agent_id: str) -> Path:
    """The usage file of one agent: `<root>/.quiver/usage/<agent-id>.jsonl`."""
    return root / USAGE_DIR / f"{agent_id}.jsonl"


def project_root_of(manifest: Path, *, default: Path) -> Path:
    """The project a compiled manifest belongs to: its nearest ancestor holding a quiver config, an MCP
    config or `.git` (`quiver stats -C ROOT` reads `ROOT/.quiver/usage/`); `default` when there is none."""
    for folder in manifest.resolve().parents:
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    return default


class Recorder(Protocol):
    """What the gateway calls; `UsageRecorder` writes, `NullRecorder` does nothing."""

    def session_started(
        self, session_id: str, agent: str, initial_tokens: int, *, preloaded_tools: int = 0
    ) -> None: ...

    def discovery(self, session_id: str, kind: DiscoveryKind, *, tokens: int | None = None) -> None: ...

    def tool_loaded(self, session_id: str, server: str, tool: str, *, via: LoadVia, tokens: int) -> None: ...

    def call(self, session_id: str, server: str, tool: str, *, outcome: Outcome, preloaded: bool) -> None: ...

    def session_ended(self, session_id: str) -> None: ...

    def close(self) -> None: ...


class UsageRecorder:
    """Appends one JSON line per event to `path` (created with its directory on the first event).

    `agent` is the agent id stamped on events of sessions whose start this recorder did not see (one
    gateway serves one agent, so the gateway passes its manifest's agent id).
    """

    def __init__(self, path: Path, *, clock: Callable[[], float], agent: str | None = None) -> None:
        self.path = path
        self._clock = clock
        self._agent = agent
        self._fd: int | None = None
        self._broken = False
        self._agents: dict[str, str] = {}  # session id -> agent id, until the session ends

    def session_started(self, session_id: str, agent: str, initial_tokens: int, *, preloaded_tools: int = 0) -> None:
        self._agents[session_id] = agent
        while len(self._agents) > MAX_OPEN_SESSIONS:
            del self._agents[next(iter(self._agents))]
        self._write(
            "session_started", session_id, {"initial_tokens": int(initial_tokens), "preloaded_tools": preloaded_tools}
        )

    def discovery(self, session_id: str, kind: DiscoveryKind, *, tokens: int | None = None) -> None:
        _check(kind, DISCOVERY_KINDS, "kind")
        self._write("discovery", session_id, {"kind": kind, "tokens": tokens})

    def tool_loaded(self, session_id: str, server: str, tool: str, *, via: LoadVia, tokens: int) -> None:
        _check(via, LOAD_VIAS, "via")
        self._write("tool_loaded", session_id, {"server": server, "tool": tool, "via": via, "tokens": int(tokens)})

    def call(self, session_id: str, server: str, tool: str, *, outcome: Outcome, preloaded: bool) -> None:
        _check(outcome, OUTCOMES, "outcome")
        self._write(
            "call", session_id, {"server": server, "tool": tool, "outcome": outcome, "preloaded": bool(preloaded)}
        )

    def session_ended(self, session_id: str) -> None:
        self._write("session_ended", session_id, {})
        self._agents.pop(session_id, None)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> UsageRecorder:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _write(self, event: str, session_id: str, fields: dict[str, Any]) -> None:
        if self._broken:
            return
        record = {
            "v": FORMAT_VERSION,
            "ts": self._clock(),
            "event": event,
            "session": session_id,
            "agent": self._agents.get(session_id, self._agent),
            **fields,
        }
        line = compact_line(record)
        try:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            written = os.write(self._fd, line)
            if written != len(line):  # a full disk; the partial line is skipped by the reader
                raise OSError(f"short write ({written} of {len(line)} bytes)")
        except OSError as exc:
            self._broken = True
            logger.warning("usage recording stopped: cannot append to %s: %s", self.path, exc)


class NullRecorder:
    """Records nothing: the gateway's default when usage recording is off."""

    def session_started(self, session_id: str, agent: str, initial_tokens: int, *, preloaded_tools: int = 0) -> None:
        pass

    def discovery(self, session_id: str, kind: DiscoveryKind, *, tokens: int | None = None) -> None:
        pass

    def tool_loaded(self, session_id: str, server: str, tool: str, *, via: LoadVia, tokens: int) -> None:
        pass

    def call(self, session_id: str, server: str, tool: str, *, outcome: Outcome, preloaded: bool) -> None:
        pass

    def session_ended(self, session_id: str) -> None:
        pass

    def close(self) -> None:
        pass


def _check(value: str, allowed: tuple[str, ...], name: str) -> None:
    if value not in allowed:
        raise ValueError(f"usage event: `{name}` must be one of {', '.join(allowed)}, not {value!r}")
