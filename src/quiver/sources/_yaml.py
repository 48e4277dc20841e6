"""A YAML reader that keeps key positions, rejects duplicate keys and refuses alias bombs."""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass, field
from typing import Any

import yaml

from quiver.errors import InputError, Position
from quiver.model import JSON

MAX_NODES = 100_000  # values built, counting every alias expansion: a "billion laughs" stops here

# libyaml when present: same nodes and marks, several times faster
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(slots=True)
class YNode:
    """A YAML value with the 1-based position of the value and, for mappings, of each key."""

    value: JSON
    line: int
    column: int
    children: dict[str, YNode] = field(default_factory=dict)
    items: list[YNode] = field(default_factory=list)
    key_positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    quoted: bool = False  # a scalar written in quotes

    def get(self, key: str) -> YNode | None:
        return self.children.get(key)


@functools.cache
def _scalars() -> yaml.SafeLoader:
    """One SafeLoader per process turns scalar nodes into values (its set-up reads a stream: per file, 4 ms
    over 112 agents)."""
    loader = yaml.SafeLoader.__new__(yaml.SafeLoader)
    yaml.SafeLoader.__init__(loader, "")
    return loader


def _scalar_constructor() -> yaml.SafeLoader:
    """The shared scalar constructor, its per-document memo emptied."""
    loader = _scalars()
    loader.constructed_objects = {}
    loader.recursive_objects = {}
    return loader


class _Builder:
    def __init__(self, path: str, line_offset: int) -> None:
        self.path = path
        self.line_offset = line_offset
        self.count = 0
        self.scalar = _scalar_constructor()

    def pos(self, node: yaml.Node) -> tuple[int, int]:
        return node.start_mark.line + 1 + self.line_offset, node.start_mark.column + 1

    def fail(self, node: yaml.Node, message: str, hint: str) -> InputError:
        line, col = self.pos(node)
        return InputError(message, position=Position(self.path, line, col), hint=hint)

    def build(self, node: yaml.Node, depth: int = 0) -> YNode:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(
                node,
                f"YAML expands to more than {MAX_NODES:,} values (an alias bomb?)",
                "remove the anchors and aliases that multiply the document",
            )
        if depth > 100:
            raise self.fail(node, "YAML nested deeper than 100 levels", "flatten the document")
        line, col = self.pos(node)
        if isinstance(node, yaml.MappingNode):
            out = YNode({}, line, col)
            self.scalar.flatten_mapping(node)
            for key_node, value_node in node.value:
                key_value = self.build(key_node, depth + 1).value
                if not isinstance(key_value, str | int | float | bool) or key_value is None:
                    raise self.fail(key_node, "mapping keys must be plain scalars", "quote the key")
                key = str(key_value)
                if key in out.children:
                    first = out.key_positions[key][0]
                    raise self.fail(
                        key_node,
                        f"duplicate key `{key}` (first at line {first})",
                        "keep one of them; YAML readers disagree on which one wins",
                    )
                child = self.build(value_node, depth + 1)
                out.children[key] = child
                out.key_positions[key] = self.pos(key_node)
                out.value[key] = child.value
            return out
        if isinstance(node, yaml.SequenceNode):
            out = YNode([], line, col)
            for item in node.value:
                child = self.build(item, depth + 1)
                out.items.append(child)
                out.value.append(child.value)
            return out
        try:
            value = self.scalar.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise self.fail(node, f"invalid YAML value: {exc}", "quote the value") from None
        except (ValueError, OverflowError):  # an integer of more digits than Python converts, a bad date
            shown = node.value if len(node.value) <= 40 else f"{node.value[:40]}... ({len(node.value):,} characters)"
            raise self.fail(node, f"cannot read the value `{shown}`", "quote it, or write it shorter") from None
        if isinstance(value, datetime.date | datetime.datetime):
            value = value.isoformat()  # keep the model JSON-shaped
        elif isinstance(value, bytes):
            value = value.decode("latin-1")
        return YNode(value, line, col, quoted=getattr(node, "style", None) in ("'", '"'))


def parse_yaml(text: str, path: str, *, line_offset: int = 0) -> YNode:
    """Parse one YAML document. `line_offset` shifts reported lines (frontmatter starts after `---`)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark else 0
        col = (mark.column + 1) if mark else 0
        problem = exc.problem or exc.context or "invalid YAML"
        raise InputError(
            f"invalid YAML: {problem}",
            position=Position(path, line, col),
            hint="fix the syntax (quote values that contain `: ` or start with `*`, `&`, `@` or a backquote)",
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", position=Position(path, 0, 0), hint="fix the syntax") from None
    if node is None:
        return YNode(None, 1 + line_offset, 1)
    return _Builder(path, line_offset).build(node)
