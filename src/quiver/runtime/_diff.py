"""What changed between a pinned MCP Tool definition and the one an upstream serves now, in words."""

from __future__ import annotations

import json
from collections.abc import Mapping

from quiver.model import JSON

MAX_CHANGES = 8
_VALUE_CHARS = 60


def describe_changes(pinned: JSON, current: JSON, *, limit: int = MAX_CHANGES) -> list[str]:
    """One phrase per changed JSON path, such as `inputSchema.required: added "folder"`; at most `limit`."""
    changes: list[str] = []
    _walk(pinned, current, "", changes)
    if len(changes) > limit:
        changes = [*changes[:limit], f"and {len(changes) - limit} more change(s)"]
    return changes


def _walk(old: JSON, new: JSON, path: str, out: list[str]) -> None:
    if old == new:
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in old:
                out.append(f"{sub}: added {_short(new[key])}")
            elif key not in new:
                out.append(f"{sub}: removed (was {_short(old[key])})")
            else:
                _walk(old[key], new[key], sub, out)
        return
    if isinstance(old, list) and isinstance(new, list) and all(_scalar(v) for v in [*old, *new]):
        added = [v for v in new if v not in old]
        removed = [v for v in old if v not in new]
        parts = [f"added {_short(v)}" for v in added] + [f"removed {_short(v)}" for v in removed]
        out.append(f"{path or '(root)'}: {', '.join(parts) if parts else 'reordered'}")
        return
    out.append(f"{path or '(root)'}: {_short(old)} -> {_short(new)}")


def _scalar(value: JSON) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _short(value: JSON) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"
