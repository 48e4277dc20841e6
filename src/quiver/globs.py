"""Glob patterns over project-relative posix paths (`exclude`, `[[agents]] path`): `*` and `?` stay inside
one path segment, `**` spans any number of them, and a pattern without `/` matches a file name at any depth
(`README.md`), as in .gitignore. `AgentGlob` is one `[[agents]]` entry of the config: a glob and what it finds."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal


@functools.cache
def _compile(pattern: str) -> re.Pattern[str]:
    text = pattern.strip().lstrip("/")
    if "/" not in text.rstrip("/"):
        text = "**/" + text
    if text.endswith("/"):
        text += "**"
    out = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, pattern: str) -> bool:
    """Whether the project-relative posix `path` matches `pattern` (or lies under a folder it matches)."""
    compiled = _compile(pattern)
    if compiled.match(path):
        return True
    parts = path.split("/")
    return any(compiled.match("/".join(parts[:end])) for end in range(1, len(parts)))


def matches_any(path: str, patterns: tuple[str, ...]) -> bool:
    return any(matches(path, p) for p in patterns)


@dataclass(frozen=True, slots=True)
class AgentGlob:
    """An `agents` entry: a glob of agent files, and optionally the format they are in (`kind`: a folder of
    Claude Code subagents is `claude`) and the host that runs them."""

    path: str
    kind: Literal["copilot", "claude", "chatmode"] | None = None
    host: str | None = None
