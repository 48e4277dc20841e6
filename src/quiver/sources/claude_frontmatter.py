"""Claude Code's second try at frontmatter that is not valid YAML, as its 2.1.332 build does it.

Claude Code parses agent and skill frontmatter with Bun's YAML parser; when that fails it quotes every
`key: value` line whose unquoted value holds a character YAML reads as syntax (`{}[]*&#!|>%@` and the
backquote, or `: `), turns leading tabs into two spaces each, and parses again. A subagent whose
`description` holds `Triggers on: 'GDPR'` is therefore listed by Claude Code, where every other YAML reader
(Copilot, VS Code, linters, PyYAML) refuses the file. quiver reads such a file for Claude Code as Claude Code
does, and says so (AGT026), so the agent is neither dropped nor an error.

Source: the frontmatter reader of Claude Code 2.1.332's native build (`_u`, `DDr`), recorded: a subagent with
such a description is listed in the `Agent` tool's agent list of the first request (docs/hosts.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from quiver.errors import InputError
from quiver.model import Location, RepairedValue
from quiver.sources._yaml import YNode, parse_yaml

# Claude Code 2.1.332: `Su=/[{}[\]*&#!|>%@`]|: /` and `/^([a-zA-Z_-]+):\s+(\S.*)$/`
_SYNTAX = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_LINE = re.compile(r"^([a-zA-Z_-]+):\s+(\S.*)$")
_LEADING_TABS = re.compile(r"^\t+", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Quoted:
    """A value Claude Code quotes: its key, its 1-based line within the frontmatter and the column where the
    value starts, the value as written and as Claude Code rewrites it."""

    key: str
    line: int
    column: int
    value: str
    rewritten: str


@dataclass(frozen=True, slots=True)
class Repair:
    text: str
    quoted: tuple[Quoted, ...]


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_flow_list(value: str) -> bool:
    """Claude Code keeps a `[...]` value that parses as a list; a YAML flow sequence of plain items here."""
    import yaml

    try:
        return isinstance(yaml.safe_load(value), list)
    except yaml.YAMLError:
        return False


def claude_code_repair(frontmatter: str) -> Repair | None:
    """The frontmatter as Claude Code rewrites it after a failed parse, or None when it changes nothing."""
    lines: list[str] = []
    quoted: list[Quoted] = []
    for number, line in enumerate(frontmatter.split("\n"), start=1):
        match = _LINE.match(line)
        value = match.group(2) if match else ""
        if (
            match is None
            or (value.startswith('"') and value.endswith('"'))
            or (value.startswith("'") and value.endswith("'"))
            or (value.startswith("[") and value.endswith("]") and _is_flow_list(value))
            or not _SYNTAX.search(value)
        ):
            lines.append(line)
            continue
        rewritten = _quote(value)
        lines.append(f"{match.group(1)}: {rewritten}")
        quoted.append(Quoted(match.group(1), number, match.start(2) + 1, value, rewritten))
    text = _LEADING_TABS.sub(lambda m: "  " * len(m.group(0)), "\n".join(lines))
    return Repair(text, tuple(quoted)) if text != frontmatter else None


@dataclass(frozen=True, slots=True)
class Parsed:
    """Frontmatter as its host reads it; `error` and `repaired` say what the host had to repair (else empty)."""

    node: YNode
    error: str = ""
    repaired: tuple[RepairedValue, ...] = ()


def parse_frontmatter(fm_text: str | None, rel: str, offset: int, *, claude_code: bool) -> Parsed:
    """Parse a file's frontmatter; for a file Claude Code reads (`claude_code`), as Claude Code does when it is
    not YAML. InputError when no reader of the file would take it."""
    if fm_text is None:
        return Parsed(YNode({}, 1, 1))
    try:
        return Parsed(parse_yaml(fm_text, rel, line_offset=offset))
    except InputError as exc:
        repair = claude_code_repair(fm_text) if claude_code else None
        if repair is None:
            raise
        try:
            node = parse_yaml(repair.text, rel, line_offset=offset)
        except InputError:
            raise exc from None
        repaired = tuple(
            RepairedValue(q.key, Location(rel, offset + q.line, q.column), q.value, q.rewritten) for q in repair.quoted
        )
        return Parsed(node, exc.message.removeprefix("invalid YAML: "), repaired)
