"""Contract rules added by issue 16: unreadable tools, defaults, new constraint keywords, overlapping `oneOf`
branches, and the changes the diff names instead of judging (a keyword it does not analyse, a part it could
not compare). Codes continue after CTR071; no existing code changed."""

from __future__ import annotations

from functools import partial

from quiver.contract._ruledoc import rule_doc, schema_rule
from quiver.findings.rule import Rule

_ARGS = (
    "An argument object valid under the old `inputSchema` and invalid under the new, confirmed with jsonschema. "
    "If none is confirmed, the finding is a warning saying so."
)
_RESULT = (
    "A result valid under the new `outputSchema` and invalid under the old, confirmed with jsonschema. If none "
    "is confirmed, the finding is a warning saying so."
)
_BY_HAND = "None: quiver does not judge this change; it names it so that nobody reads silence as safety."
_input = partial(schema_rule, "input")
_output = partial(schema_rule, "output")

TOOL_SCHEMA_UNREADABLE = Rule(
    code="CTR080",
    name="tool-schema-unreadable",
    severity="error",
    direction="tool",
    kind="schema",
    action="unreadable",
    message="tool `{qualified}`: not compared: {reason}",
    hint="fix the tool definition; every other tool of the catalog was still compared",
    doc=rule_doc(
        what="Reports a tool whose definition or schema cannot be read or compared (an `inputSchema` that is "
        "`null`, a subschema that is not an object, a keyword whose form its dialect forbids). The tool gets this "
        "one finding; the rest of the catalog is diffed as usual.",
        why="Nothing can be said about the tool's callers, so the finding fails the check rather than let the "
        "change through unseen.",
        example="""
        github-mcp-server 60aef5d2: `get_me` has `"inputSchema": null` while `dismiss_notification` made `state`
        required. Both are reported: CTR080 on `get_me`, CTR021 on `dismiss_notification`.""",
        fix="Correct the tool definition so that each schema is a JSON object valid in its `$schema` dialect.",
        witness="None: the schema cannot be read, so no instance can be checked against it.",
    ),
)

COMPOSITION_BRANCHES_OVERLAP = _input(
    "CTR081",
    "input-composition-branches-overlap",
    "composition",
    "overlap",
    "`{path}`: `oneOf` branches #{value} now both accept some old arguments, which `oneOf` rejects",
    "make the branches disjoint (for example `integer` and a non-integer `number`), or use `anyOf`",
    what="Reports a `oneOf` of the new `inputSchema` whose branches overlap on values the old schema accepted: "
    "a value matching two branches fails `oneOf`.",
    why="An argument that matched one alternative before now matches two and is rejected.",
    example="""
    Old `{"type": "number"}`, new `{"oneOf": [{"type": "integer"}, {"type": "number"}]}`: `1` matches both.""",
    fix="Use `anyOf`, or make the branches exclude each other.",
    witness=_ARGS,
)

COMPOSITION_OVERLAP_REMOVED = _output(
    "CTR082",
    "output-composition-overlap-removed",
    "composition",
    "overlap-removed",
    "`{path}`: results that matched two old `oneOf` branches #{value} (invalid then) are valid now",
    "tell callers that validate results against the old schema",
    severity="warning",
    what="Reports a result value that matched two branches of the old `outputSchema`'s `oneOf` (so the old "
    "schema rejected it) and is valid under the new schema.",
    why="Output is covariant: callers that validate results with the old schema reject the new ones.",
    example="""
    Old `{"oneOf": [{"type": "integer"}, {"type": "number"}]}`, new `{"type": "number"}`.""",
    fix="Nothing breaks for lenient callers; strict ones need the new schema.",
    witness=_RESULT,
)

CONSTRAINT_ADDED = _input(
    "CTR083",
    "input-constraint-added",
    "constraint",
    "added",
    "`{path}`: new or stricter `{keyword}` rejects arguments that were valid",
    "make the constraint hold for every old call, or relax it",
    what="Reports a `contains`/`minContains`/`maxContains`, `not`, `if`/`then`/`else` or `propertyNames` "
    "constraint that is new or stricter and rejects some argument the old schema accepted.",
    why="Old calls that break the new constraint are rejected.",
    example="""
    Old `{"labels": {"type": "array"}}`, new `{"labels": {"type": "array", "contains": {"const": "bug"}}}`.""",
    fix="Drop the constraint, or apply it as a default on the server instead of rejecting the call.",
    witness=_ARGS,
)

CONSTRAINT_REMOVED = _output(
    "CTR084",
    "output-constraint-removed",
    "constraint",
    "removed",
    "`{path}`: `{keyword}` no longer constrains results",
    "keep the constraint, or tell callers that relied on it",
    severity="warning",
    what="Reports a `contains`, `not`, `if`/`then`/`else` or `propertyNames` constraint on results that was "
    "dropped or loosened.",
    why="Output is covariant: results the old schema excluded can now arrive.",
    example="""
    Old `{"propertyNames": {"pattern": "^[a-z]+$"}}`, new `{}`.""",
    fix="Keep the guarantee, or update callers.",
    witness=_RESULT,
)

