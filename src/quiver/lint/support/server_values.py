"""The string values of an MCP server entry and where to point at them: shared by the MCP value rules
(lint/mcp/literal_secret.py, input_variables.py, insecure_server_url.py, download_piped_to_shell.py).
Holds no rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from quiver.findings.rule import Rule
from quiver.lint.support.locate import Sources
from quiver.lint.support.mcp_entries import Entry
from quiver.model import Finding, Location, Server


def string_values(server: Server) -> Iterator[tuple[str, str | None, str]]:
    """(field, key within the field, value) for every string the host may expand."""
    raw = server.raw
    for field in ("command", "url", "cwd"):
        value = raw.get(field)
        if isinstance(value, str):
            yield field, None, value
    args = raw.get("args")
    if isinstance(args, list):
        for value in args:
            if isinstance(value, str):
                yield "args", None, value
    for field in ("env", "headers"):
        mapping = raw.get(field)
        if isinstance(mapping, dict):
            for key, value in mapping.items():
                if isinstance(value, str):
                    yield field, key, value


class ServerValues:
    """One server entry under check: its start-up command's base name, positions of its values."""

    def __init__(self, entry: Entry, src: Sources) -> None:
        self.entry = entry
        self.src = src
        server = entry.server
        command = (server.command or "").replace("\\", "/").rsplit("/", 1)[-1].lower()
        self.command = command.removesuffix(".exe")

    def at(self, field: str, key: str | None, needle: str) -> Location:
        server = self.entry.server
        start = server.key_locations.get(field, server.location)
        return self.src.find(start, key, needle) if key else self.src.find(start, needle)

    def finding(self, rule: Rule, where: Location, **values: Any) -> Finding:  # Any: as Rule.finding's templates
        return rule.finding(location=where, agent=self.entry.agent, server=self.entry.name, **values)
