"""Contract rules about `inputSchema` (contravariant: breaking when an old valid argument becomes invalid)."""

from __future__ import annotations

from functools import partial

from quiver.contract._ruledoc import schema_rule
from quiver.findings.rule import Rule

_ARGS = "An argument object valid under the old `inputSchema` and invalid under the new, confirmed with jsonschema"
_UNCONFIRMED = " If none is confirmed, the finding is a warning saying so."
_NONE = "None: the change does not make a valid argument invalid."


_input = partial(schema_rule, "input")


REQUIRED_PROPERTY_ADDED = _input(
    "CTR020",
    "input-required-property-added",
    "required",
    "added",
    "new required property `{path}`{was}",
    "old callers never send `{path}`: make it optional or give it a default",
    what="Reports a property that the new `inputSchema` requires and the old one did not declare.",
    why="Every call written against the old schema lacks the property and is now rejected.",
    example="""
    Old `{"properties": {"issueNumber": {...}}, "required": ["issueNumber"]}`,
    new `{"properties": {"issue_number": {...}}, "required": ["issue_number"]}`.
    Use instead: accept both names for a release, or keep the new one optional.""",
    fix="Make the property optional with a server-side default. The message names a removed property with the "
    "same spelling (case, `_` and `-` ignored) as the likely old name.",
    witness=_ARGS + ": the minimal old arguments, which omit the property." + _UNCONFIRMED,
)

PROPERTY_BECAME_REQUIRED = _input(
    "CTR021",
    "input-property-became-required",
    "required",
    "became-required",
    "property `{path}` became required",
    "old callers may omit `{path}`: keep it optional with a default",
    what="Reports an optional property that the new `inputSchema` requires.",
    why="Callers that relied on omitting it are now rejected.",
    example="""
    Old `"required": ["threadID"]`, new `"required": ["threadID", "state"]`.""",
    fix="Keep it optional and apply the old implicit behaviour as the default.",
    witness=_ARGS + ": the minimal old arguments, which omit the property." + _UNCONFIRMED,
)

PROPERTY_REMOVED = _input(
    "CTR022",
    "input-property-removed",
    "property",
    "removed",
    "property `{path}` was removed and the object is closed",
    "keep accepting `{path}` (ignore it) for a release",
    what="Reports a property declared by the old `inputSchema` and gone from the new one, where the new object "
    "forbids undeclared properties (`additionalProperties: false`).",
    why="Calls that send the property are now rejected.",
    example="""
    Old `{"properties": {"page": {...}}, "additionalProperties": false}`, new without `page`.""",
    fix="Keep the property declared (deprecated in its description) until callers stop sending it.",
    witness=_ARGS + ": the minimal old arguments plus the removed property." + _UNCONFIRMED,
)

PROPERTY_UNLISTED = _input(
    "CTR023",
    "input-property-unlisted",
    "property",
    "unlisted",
    "property `{path}` was removed; calls that send it are accepted and it is silently ignored",
    "check whether `{path}` moved to another property; tell callers",
    severity="warning",
    what="Reports a property declared by the old `inputSchema` and gone from the new one, where the new object "
    "still accepts undeclared properties.",
    why="Validation still passes, so nothing tells the caller that the argument now does nothing: the call "
    "behaves differently.",
    example="""
    Old `{"properties": {"sort": {...}}}`, new `{"properties": {}}` (open object).""",
    fix="Keep the property until callers stop sending it, or close the object so they get an error.",
    witness="None: every old argument is still valid; the change is in behaviour, not validation.",
)

TYPE_NARROWED = _input(
    "CTR024",
    "input-type-narrowed",
    "type",
    "narrowed",
    "`{path}`: type narrowed from `{old}` to `{new}`",
    "accept the old type too (for example a type list)",
    what="Reports a value whose accepted JSON types shrank (`number` to `integer`, a type list losing a member, "
    "`null` no longer allowed, a schema becoming `false`).",
    why="Values of the dropped type were valid and are now rejected.",
    example="""
    Old `{"comment_id": {"type": "number"}}`, new `{"comment_id": {"type": "integer"}}`.""",
    fix="Keep accepting the old type and convert it on the server.",
    witness=_ARGS + ": the old arguments with a value of a dropped type at the path." + _UNCONFIRMED,
)

