"""Contract rules about `outputSchema` (covariant: breaking when a new valid result is invalid under the old)."""

from __future__ import annotations

from functools import partial

from quiver.contract._ruledoc import schema_rule
from quiver.findings.rule import Rule

_RESULT = (
    "A result (`structuredContent`) valid under the new `outputSchema` and invalid under the old, confirmed "
    "with jsonschema. If none is confirmed, the finding is a warning saying so."
)
_SOFT = "A warning rather than an error: callers rarely depend on it, but strict ones validate results."


_output = partial(schema_rule, "output", witness=_RESULT)


REQUIRED_PROPERTY_REMOVED = _output(
    "CTR052",
    "output-required-property-removed",
    "required",
    "removed",
    "result property `{path}` was required and is gone",
    "keep returning `{path}`",
    what="Reports a result property that the old `outputSchema` required and the new one does not declare.",
    why="Callers read the property from every result; new results lack it.",
    example="""Old `{"required": ["id", "url"]}`, new `{"required": ["id"]}` with `url` gone.""",
    fix="Keep returning the property (deprecated) for a release.",
)

PROPERTY_BECAME_OPTIONAL = _output(
    "CTR053",
    "output-property-became-optional",
    "required",
    "became-optional",
    "result property `{path}` is no longer required",
    "keep `{path}` required, or tell callers it may be missing",
    what="Reports a result property that was required and is now optional.",
    why="Callers that read it unconditionally fail on results without it.",
    example="""Old `"required": ["id", "url"]`, new `"required": ["id"]`.""",
    fix="Keep the property required, or make callers handle its absence first.",
)

TYPE_WIDENED = _output(
    "CTR054",
    "output-type-widened",
    "type",
    "widened",
    "`{path}`: result type widened from `{old}` to `{new}`",
    "return only the old types",
    what="Reports a result value that may now have more JSON types (including `null`).",
    why="Callers parse the old type; a value of the new type (often `null`) breaks them.",
    example="""Old `{"count": {"type": "integer"}}`, new `{"count": {"type": ["integer", "null"]}}`.""",
    fix="Return a value of the old type (0, an empty string) instead.",
)

ENUM_VALUE_ADDED = _output(
    "CTR055",
    "output-enum-value-added",
    "enum",
    "value-added",
    "`{path}`: result enum value {value} added",
    "make sure callers handle unknown values",
    severity="warning",
    what="Reports a value added to an `enum` of a result.",
    why="Exhaustive switches on the old values miss the new one. " + _SOFT,
    example="""Old `{"state": {"enum": ["open", "closed"]}}`, new adds `"merged"`.""",
    fix="Tell callers; keep a fallback branch for unknown values.",
)

ENUM_REMOVED = _output(
    "CTR056",
    "output-enum-removed",
    "enum",
    "removed",
    "`{path}`: result values are no longer restricted to an enum",
    "restore the enum if the values are still fixed",
    severity="warning",
    what="Reports a result value that was restricted to an `enum` and no longer is.",
    why="Callers that switch over the old values meet values outside them. " + _SOFT,
    example="""Old `{"state": {"enum": ["open", "closed"]}}`, new `{"state": {"type": "string"}}`.""",
    fix="Keep the enum, or tell callers to handle any string.",
)

CONST_CHANGED = _output(
    "CTR057",
    "output-const-changed",
    "const",
    "changed",
    "`{path}`: result const changed from {old} to {new}",
    "keep the old constant",
    what="Reports a result `const` whose value changed.",
    why="Callers that check the constant (a version or kind tag) reject every new result.",
    example="""Old `{"kind": {"const": "v1"}}`, new `{"kind": {"const": "v2"}}`.""",
    fix="Version the tool instead of the constant.",
)

BOUND_LOOSENED = _output(
    "CTR058",
    "output-bound-loosened",
    "bound",
    "loosened",
    "`{path}`: result `{keyword}` loosened from {old} to {new}",
    "tell callers about the wider range",
    severity="warning",
    what="Reports a result bound that allows more values than before.",
    why="Callers that sized buffers or pages on the old bound may overflow. " + _SOFT,
    example="""Old `{"maxItems": 100}`, new `{"maxItems": 1000}`.""",
    fix="Tell callers; page the result.",
)

PATTERN_REMOVED = _output(
    "CTR059",
    "output-pattern-removed",
    "pattern",
    "removed",
    "`{path}`: result pattern `{old}` removed",
    "tell callers the strings are free-form now",
    severity="warning",
    what="Reports a result string that lost its `pattern`.",
    why="Callers that parse the string by the old pattern fail on other strings. " + _SOFT,
    example="""Old `{"sha": {"pattern": "^[0-9a-f]{40}$"}}`, new `{"sha": {"type": "string"}}`.""",
    fix="Keep the pattern if the values still follow it.",
)

PATTERN_CHANGED = _output(
    "CTR060",
    "output-pattern-changed",
    "pattern",
    "changed",
    "`{path}`: result pattern changed from `{old}` to `{new}`",
    "tell callers about the new shape",
    severity="warning",
    what="Reports a result string whose `pattern` now admits strings the old one did not.",
    why="Callers that parse by the old pattern fail. " + _SOFT,
    example="""Old `"pattern": "^[0-9]+$"`, new `"pattern": "^[0-9a-z]+$"`.""",
    fix="Tell callers; keep both shapes parseable.",
)

