"""`--since` values, one parser for every command that takes them (`quiver stats`, `quiver ledger list/export`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from quiver.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, *, now: float) -> float:
    """A duration back from `now` (`90s`, `30m`, `12h`, `7d`, `2w`) or an ISO date/time (UTC if naive) -> epoch s."""
    match = _DURATION.match(text)
    if match:
        return now - float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since `{text}` is neither a duration nor an ISO date",
            hint="for example --since 7d, --since 12h or --since 2025-06-01",
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
