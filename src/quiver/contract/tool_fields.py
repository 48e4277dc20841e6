"""The Tool fields of MCP 2025-11-25 and 2026-07-28 beside the schemas: `title` (and `annotations.title`),
`icons`, `execution.taskSupport`, and the `x-mcp-header` annotations of `inputSchema` properties. Pure: each
function returns (rule, message values) pairs for `diff.py` to turn into findings."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from quiver.contract import _rules_surface as rules
from quiver.findings.rule import Rule
from quiver.model import JSON, canonical_json

Values = dict[str, JSON]
Change = tuple[Rule, Values, tuple[str, ...]]  # the rule, its message values, the JSON pointer it is about
_MODES = {"forbidden": {"direct"}, "optional": {"direct", "task"}, "required": {"task"}}
_NAMES = {"direct": "plain (not task-augmented)", "task": "task-augmented"}
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_HEADER = "x-mcp-header"


def field_changes(old: Mapping[str, JSON], new: Mapping[str, JSON]) -> Iterator[Change]:
    """Title, icon and task-support changes of one tool (old and new Tool objects)."""
    for path, before, after in (
        ("title", old.get("title"), new.get("title")),
        ("annotations.title", _title(old), _title(new)),
    ):
        if _text(before) != _text(after):
            yield (
                rules.TITLE_CHANGED,
                {"path": path, "old": _shown(before), "new": _shown(after)},
                tuple(path.split(".")),
            )
    before_icons, after_icons = old.get("icons"), new.get("icons")
    if canonical_json(before_icons) != canonical_json(after_icons):
        what = "added" if before_icons is None else "removed" if after_icons is None else "sources or sizes"
        yield rules.ICONS_CHANGED, {"value": what}, ("icons",)
    yield from _task_support(old, new)


def _task_support(old: Mapping[str, JSON], new: Mapping[str, JSON]) -> Iterator[Change]:
    before, after = task_support(old), task_support(new)
    if before == after:
        return
    lost = _MODES[before] - _MODES[after]
    gained = _MODES[after] - _MODES[before]
    values: Values = {"old": f"`{before}`", "new": f"`{after}`"}
    where = ("execution", "taskSupport")
    if lost:
        yield rules.TASK_SUPPORT_NARROWED, {**values, "value": _NAMES[min(lost)]}, where
    elif gained:
        yield rules.TASK_SUPPORT_WIDENED, {**values, "value": _NAMES[min(gained)]}, where


def task_support(tool: Mapping[str, JSON]) -> str:
    """`execution.taskSupport`: `forbidden` when absent or not one of the three values (the spec's default)."""
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if isinstance(value, str) and value in _MODES else "forbidden"


def header_changes(old_schema: JSON, new_schema: JSON) -> Iterator[Change]:
    """`x-mcp-header` names added, removed or renamed, by property path; an annotation the new schema makes
    invalid (and the old did not have) first."""
    before, before_problem, declared = headers(old_schema)
    after, problem, _ = headers(new_schema)
    if problem is not None and problem != before_problem:
        yield rules.HEADER_INVALID, {"reason": problem}, ("inputSchema",)
    for path in sorted(set(before) | set(after)):
        old_name, new_name = before.get(path), after.get(path)
        if old_name == new_name or (old_name and new_name and old_name.lower() == new_name.lower()):
            continue  # header names are case-insensitive
        if old_name is None and path not in declared:
            continue  # a new property with a header: no old caller sends it
        where = ("inputSchema", *(part for name in path.split(".") for part in ("properties", name)), _HEADER)
        if old_name is None:
            yield rules.HEADER_ADDED, {"path": path, "new": str(new_name)}, where
        elif new_name is None:
            yield rules.HEADER_REMOVED, {"path": path, "old": old_name}, where
        else:
            yield rules.HEADER_CHANGED, {"path": path, "old": old_name, "new": new_name}, where


def headers(schema: JSON) -> tuple[dict[str, str], str | None, set[str]]:
    """({property path: header name} of the annotations reached through `properties` alone, the first reason
    an annotation is invalid under MCP 2026-07-28 or None, every property path reached that way)."""
    found: dict[str, str] = {}
    declared: set[str] = set()
    problems: list[str] = []
    seen: dict[str, str] = {}

    def visit(node: JSON, path: tuple[str, ...], reachable: bool) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item, path, False)
            return
        if not isinstance(node, dict):
            return
        if _HEADER in node:
            _check(node, path, reachable, found, seen, problems)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    if reachable:
                        declared.add(".".join((*path, str(name))))
                    visit(sub, (*path, str(name)), reachable)
            elif key not in ("const", "enum", "default", "examples", _HEADER):
                visit(value, path, False)

    visit(schema, (), True)
    return found, (problems[0] if problems else None), declared


def _check(
    node: Mapping[str, JSON],
    path: tuple[str, ...],
    reachable: bool,
    found: dict[str, str],
    seen: dict[str, str],
    problems: list[str],
) -> None:
    name, where = node[_HEADER], ".".join(path) or "(arguments)"
    kind = node.get("type")
    if not isinstance(name, str) or not _TOKEN.match(name):
        problems.append(f"{_shown(name)} at `{where}` is not an HTTP token")
    elif not reachable or not path:
        problems.append(f"`{name}` at `{where}` is not reached through `properties` alone")
    elif not (isinstance(kind, str) and kind in _HEADER_TYPES):
        shown = kind if isinstance(kind, str) else _shown(kind)
        problems.append(f"`{name}` at `{where}` is on a `{shown}` property, not string, integer or boolean")
    elif name.lower() in seen:
        problems.append(f"`{name}` at `{where}` repeats the header of `{seen[name.lower()]}`")
    else:
        seen[name.lower()] = where
        found[where] = name


def _title(tool: Mapping[str, JSON]) -> JSON:
    annotations = tool.get("annotations")
    return annotations.get("title") if isinstance(annotations, dict) else None


def _text(value: JSON) -> str | None:
    return " ".join(value.split()) if isinstance(value, str) else None


def _shown(value: JSON) -> str:
    text = canonical_json(value) if value is not None else "none"
    return text if len(text) <= 60 else text[:57] + "..."