FORMAT_REMOVED = _output(
    "CTR061",
    "output-format-removed",
    "format",
    "removed",
    "`{path}`: result format `{old}` removed",
    "keep the format if the values still follow it",
    severity="warning",
    what="Reports a result string that lost its `format`.",
    why="Callers that parse the value (a date, a URI) may fail. " + _SOFT,
    example="""Old `{"created": {"format": "date-time"}}`, new `{"created": {"type": "string"}}`.""",
    fix="Keep the format.",
)

FORMAT_CHANGED = _output(
    "CTR062",
    "output-format-changed",
    "format",
    "changed",
    "`{path}`: result format changed from `{old}` to `{new}`",
    "tell callers about the new format",
    severity="warning",
    what="Reports a result string whose `format` changed.",
    why="Callers parse by the old format. " + _SOFT,
    example="""Old `"format": "date"`, new `"format": "date-time"`.""",
    fix="Keep the old format, or version the tool.",
)

ADDITIONAL_PROPERTIES_OPENED = _output(
    "CTR063",
    "output-additional-properties-opened",
    "additional-properties",
    "opened",
    "`{path}`: results may now carry undeclared properties",
    "declare the new properties",
    severity="warning",
    what="Reports a result object that forbade undeclared properties and now allows them.",
    why="Strict callers that validate results reject extra keys. " + _SOFT,
    example="""Old `{"additionalProperties": false}`, new `{}`.""",
    fix="Declare the properties results may carry.",
)

COMPOSITION_BRANCH_ADDED = _output(
    "CTR064",
    "output-composition-branch-added",
    "composition",
    "branch-added",
    "`{path}`: results may take a new `{keyword}` shape (alternative #{value})",
    "tell callers about the new shape",
    severity="warning",
    what="Reports an `anyOf`/`oneOf` alternative of the new result schema that no old alternative covered.",
    why="Callers handle the old shapes only. " + _SOFT,
    example="""Old `{"anyOf": [{"type": "object"}]}`, new `{"anyOf": [{"type": "object"}, {"type": "string"}]}`.""",
    fix="Tell callers; or return the old shape.",
)

COMPOSITION_REMOVED = _output(
    "CTR065",
    "output-composition-removed",
    "composition",
    "removed",
    "`{path}`: results no longer follow the old `{keyword}` alternatives",
    "restore the alternatives",
    severity="warning",
    what="Reports a result node whose old `anyOf`/`oneOf` no longer constrains new results.",
    why="Callers dispatch on the old alternatives and meet other shapes. " + _SOFT,
    example="""Old `{"oneOf": [{"required": ["issue"]}, {"required": ["pull"]}]}`, new `{}`.""",
    fix="Keep the alternatives.",
)

PROPERTY_ADDED = _output(
    "CTR066",
    "output-property-added",
    "property",
    "added",
    "result property `{path}` added",
    "nothing breaks",
    severity="info",
    what="Reports a property the new result schema declares and the old one did not.",
    why="Nothing breaks for callers that ignore unknown keys.",
    example="""Old `{"properties": {"id": {}}}`, new adds `"url"`.""",
    fix="Nothing to fix.",
    witness="None: callers must ignore unknown result keys.",
)

OPTIONAL_PROPERTY_REMOVED = _output(
    "CTR067",
    "output-optional-property-removed",
    "property",
    "removed",
    "optional result property `{path}` removed",
    "tell callers that read `{path}`",
    severity="warning",
    what="Reports an optional result property that the new schema no longer declares.",
    why="Callers that used the property when present never see it again; nothing fails loudly.",
    example="""Old `{"properties": {"id": {}, "url": {}}, "required": ["id"]}`, new without `url`.""",
    fix="Keep returning it when available, or tell callers.",
    witness="None: every new result may still be valid under the old schema.",
)

# The module's rules in code order; findings/catalog.py names this module for each of their codes.
RULES: tuple[Rule, ...] = (
    REQUIRED_PROPERTY_REMOVED,  # CTR052
    PROPERTY_BECAME_OPTIONAL,  # CTR053
    TYPE_WIDENED,  # CTR054
    ENUM_VALUE_ADDED,  # CTR055
    ENUM_REMOVED,  # CTR056
    CONST_CHANGED,  # CTR057
    BOUND_LOOSENED,  # CTR058
    PATTERN_REMOVED,  # CTR059
    PATTERN_CHANGED,  # CTR060
    FORMAT_REMOVED,  # CTR061
    FORMAT_CHANGED,  # CTR062
    ADDITIONAL_PROPERTIES_OPENED,  # CTR063
    COMPOSITION_BRANCH_ADDED,  # CTR064
    COMPOSITION_REMOVED,  # CTR065
    PROPERTY_ADDED,  # CTR066
    OPTIONAL_PROPERTY_REMOVED,  # CTR067
)
