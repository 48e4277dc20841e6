"""Walking JSON Schemas of tool definitions, and checking them against their dialect's meta-schema, fast.

`jsonschema`'s `check_schema` costs about 4 ms per tool schema under draft 2020-12 (its `$dynamicRef`
resolution dominates): 40 s for 10,000 tools. The meta-schemas are recursive in one way only: every
subschema position (`properties/*`, `items`, `anyOf/*`, ...) is validated against the whole meta-schema
again. So a schema is valid iff each of its nodes is valid with its subschemas replaced by `{}`, and those
shallow nodes repeat a lot once their free text is blanked: each distinct one is checked once per process.
`tests/lint/test_tools.py` checks that this agrees with `check_schema` on the corpus and on mutations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin

from quiver.model import JSON
from quiver.schema_fast import DEFAULT_DIALECT, known_dialect, shallow_valid

Path = tuple[str, ...]

# How a keyword holds subschemas: a map of them, one, a list of them, or one or a list (`items` before 2020-12).
Kind = str  # "map" | "one" | "list" | "one|list"
Applicators = Mapping[str, Kind]

_DRAFT4: Applicators = {
    "properties": "map",
    "patternProperties": "map",
    "definitions": "map",
    "dependencies": "map",
    "additionalItems": "one",
    "additionalProperties": "one",
    "not": "one",
    "items": "one|list",
    "allOf": "list",
    "anyOf": "list",
    "oneOf": "list",
}
_DRAFT6: Applicators = {**_DRAFT4, "contains": "one", "propertyNames": "one"}
_DRAFT7: Applicators = {**_DRAFT6, "if": "one", "then": "one", "else": "one"}
_2019: Applicators = {
    **_DRAFT7,
    "$defs": "map",
    "dependentSchemas": "map",
    "unevaluatedItems": "one",
    "unevaluatedProperties": "one",
    "contentSchema": "one",
}
_2020: Applicators = {
    **{k: v for k, v in _2019.items() if k != "additionalItems"},
    "items": "one",
    "prefixItems": "list",
}
# The union over dialects: enough to find every schema node for the other checks.
ALL: Applicators = {**_2019, "prefixItems": "list"}
DIALECTS: Mapping[str, tuple[str, Applicators | None]] = {
    "Draft202012Validator": ("2020-12", _2020),
    "Draft201909Validator": ("2019-09", _2019),
    "Draft7Validator": ("draft-07", _DRAFT7),
    "Draft6Validator": ("draft-06", _DRAFT6),
    "Draft4Validator": ("draft-04", _DRAFT4),
    "Draft3Validator": ("draft-03", None),  # checked whole: rare, and its meta-schema differs in shape
}
_FREE_TEXT = frozenset({"description", "title", "$comment"})
_ANY_VALUE = frozenset({"default", "const"})
_STRING_LISTS = frozenset({"required", "enum"})


Node = tuple[Path, Mapping[str, JSON]]


def walk(schema: JSON, app: Applicators = ALL) -> list[Node]:
    """Every object node of a schema with its path from the root, breadth first (root first)."""
    if not isinstance(schema, dict):
        return []
    out: list[Node] = [((), schema)]
    i = 0
    while i < len(out):
        path, node = out[i]
        i += 1
        for key, value in node.items():
            kind = app.get(key)
            if kind is None:
                continue
            if isinstance(value, dict):
                if kind == "map":
                    out.extend(((*path, key, k), v) for k, v in value.items() if isinstance(v, dict))
                elif kind != "list":
                    out.append(((*path, key), value))
            elif isinstance(value, list) and kind != "one" and kind != "map":
                out.extend(((*path, key, str(j)), v) for j, v in enumerate(value) if isinstance(v, dict))
    return out


def dotted(path: Path) -> str:
    return ".".join(path)


def _stand_ins(values: list[JSON]) -> list[JSON]:
    """Strings replaced by stand-ins that keep equality (so uniqueness and types are unchanged)."""
    seen: dict[str, str] = {}
    return [seen.setdefault(v, f"s{len(seen)}") if isinstance(v, str) else v for v in values]


def _shallow(node: Mapping[str, JSON], app: Applicators, *, blank: bool = True) -> dict[str, JSON]:
    """The node as the meta-schema sees it, minus what cannot change the verdict.

    Subschemas become `{}` (they are checked as nodes of their own), map entries holding them are
    dropped (the meta-schema never constrains those names, except `patternProperties` keys: regexes),
    free text is blanked and free values nulled, and the strings of `required`/`enum` become stand-ins.
    """
    out: dict[str, JSON] = {}
    for key, value in node.items():
        kind = app.get(key)
        if kind is not None:
            if isinstance(value, dict):
                if kind == "map":
                    if key == "patternProperties":
                        value = {k: ({} if isinstance(v, dict) else v) for k, v in value.items()}
                    else:
                        value = {k: v for k, v in value.items() if not isinstance(v, dict)}
                elif kind != "list":
                    value = {}
            elif isinstance(value, list) and kind != "one" and kind != "map":
                value = [{} if isinstance(v, dict) else v for v in value]
        elif not blank:
            pass
        elif key in _FREE_TEXT:
            if isinstance(value, str):
                value = ""
        elif key in _ANY_VALUE:
            value = None
        elif key == "examples":
            if isinstance(value, list):
                value = []
        elif key in _STRING_LISTS and isinstance(value, list):
            value = _stand_ins(value)
        out[key] = value
    return out


def _flat_meta(meta: Mapping[str, JSON]) -> dict[str, JSON] | None:
    """A 2019-09/2020-12 meta-schema with its vocabularies merged and dynamic references made static.

    Their `allOf` of vocabulary meta-schemas, each `type: [object, boolean]` with disjoint `properties`,
    equals one schema holding all those properties; `$dynamicRef: #meta` / `$recursiveRef: #` point back
    at the top. jsonschema's dynamic scope resolution is what makes the original slow. None when the
    meta-schema is not of that shape (then the original is used).
    """

    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]  # ships no py.typed

    parts = [dict(meta)]
    for item in meta.get("allOf", ()):
        ref = item.get("$ref") if isinstance(item, dict) else None
        if not isinstance(ref, str):
            return None
        parts.append(dict(REGISTRY.contents(urljoin(str(meta["$id"]), ref))))
    properties: dict[str, JSON] = {}
    defs: dict[str, JSON] = {}
    for part in parts:
        for name, value in part.get("properties", {}).items():
            if name in properties:
                return None
            properties[name] = value
        for name, value in part.get("$defs", {}).items():
            if name in defs and defs[name] != value:
                return None
            defs[name] = value
    flat: dict[str, JSON] = {"type": ["object", "boolean"], "properties": properties, "$defs": defs}
    try:
        return dict(_static_refs(flat))
    except ValueError:
        return None


def _static_refs(value: JSON) -> JSON:
    if isinstance(value, list):
        return [_static_refs(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, JSON] = {}
    for key, item in value.items():
        if key in ("$dynamicRef", "$recursiveRef") and isinstance(item, str):
            if item not in ("#meta", "#"):
                raise ValueError(item)
            out["$ref"] = "#"
        elif key == "$ref" and isinstance(item, str):
            if "#/$defs/" not in item:
                raise ValueError(item)
            out["$ref"] = "#/$defs/" + item.split("#/$defs/", 1)[1]
        else:
            out[key] = _static_refs(item)
    return out


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """Why a schema fails its meta-schema: where (path inside the schema), and jsonschema's explanation."""

    dialect: str
    path: Path
    detail: str