ENUM_VALUE_REMOVED = _input(
    "CTR025",
    "input-enum-value-removed",
    "enum",
    "value-removed",
    "`{path}`: enum value {value} removed",
    "keep accepting {value} (map it to its replacement)",
    what="Reports a value that the old `enum` listed and the new one does not.",
    why="Calls that pass the value are now rejected; models trained on the old description keep sending it.",
    example="""
    Old `{"state": {"enum": ["open", "closed", "all"]}}`, new `{"state": {"enum": ["OPEN", "CLOSED"]}}`.""",
    fix="Keep the old values as accepted aliases.",
    witness=_ARGS + ": the old arguments with the removed value at the path." + _UNCONFIRMED,
)

ENUM_ADDED = _input(
    "CTR026",
    "input-enum-added",
    "enum",
    "added",
    "`{path}`: values now restricted to {new}",
    "accept the previous free-form values too",
    what="Reports a value that was free-form (within its type) and is now restricted to an `enum` or `const`.",
    why="Any value outside the new list was valid and is now rejected.",
    example="""
    Old `{"type": "string"}`, new `{"type": "string", "enum": ["asc", "desc"]}`.""",
    fix="Normalize free-form input on the server instead of rejecting it.",
    witness=_ARGS + ": the old arguments with a value outside the new enum." + _UNCONFIRMED,
)

CONST_CHANGED = _input(
    "CTR027",
    "input-const-changed",
    "const",
    "changed",
    "`{path}`: const changed from {old} to {new}",
    "accept the old constant too",
    what="Reports a `const` whose value changed.",
    why="Every call sends the old constant and is now rejected.",
    example="""
    Old `{"kind": {"const": "v1"}}`, new `{"kind": {"const": "v2"}}`.""",
    fix="Accept both constants (`enum`) for a release.",
    witness=_ARGS + ": the old arguments carrying the old constant." + _UNCONFIRMED,
)

BOUND_TIGHTENED = _input(
    "CTR028",
    "input-bound-tightened",
    "bound",
    "tightened",
    "`{path}`: `{keyword}` tightened from {old} to {new}",
    "keep the old bound and clamp on the server",
    what="Reports a stricter `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, "
    "`minLength`, `maxLength`, `minItems`, `maxItems`, `minProperties`, `maxProperties` or `uniqueItems`.",
    why="Values between the old and the new bound were valid and are now rejected.",
    example="""
    Old `{"perPage": {"type": "number", "maximum": 100}}`, new `{"perPage": {"type": "number", "maximum": 50}}`.""",
    fix="Keep the old bound and clamp or page on the server.",
    witness=_ARGS + ": the old arguments with a value between the two bounds." + _UNCONFIRMED,
)

PATTERN_ADDED = _input(
    "CTR029",
    "input-pattern-added",
    "pattern",
    "added",
    "`{path}`: pattern `{new}` added",
    "normalize values on the server instead of rejecting them",
    what="Reports a string that gained a `pattern`.",
    why="Strings that do not match were valid and are now rejected.",
    example="""
    Old `{"branch": {"type": "string"}}`, new `{"branch": {"type": "string", "pattern": "^[a-z0-9/-]+$"}}`.""",
    fix="Normalize on the server, or document the pattern in the description before enforcing it.",
    witness=_ARGS + ": the old arguments with a string the new pattern rejects." + _UNCONFIRMED,
)

