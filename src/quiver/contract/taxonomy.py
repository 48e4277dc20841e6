"""The contract taxonomy: every direction x kind x action a change can have, and why some have no rule.

`SCHEMA_ACTIONS` pairs each schema kind's action when the new schema accepts less with the one when it accepts
more; `diff.py` reads a change found by the walker through it. `CELLS` is the whole grid; each cell has a rule
in `rules.py` or a written reason in `WAIVERS` (tests/contract/test_rules_registry.py checks both ways). A cell
that has neither is an internal error (`UnknownCell`), never a silently dropped change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

Direction = Literal["tool", "annotations", "input", "output", "agent"]
SchemaKind = Literal[
    "type",
    "enum",
    "const",
    "bound",
    "pattern",
    "format",
    "required",
    "property",
    "additional-properties",
    "composition",
    "items",
    "dependent-required",
    "dependent-schema",
    "constraint",
]
DeclarationKind = Literal["description", "default", "keyword", "subschema"]
Kind = Literal[
    SchemaKind,
    DeclarationKind,
    "tool",
    "title",
    "icons",
    "text",
    "task-support",
    "header",
    "schema",
    "output-schema",
    "load",
    "read-only-hint",
    "destructive-hint",
    "idempotent-hint",
    "open-world-hint",
]
Action = Literal[
    "narrowed",
    "widened",
    "value-removed",
    "value-added",
    "added",
    "removed",
    "changed",
    "tightened",
    "loosened",
    "became-required",
    "became-optional",
    "closed",
    "opened",
    "branch-removed",
    "branch-added",
    "overlap",
    "overlap-removed",
    "unlisted",
    "not-compared",
    "renamed",
    "unreadable",
    "weakened",
    "strengthened",
    "repaired",
    "moved",
    "folded",
    "hazard-added",
    "case-changed",
    "invalid",
]
Cell = tuple[str, str, str]  # (direction, kind, action): each a member of the Literal above

DIRECTIONS: tuple[Direction, ...] = get_args(Direction)
KINDS: frozenset[str] = frozenset(k for part in get_args(Kind) for k in (get_args(part) if get_args(part) else (part,)))
ACTIONS: frozenset[str] = frozenset(get_args(Action))


class UnknownCell(AssertionError):
    """A change the walker produced that no rule and no waiver covers: a bug in quiver, not in the input."""


# kind -> ((action when new accepts less, action when new accepts more), ...)
SCHEMA_ACTIONS: Mapping[SchemaKind, tuple[tuple[Action, Action], ...]] = {
    "type": (("narrowed", "widened"),),
    "enum": (("value-removed", "value-added"), ("added", "removed")),
    "const": (("changed", "changed"),),
    "bound": (("tightened", "loosened"),),
    "pattern": (("added", "removed"), ("changed", "changed")),
    "format": (("added", "removed"), ("changed", "changed")),
    "required": (("added", "removed"), ("became-required", "became-optional")),
    "property": (("removed", "added"),),
    "additional-properties": (("closed", "opened"),),
    "composition": (("branch-removed", "branch-added"), ("added", "removed"), ("overlap", "overlap-removed")),
    "items": (("closed", "opened"),),
    "dependent-required": (("added", "removed"),),
    "dependent-schema": (("added", "removed"),),
    "constraint": (("added", "removed"),),
}
WIDER: Mapping[tuple[str, str], Action] = {
    (kind, narrow): wide for kind, pairs in SCHEMA_ACTIONS.items() for narrow, wide in pairs
}
_DEFAULTS: tuple[tuple[DeclarationKind, Action], ...] = (
    ("default", "changed"),
    ("default", "added"),
    ("default", "removed"),
)
_UNCHECKED: tuple[tuple[DeclarationKind, Action], ...] = (("keyword", "changed"), ("subschema", "not-compared"))
DECLARATIONS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "input": (("property", "unlisted"), ("description", "changed"), *_DEFAULTS, *_UNCHECKED),
    "output": (("description", "changed"), *_DEFAULTS, *_UNCHECKED),
}
_HINTS = ("read-only-hint", "destructive-hint", "idempotent-hint", "open-world-hint")


def _cells() -> tuple[Cell, ...]:
    cells: list[Cell] = [
        ("tool", "tool", "removed"),
        ("tool", "tool", "renamed"),
        ("tool", "tool", "added"),
        ("tool", "description", "changed"),
        ("tool", "title", "changed"),
        ("tool", "schema", "unreadable"),
        ("tool", "schema", "repaired"),
        ("tool", "tool", "moved"),
        ("tool", "tool", "folded"),
        ("tool", "text", "hazard-added"),
        ("tool", "icons", "changed"),
        ("tool", "task-support", "narrowed"),
        ("tool", "task-support", "widened"),
        ("input", "enum", "case-changed"),
        ("input", "header", "changed"),
        ("input", "header", "added"),
        ("input", "header", "removed"),
        ("input", "header", "invalid"),
        ("output", "output-schema", "added"),
        ("output", "output-schema", "removed"),
        ("agent", "tool", "removed"),
        ("agent", "tool", "added"),
        ("agent", "load", "changed"),
    ]
    cells += [("annotations", hint, action) for hint in _HINTS for action in ("weakened", "strengthened")]
    for direction in ("input", "output"):
        for kind, pairs in SCHEMA_ACTIONS.items():
            cells += [(direction, kind, action) for pair in pairs for action in dict.fromkeys(pair)]
        cells += [(direction, kind, action) for kind, action in DECLARATIONS[direction]]
    return tuple(dict.fromkeys(cells))


CELLS: tuple[Cell, ...] = _cells()

_WIDER_INPUT = (
    "widening an input cannot break a caller; only the widenings that change what a model may send "
    "(type, enum value, bound, required) are reported, as info"
)
_NARROWER_OUTPUT = "narrowing a result only removes results the caller already handles (output is covariant)"
_OUTPUT_DOCS = "result documentation does not steer the model's arguments; only schema changes are compared"

WAIVERS: Mapping[Cell, str] = {
    ("agent", "tool", "added"): "a tool an agent gains is reported as tool-added for the server or by lint",
    **{
        ("annotations", hint, "strengthened"): "a stronger hint is a promise the server makes, not one it breaks; "
        "policy may get more permissive, which the lint budget and review catch"
        for hint in _HINTS
    },
    ("input", "enum", "removed"): _WIDER_INPUT,
    ("input", "pattern", "removed"): _WIDER_INPUT,
    ("input", "format", "removed"): _WIDER_INPUT,
    ("input", "required", "removed"): "a required property dropped from the schema is reported as "
    "input-property-removed (closed object) or input-property-unlisted (open object)",
    ("input", "additional-properties", "opened"): _WIDER_INPUT,
    ("input", "composition", "branch-added"): _WIDER_INPUT,
    ("input", "composition", "removed"): _WIDER_INPUT,
    ("input", "composition", "overlap-removed"): _WIDER_INPUT,
    ("input", "items", "opened"): _WIDER_INPUT,
    ("input", "dependent-required", "removed"): _WIDER_INPUT,
    ("input", "dependent-schema", "removed"): _WIDER_INPUT,
    ("input", "constraint", "removed"): _WIDER_INPUT,
    **{
        ("output", kind, action): _NARROWER_OUTPUT
        for kind, action in (
            ("type", "narrowed"),
            ("enum", "value-removed"),
            ("enum", "added"),
            ("bound", "tightened"),
            ("pattern", "added"),
            ("format", "added"),
            ("required", "added"),
            ("required", "became-required"),
            ("additional-properties", "closed"),
            ("composition", "branch-removed"),
            ("composition", "added"),
            ("composition", "overlap"),
            ("items", "closed"),
            ("dependent-required", "added"),
            ("dependent-schema", "added"),
            ("constraint", "added"),
        )
    },
    ("output", "items", "opened"): "a longer result array than the old `items: false` allowed is rare in MCP "
    "results; it is left to output-bound-loosened when `maxItems` changes",
    ("output", "dependent-required", "removed"): "dependencies between result properties are producer-side "
    "invariants that MCP callers do not rely on",
    ("output", "dependent-schema", "removed"): "dependencies between result properties are producer-side "
    "invariants that MCP callers do not rely on",
    ("output", "description", "changed"): _OUTPUT_DOCS,
    **{
        ("output", "default", action): "`default` has no meaning in a result schema"
        for action in ("changed", "added", "removed")
    },
}
