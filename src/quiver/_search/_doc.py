"""One tool as the search index sees it (`SearchDoc`): its own module so the pair rules can use it without
importing the ranking (`quiver.search` re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SearchDoc:
    """One tool as the index sees it."""

    server: str
    tool: str
    description: str = ""
    params: tuple[tuple[str, str], ...] = ()  # (parameter name, parameter description)
    server_description: str = ""
    examples: tuple[str, ...] = ()  # requests the user wrote for this tool (config `examples`)
    required_numbers: int = 0  # required parameters typed number or integer (coordinates, ids, counts)