PATTERN_CHANGED = _input(
    "CTR030",
    "input-pattern-changed",
    "pattern",
    "changed",
    "`{path}`: pattern changed from `{old}` to `{new}`",
    "accept what the old pattern accepted",
    what="Reports a string whose `pattern` changed so that some value matching the old one no longer matches.",
    why="Strings valid under the old pattern are now rejected.",
    example="""
    Old `"pattern": "^[a-z]+$"`, new `"pattern": "^[a-z]{3,}$"`.""",
    fix="Use a pattern that accepts everything the old one did.",
    witness=_ARGS + ": the old arguments with a string matching the old pattern only." + _UNCONFIRMED,
)

FORMAT_ADDED = _input(
    "CTR031",
    "input-format-added",
    "format",
    "added",
    "`{path}`: format `{new}` added",
    "accept free-form values and parse them leniently",
    what="Reports a string that gained a `format` (`date`, `email`, `uuid`...).",
    why="Servers that assert formats reject values that were valid.",
    example="""
    Old `{"since": {"type": "string"}}`, new `{"since": {"type": "string", "format": "date"}}`.""",
    fix="Parse leniently on the server.",
    witness=_ARGS + ", with format assertion on: a string violating the format. quiver asserts `date`, "
    "`date-time`, `time`, `email`, `idn-email`, `hostname`, `uri`, `uri-reference`, `uuid`, `ipv4`, `ipv6`, "
    "`regex` and `json-pointer` with its own checkers (the same on every install); a change to another format "
    "stays an unconfirmed warning.",
)

FORMAT_CHANGED = _input(
    "CTR032",
    "input-format-changed",
    "format",
    "changed",
    "`{path}`: format changed from `{old}` to `{new}`",
    "accept the old format too",
    what="Reports a string whose `format` changed.",
    why="Values in the old format are rejected where the format is asserted.",
    example="""
    Old `"format": "date-time"`, new `"format": "date"`.""",
    fix="Accept both formats.",
    witness=_ARGS + ", with format assertion on." + _UNCONFIRMED,
)

ADDITIONAL_PROPERTIES_CLOSED = _input(
    "CTR033",
    "input-additional-properties-closed",
    "additional-properties",
    "closed",
    "`{path}`: undeclared properties are no longer accepted",
    "keep the object open for a release",
    what="Reports an object that accepted undeclared properties and now forbids them (`additionalProperties: false`).",
    why="Callers sending extra keys (often models adding helpful fields) are now rejected.",
    example="""
    Old `{"type": "object"}`, new `{"type": "object", "additionalProperties": false}`.""",
    fix="Ignore unknown keys on the server instead of rejecting them.",
    witness=_ARGS + ": the old arguments plus an undeclared property `quiver_extra`." + _UNCONFIRMED,
)

COMPOSITION_BRANCH_REMOVED = _input(
    "CTR034",
    "input-composition-branch-removed",
    "composition",
    "branch-removed",
    "`{path}`: old alternative #{value} no longer fits any `{keyword}` branch",
    "keep the old alternative",
    what="Reports an `anyOf`/`oneOf` alternative of the old schema that no alternative of the new one accepts.",
    why="Arguments shaped like that alternative are now rejected.",
    example="""
    Old `{"anyOf": [{"type": "string"}, {"type": "integer"}]}`, new `{"anyOf": [{"type": "string"}]}`.""",
    fix="Keep the alternative, or accept it and convert on the server.",
    witness=_ARGS + ": the old arguments with a value of that alternative." + _UNCONFIRMED,
)

COMPOSITION_ADDED = _input(
    "CTR035",
    "input-composition-added",
    "composition",
    "added",
    "`{path}`: new `{keyword}` constraint rejects arguments that were valid",
    "make the constraint hold for every old call, or relax it",
    what="Reports a node that gained an `anyOf`/`oneOf` that some old valid value fails on every branch.",
    why="Old calls that satisfy none of the new alternatives are now rejected.",
    example="""
    Old `{"required": ["body"]}`, new `{"anyOf": [{"required": ["body"]}, {"required": ["reaction"]}],
    "properties": {"body": {"minLength": 1}}}`.""",
    fix="Write the constraint so that old calls still match a branch.",
    witness=_ARGS + ": an old value that fails every branch." + _UNCONFIRMED,
)