DEFAULT_ADDED = _input(
    "CTR085",
    "input-default-added",
    "default",
    "added",
    "`{path}`: default {new} added",
    "callers that omit `{path}` now get {new}: check that it is what they meant",
    severity="warning",
    what="Reports a property that gained a documented `default`.",
    why="Callers that omit the property may get different behaviour than before (the server's implicit choice "
    "may not have been the new default).",
    example="""
    github-mcp-server b879ca26: `create_repository.private` gained `"default": true`: repositories created
    without `private` are now private.""",
    fix="Tell callers; pass the value explicitly where the old behaviour matters.",
    witness="None: validation is unchanged; the behaviour of omitted arguments is.",
)

DEFAULT_REMOVED = _input(
    "CTR086",
    "input-default-removed",
    "default",
    "removed",
    "`{path}`: default {old} removed",
    "callers that omit `{path}` no longer get {old}: pass it explicitly",
    severity="warning",
    what="Reports a property whose documented `default` was dropped.",
    why="Callers that omit the property relied on the documented default; the server may now do otherwise.",
    example="""
    Old `{"perPage": {"type": "integer", "default": 30}}`, new `{"perPage": {"type": "integer"}}`.""",
    fix="Keep the default documented, or pass the value explicitly.",
    witness="None: validation is unchanged; the behaviour of omitted arguments is.",
)

_NOT_ANALYSED = (
    "Reports a change to a JSON Schema keyword the diff does not analyse for variance (`$dynamicRef`, "
    "`unevaluatedItems`, `contentSchema`, a `patternProperties` pattern it cannot sample, ...). Every 2020-12 "
    "keyword and its draft-04/06/07 spelling is either analysed or reported by this rule; `if`/`then`/`else`, "
    "`dependentRequired` and `dependentSchemas` are analysed (CTR083, CTR037, CTR038)."
)

INPUT_KEYWORD_NOT_ANALYSED = _input(
    "CTR087",
    "input-keyword-not-analysed",
    "keyword",
    "changed",
    "changed `{keyword}` at `{path}`: not analysed, review by hand",
    "check by hand whether every old call is still valid",
    severity="warning",
    what=_NOT_ANALYSED,
    why='A change the diff cannot judge might break callers; silence would read as "All checks passed".',
    example="""
    Old `{"unevaluatedItems": true}`, new `{"unevaluatedItems": {"type": "string"}}`.""",
    fix="Review the change; accept the finding with a reason in the ignore file once checked.",
    witness=_BY_HAND,
)

OUTPUT_KEYWORD_NOT_ANALYSED = _output(
    "CTR088",
    "output-keyword-not-analysed",
    "keyword",
    "changed",
    "changed `{keyword}` at `{path}`: not analysed, review by hand",
    "check by hand whether every new result is valid under the old schema",
    severity="warning",
    what=_NOT_ANALYSED,
    why='A change the diff cannot judge might break callers; silence would read as "All checks passed".',
    example="""
    Old `{"$dynamicRef": "#node"}`, new `{"$dynamicRef": "#leaf"}`.""",
    fix="Review the change; accept the finding with a reason in the ignore file once checked.",
    witness=_BY_HAND,
)

_NOT_COMPARED = (
    "Reports a part of a schema that was not compared, with the reason: a remote `$ref` (never fetched), or a "
    "nesting deeper than the walker's limit. The rest of the schema is compared."
)

INPUT_SUBSCHEMA_NOT_COMPARED = _input(
    "CTR089",
    "input-subschema-not-compared",
    "subschema",
    "not-compared",
    "`{path}`: not compared: {reason}",
    "review this part by hand, or inline the referenced schema under `$defs`",
    severity="warning",
    what=_NOT_COMPARED,
    why="A change there could break callers and would otherwise go unreported.",
    example="""
    `{"properties": {"repo": {"$ref": "https://example.com/repo.json"}}}` on either side.""",
    fix="Define the target under `$defs` in the same schema so it can be compared.",
    witness=_BY_HAND,
)

OUTPUT_SUBSCHEMA_NOT_COMPARED = _output(
    "CTR090",
    "output-subschema-not-compared",
    "subschema",
    "not-compared",
    "`{path}`: not compared: {reason}",
    "review this part by hand, or inline the referenced schema under `$defs`",
    severity="warning",
    what=_NOT_COMPARED,
    why="A change there could break callers and would otherwise go unreported.",
    example="""
    `{"properties": {"owner": {"$ref": "https://example.com/user.json"}}}` on either side.""",
    fix="Define the target under `$defs` in the same schema so it can be compared.",
    witness=_BY_HAND,
)

# The module's rules in code order; findings/catalog.py names this module for each of their codes.
RULES: tuple[Rule, ...] = (
    TOOL_SCHEMA_UNREADABLE,  # CTR080
    COMPOSITION_BRANCHES_OVERLAP,  # CTR081
    COMPOSITION_OVERLAP_REMOVED,  # CTR082
    CONSTRAINT_ADDED,  # CTR083
    CONSTRAINT_REMOVED,  # CTR084
    DEFAULT_ADDED,  # CTR085
    DEFAULT_REMOVED,  # CTR086
    INPUT_KEYWORD_NOT_ANALYSED,  # CTR087
    OUTPUT_KEYWORD_NOT_ANALYSED,  # CTR088
    INPUT_SUBSCHEMA_NOT_COMPARED,  # CTR089
    OUTPUT_SUBSCHEMA_NOT_COMPARED,  # CTR090
)
