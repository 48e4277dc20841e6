"""The shadow log (`quiver advise --shadow FILE`): JSON lines of tool calls made without quiver; the one reader.

Each line: `{"session": "...", "tool": "server/tool", "timestamp": 1750000000 | "2025-06-15T10:00:00Z",
"agent": "..."}` (`agent` optional).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from quiver.errors import InputError, Position
from quiver.sources.files import read_text


@dataclass(frozen=True, slots=True)
class ShadowCall:
    """One line of a log of tool calls made without quiver."""

    session: str
    tool: str  # "server/tool"
    timestamp: float


def read_shadow_log(path: Path) -> list[tuple[ShadowCall, str | None]]:
    """The shadow log's calls, each with the agent its line names (if any)."""
    text = read_text(path, str(path))
    calls = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = Position(str(path), number, 1)
        try:
            value = json.loads(line)
            session, tool, stamp = value["session"], value["tool"], value["timestamp"]
            if not isinstance(tool, str) or "/" not in tool:
                raise ValueError("`tool` must be `server/tool`")
            if isinstance(stamp, str):
                moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
                stamp = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
            agent = value.get("agent")
            calls.append((ShadowCall(str(session), tool, float(stamp)), str(agent) if agent is not None else None))
        except (ValueError, TypeError, KeyError, RecursionError) as exc:  # RecursionError: nested too deep
            raise InputError(
                f"not a shadow log line ({type(exc).__name__}: {str(exc)[:200]})",
                position=where,
                hint='each line: {"session": "...", "tool": "server/tool", "timestamp": 1750000000}',
            ) from None
    if not calls:
        raise InputError("the shadow log has no calls", position=Position(str(path)))
    return calls
