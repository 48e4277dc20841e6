"""Contract rules about `inputSchema` changes that break no caller (an old valid argument stays valid):
reported as info or warning so that a reviewer sees what moved."""

from __future__ import annotations

from functools import partial

from quiver.contract._ruledoc import schema_rule
from quiver.findings.rule import Rule

_NONE = "None: the change does not make a valid argument invalid."

_input = partial(schema_rule, "input")


OPTIONAL_PROPERTY_ADDED = _input(
    "CTR040",
    "input-optional-property-added",
    "property",
    "added",
    "optional property `{path}` added",
    "mention it in agents that should use it",
    severity="info",
    what="Reports a new optional property.",
    why="Nothing breaks: undeclared properties are not part of the contract. It costs a few context tokens.",
    example="""Old `{"properties": {"owner": {...}}}`, new adds `"after": {"type": "string"}`.""",
    fix="Nothing to fix.",
    witness=_NONE,
)

TYPE_WIDENED = _input(
    "CTR041",
    "input-type-widened",
    "type",
    "widened",
    "`{path}`: type widened from `{old}` to `{new}`",
    "nothing breaks; update callers that want the new type",
    severity="info",
    what="Reports a value that accepts more JSON types than before (including `null`).",
    why="Nothing breaks; models may start sending the new type.",
    example="""Old `{"type": "string"}`, new `{"anyOf": [{"type": "string"}, {"type": "null"}]}`.""",
    fix="Nothing to fix.",
    witness=_NONE,
)

ENUM_VALUE_ADDED = _input(
    "CTR042",
    "input-enum-value-added",
    "enum",
    "value-added",
    "`{path}`: enum value {value} added",
    "nothing breaks",
    severity="info",
    what="Reports a value added to an `enum`.",
    why="Nothing breaks; the new value is a new capability.",
    example="""Old `{"enum": ["open"]}`, new `{"enum": ["open", "closed"]}`.""",
    fix="Nothing to fix.",
    witness=_NONE,
)

BOUND_LOOSENED = _input(
    "CTR043",
    "input-bound-loosened",
    "bound",
    "loosened",
    "`{path}`: `{keyword}` loosened from {old} to {new}",
    "nothing breaks",
    severity="info",
    what="Reports a bound that accepts more values than before.",
    why="Nothing breaks.",
    example="""Old `{"maximum": 50}`, new `{"maximum": 100}`.""",
    fix="Nothing to fix.",
    witness=_NONE,
)

PROPERTY_BECAME_OPTIONAL = _input(
    "CTR044",
    "input-property-became-optional",
    "required",
    "became-optional",
    "property `{path}` is no longer required",
    "nothing breaks; check the default the server now applies",
    severity="info",
    what="Reports a required property that became optional.",
    why="Nothing breaks; callers may start omitting it and get the server's default.",
    example="""Old `"required": ["owner", "repo"]`, new `"required": ["owner"]`.""",
    fix="Nothing to fix.",
    witness=_NONE,
)

PROPERTY_DESCRIPTION_CHANGED = _input(
    "CTR045",
    "input-property-description-changed",
    "description",
    "changed",
    "`{path}`: description changed",
    "run `quiver route-test` if the wording guides argument choice",
    severity="info",
    what="Reports a property whose description changed beyond whitespace.",
    why="Models fill arguments from the descriptions; new wording can change the values they send.",
    example="""Old `"description": "Results per page (max 100)"`, new `"description": "Results per page (max 50)"`.""",
    fix="Check that the schema says what the description now says (here: a `maximum`).",
    witness=_NONE,
)

# The module's rules in code order; findings/catalog.py names this module for each of their codes.
RULES: tuple[Rule, ...] = (
    OPTIONAL_PROPERTY_ADDED,  # CTR040
    TYPE_WIDENED,  # CTR041
    ENUM_VALUE_ADDED,  # CTR042
    BOUND_LOOSENED,  # CTR043
    PROPERTY_BECAME_OPTIONAL,  # CTR044
    PROPERTY_DESCRIPTION_CHANGED,  # CTR045
)
