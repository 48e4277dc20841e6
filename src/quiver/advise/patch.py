"""The config change as patch text: a unified diff (`git apply` / `patch -p1`) of the config and agent files.

Pure: the change and the files' text in, the diff out. `[[mcp_servers]]` entries are edited in place
(or appended), keeping the file's other lines, comments and newline style; an agent file gains
`deferred-tool-loading: true` in its frontmatter.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping, Sequence

from quiver.advise.model import ConfigChange, ServerEdit

_HEADER = re.compile(r"^\s*\[\[\s*(tool\.quiver\.)?mcp_servers\s*\]\]\s*(#.*)?$")
_NAME = re.compile(r"""^\s*name\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_KEY = re.compile(r"^(\s*)([A-Za-z0-9_-]+)\s*=")


def render_patch(
    change: ConfigChange,
    *,
    config_file: str,
    config_text: str | None,
    agent_texts: Mapping[str, str],
) -> str:
    """The change as a unified diff (`git apply` / `patch -p1`) against the config and agent files.

    `config_file` is the quiver config's path relative to the root (`quiver.toml` when there is none
    yet, `config_text` None); `agent_texts` maps each agent file named in the change to its text.
    """
    parts = []
    if change.servers:
        new = _edit_toml(config_text or "", change.servers, tool_table=_tool_table(config_file, config_text))
        parts.append(_unified(config_file, config_text, new))
    for _, source in change.deferred_loading:
        parts.append(_unified(source, agent_texts[source], _edit_frontmatter(agent_texts[source])))
    return "".join(parts)


def _tool_table(config_file: str, text: str | None) -> bool:
    return config_file.endswith("pyproject.toml") or bool(text and re.search(r"(?m)^\s*\[tool\.quiver\]", text))


def _toml_value(value: bool | str | tuple[str, ...]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _toml_string(value)
    return "[" + ", ".join(_toml_string(v) for v in value) + "]"


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _edit_toml(text: str, edits: Sequence[ServerEdit], *, tool_table: bool) -> str:
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    appended: list[str] = []
    for edit in sorted(edits, key=lambda e: e.server):
        values: list[tuple[str, bool | str | tuple[str, ...]]] = []
        if edit.defer_tools is not None:
            values.append(("deferTools", edit.defer_tools))
        if edit.preload is not None:
            values.append(("preload", edit.preload))
        if edit.preload_tools is not None:
            values.append(("preload_tools", edit.preload_tools))
        if edit.server not in _blocks(lines):
            header = "[[tool.quiver.mcp_servers]]" if tool_table else "[[mcp_servers]]"
            entry = [header, f"name = {_toml_string(edit.server)}", *(f"{k} = {_toml_value(v)}" for k, v in values)]
            appended += [newline, *(line + newline for line in entry)]
            continue
        for key, value in values:
            start, end = _blocks(lines)[edit.server]
            line = f"{key} = {_toml_value(value)}{newline}"
            span = _key_span(lines, start, end, key)
            if span is not None:
                lines[span[0] : span[1]] = [span[2] + line]
                continue
            last = start
            for i in range(start + 1, end):
                if lines[i].strip() and not lines[i].lstrip().startswith("#"):
                    last = i
            if not lines[last].endswith(("\n", "\r")):
                lines[last] += newline
            lines.insert(last + 1, line)
    if appended:
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += newline
        lines += appended if lines else appended[1:]
    return "".join(lines)


def _key_span(lines: Sequence[str], start: int, end: int, key: str) -> tuple[int, int, str] | None:
    """Where `key = value` sits in an entry: (first line, past its last line, indentation)."""

    for i in range(start + 1, end):
        match = _KEY.match(lines[i])
        if match and match.group(2) == key:
            stop = i + 1
            while stop < end:  # a multi-line array ends where the value parses
                try:
                    tomllib.loads("".join(lines[i:stop]))
                    break
                except tomllib.TOMLDecodeError:
                    stop += 1
            return i, stop, match.group(1)
    return None


def _blocks(lines: Sequence[str]) -> dict[str, tuple[int, int]]:
    """`[[mcp_servers]]` entries by server name: (header line index, index past the entry's last line)."""
    out: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(lines):
        if not _HEADER.match(lines[i]):
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].lstrip().startswith("["):
            end += 1
        name = next((m.group(1) or m.group(2) for line in lines[i + 1 : end] if (m := _NAME.match(line))), None)
        if name is not None:
            out.setdefault(name, (i, end))
        i = end
    return out


def _edit_frontmatter(text: str) -> str:
    """Set `deferred-tool-loading: true` in an agent file's YAML frontmatter."""
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
    if not lines or lines[0].lstrip("\ufeff").rstrip("\r\n") != "---" or close is None:
        return text
    for i in range(1, close):
        if re.match(r"^deferred-tool-loading\s*:", lines[i]):
            lines[i] = f"deferred-tool-loading: true{newline}"
            return "".join(lines)
    lines.insert(close, f"deferred-tool-loading: true{newline}")
    return "".join(lines)


def _unified(rel: str, old: str | None, new: str) -> str:
    a = (old or "").splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = f"diff --git a/{rel} b/{rel}\n" + ("new file mode 100644\n" if old is None else "")
    body = []
    for line in difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{rel}", f"b/{rel}"):
        body.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return head + "".join(body) if body else ""