ITEMS_CLOSED = _input(
    "CTR036",
    "input-items-closed",
    "items",
    "closed",
    "`{path}`: array items from position {value} are no longer accepted",
    "accept the longer arrays",
    what="Reports an array that no longer accepts items beyond its `prefixItems` (`items: false`).",
    why="Longer arrays were valid and are now rejected.",
    example="""
    Old `{"prefixItems": [{"type": "number"}]}`, new `{"prefixItems": [{"type": "number"}], "items": false}`.""",
    fix="Ignore the extra items on the server.",
    witness=_ARGS + ": the old arguments with one item more than the new prefix." + _UNCONFIRMED,
)

DEPENDENT_REQUIRED_ADDED = _input(
    "CTR037",
    "input-dependent-required-added",
    "dependent-required",
    "added",
    "`{path}`: sending `{prop}` now also requires {value}",
    "keep the dependency optional",
    what="Reports a `dependentRequired` entry that makes a property require others when present.",
    why="Calls that sent the property alone are now rejected.",
    example="""
    Old `{}`, new `{"dependentRequired": {"orderBy": ["direction"]}}`.""",
    fix="Default the dependent property on the server.",
    witness=_ARGS + ": the old arguments with the property and without its new dependencies." + _UNCONFIRMED,
)

DEPENDENT_SCHEMA_ADDED = _input(
    "CTR038",
    "input-dependent-schema-added",
    "dependent-schema",
    "added",
    "`{path}`: new or changed `dependentSchemas` constraint applies when `{prop}` is sent",
    "make the constraint hold for every old call that sends `{prop}`",
    what="Reports a `dependentSchemas` entry that is new or different.",
    why="Calls that send the property may now fail the extra schema.",
    example="""
    Old `{}`, new `{"dependentSchemas": {"reaction": {"not": {"required": ["body"]}}}}`.""",
    fix="Check that old calls sending the property still pass the schema.",
    witness=_ARGS + ": the old arguments with the property, failing the new dependent schema." + _UNCONFIRMED,
)

DEFAULT_CHANGED = _input(
    "CTR039",
    "input-default-changed",
    "default",
    "changed",
    "`{path}`: default changed from {old} to {new}",
    "callers that omit `{path}` get the new behaviour",
    severity="warning",
    what="Reports a property whose documented `default` changed.",
    why="Callers that omit the property silently get different behaviour.",
    example="""
    Old `{"detail": {"default": "full"}}`, new `{"detail": {"default": "stats"}}`.""",
    fix="Keep the old default, or tell callers to pass the value explicitly.",
    witness="None: validation is unchanged; the behaviour of omitted arguments is.",
)

# The module's rules in code order; findings/catalog.py names this module for each of their codes.
RULES: tuple[Rule, ...] = (
    REQUIRED_PROPERTY_ADDED,  # CTR020
    PROPERTY_BECAME_REQUIRED,  # CTR021
    PROPERTY_REMOVED,  # CTR022
    PROPERTY_UNLISTED,  # CTR023
    TYPE_NARROWED,  # CTR024
    ENUM_VALUE_REMOVED,  # CTR025
    ENUM_ADDED,  # CTR026
    CONST_CHANGED,  # CTR027
    BOUND_TIGHTENED,  # CTR028
    PATTERN_ADDED,  # CTR029
    PATTERN_CHANGED,  # CTR030
    FORMAT_ADDED,  # CTR031
    FORMAT_CHANGED,  # CTR032
    ADDITIONAL_PROPERTIES_CLOSED,  # CTR033
    COMPOSITION_BRANCH_REMOVED,  # CTR034
    COMPOSITION_ADDED,  # CTR035
    ITEMS_CLOSED,  # CTR036
    DEPENDENT_REQUIRED_ADDED,  # CTR037
    DEPENDENT_SCHEMA_ADDED,  # CTR038
    DEFAULT_CHANGED,  # CTR039
)