class MetaChecker:
    """Checks schemas against their dialect's meta-schema (`$schema`, default 2020-12), memoizing shallow nodes.

    A dialect is named by its jsonschema validator class (`Draft202012Validator`). Nodes that
    `schema_fast.shallow_valid` vouches for never reach jsonschema, which is imported on first need (50 ms):
    a project whose schemas use the common keywords never pays for it.
    """

    def __init__(self) -> None:
        self._validators: dict[str, Any] = {}
        self._seen: dict[tuple[str, str], tuple[Path, str] | None] = {}
        self._dialects: dict[str, str | None] = {}

    def dialect_of(self, schema: Mapping[str, JSON]) -> str | None:
        """The dialect `$schema` names; None for one jsonschema does not know."""
        declared = schema.get("$schema")
        if declared is None or not isinstance(declared, str):
            return DEFAULT_DIALECT  # a non-string `$schema` fails the 2020-12 meta-schema: report it there
        if declared not in self._dialects:
            found = known_dialect(declared)
            if found is None:
                from jsonschema.validators import validator_for

                cls = validator_for(schema, default=None)
                found = cls.__name__ if cls is not None else None
            self._dialects[declared] = found
        return self._dialects[declared]

    def _meta_validator(self, dialect: str) -> Any:
        validator = self._validators.get(dialect)
        if validator is None:
            from jsonschema.validators import validator_for

            cls = validator_class(dialect)
            meta = cls.META_SCHEMA
            meta_cls = validator_for(meta, default=cls)
            flat = _flat_meta(meta) if "allOf" in meta else None
            validator = meta_cls(flat or meta, format_checker=meta_cls.FORMAT_CHECKER)
            self._validators[dialect] = validator
        return validator

    @staticmethod
    def applicators(dialect: str | None) -> Applicators:
        """The subschema positions of a dialect (all known ones for an unknown dialect)."""
        found = DIALECTS.get(dialect) if dialect is not None else None
        return found[1] or ALL if found is not None else ALL

    def problem(self, schema: JSON, dialect: str, nodes: list[Node] | None = None) -> SchemaProblem | None:
        """The first meta-schema violation of `schema` (a dict or bool) under `dialect`, or None.

        `nodes` is `walk(schema, applicators(dialect))` when the caller has it already.
        """
        label, app = DIALECTS.get(dialect, (dialect, None))
        if app is None or not isinstance(schema, dict):
            return self._whole(self._meta_validator(dialect), schema, label)
        for path, node in nodes if nodes is not None else walk(schema, app):
            shallow = _shallow(node, app)
            key = (dialect, repr(shallow))  # lock files sort keys: equal nodes have equal reprs
            if key not in self._seen:
                valid = shallow_valid(dialect, shallow)
                self._seen[key] = None if valid else self._first_error(self._meta_validator(dialect), shallow)
            if self._seen[key] is not None:
                # explain with the real values, not the stand-ins
                validator = self._meta_validator(dialect)
                found = self._first_error(validator, _shallow(node, app, blank=False)) or self._seen[key]
                assert found is not None
                return SchemaProblem(label, path + found[0], found[1])
        return None

    def _whole(self, validator: Any, schema: JSON, label: str) -> SchemaProblem | None:
        found = self._first_error(validator, schema)
        return SchemaProblem(label, found[0], found[1]) if found is not None else None

    @staticmethod
    def _first_error(validator: Any, instance: JSON) -> tuple[Path, str] | None:
        if validator.is_valid(instance):
            return None
        from jsonschema.exceptions import best_match

        error = best_match(validator.iter_errors(instance))
        return tuple(str(p) for p in error.absolute_path), str(error.message)


def validator_class(dialect: str) -> Any:
    """jsonschema's validator class for a dialect name (imports jsonschema)."""
    import jsonschema

    return getattr(jsonschema, dialect)


_MISSING = object()


def resolve_pointer(schema: Mapping[str, JSON], ref: str) -> JSON:
    """The value a local JSON Pointer `#/...` designates, or None."""
    if not ref.startswith("#/"):
        return None
    current: Any = schema
    for raw in ref[2:].split("/"):
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict):
            current = current.get(token, _MISSING)
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return None
        if current is _MISSING:
            return None
    return current
