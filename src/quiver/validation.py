"""Validate documents against quiver's JSON Schemas (DESIGN §8), shipped as package data in `quiver/schemas/`.

jsonschema costs about 0.14 s to import, so it is imported inside the functions that need it, never at
module import: `quiver lint` must stay fast.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

from quiver.model import JSON

__all__ = ["SCHEMA_BASE", "check_schemas", "load_schema", "schema_id", "schema_names", "validate"]

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "urn:agent-quiver:schema:"  # `$id`s are names, not addresses: quiver has no web site
_SUFFIX = ".schema.json"


def schema_names() -> tuple[str, ...]:
    """Names of every shipped schema (`manifest`, `lock`, ...), sorted."""
    folder = resources.files("quiver") / "schemas"
    return tuple(sorted(p.name[: -len(_SUFFIX)] for p in folder.iterdir() if p.name.endswith(_SUFFIX)))


def schema_id(name: str) -> str:
    """The `$id` of schema `name` (`manifest`): a URN, `urn:agent-quiver:schema:manifest`."""
    return f"{SCHEMA_BASE}{name.removesuffix(_SUFFIX)}"


def _file_name(name: str) -> str:
    return name if name.endswith(_SUFFIX) else f"{name}{_SUFFIX}"


@functools.cache
def _read_schema(file_name: str) -> dict[str, JSON]:
    resource = resources.files("quiver") / "schemas" / file_name
    if not resource.is_file():
        raise ValueError(f"no schema named `{file_name}`; known: {', '.join(schema_names())}")
    schema = json.loads(resource.read_text(encoding="utf-8"))
    if not isinstance(schema, dict):
        raise ValueError(f"schema `{file_name}` is not a JSON object")
    return schema


def schemas_sha() -> str:
    """sha256 over every packaged schema file: what a cache of validated outputs is keyed by."""

    digest = hashlib.sha256()
    for name in sorted(p.name for p in (resources.files("quiver") / "schemas").iterdir() if p.name.endswith(".json")):
        digest.update(name.encode() + b"\0" + (resources.files("quiver") / "schemas" / name).read_bytes())
    return digest.hexdigest()


def load_schema(name: str) -> dict[str, JSON]:
    """The schema `name` (`manifest` or `manifest.schema.json`), read once from the package data.

    The returned dict is shared by every caller: do not modify it.
    """
    return _read_schema(_file_name(name))


@functools.cache
def _validator(file_name: str) -> Any:  # a jsonschema.Draft202012Validator (jsonschema ships no type hints)
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_read_schema(file_name))  # no format_checker: `format` is not asserted


def validate(instance: JSON, name: str) -> list[str]:
    """Every way `instance` breaks schema `name`, as sorted `$.json.path: message` lines; empty when valid.

    For an error under `oneOf`/`anyOf` the most relevant error of the branches is reported, so that a
    manifest with a bad field says which field, not only that no branch matched.
    """
    from jsonschema.exceptions import best_match

    validator = _validator(_file_name(name))
    messages = set()
    for error in validator.iter_errors(instance):
        cause = best_match([error]) if error.context else error
        messages.add(f"{cause.json_path}: {_message(cause, validator)}")
    return sorted(messages)


def _message(error: Any, validator: Any) -> str:
    """jsonschema's message, except for a `oneOf`/`anyOf` of titled branches: name the branches, not the data."""
    branches = error.validator_value if error.validator in ("oneOf", "anyOf") else None
    if not isinstance(branches, list):
        return str(error.message)
    titles = [b["title"] for b in branches if isinstance(b, dict) and isinstance(b.get("title"), str)]
    if not titles or len(titles) != len(branches):
        return str(error.message)
    if error.context:
        return f"matches none of: {', '.join(titles)}"
    matched = [t for b, t in zip(branches, titles, strict=True) if validator.evolve(schema=b).is_valid(error.instance)]
    return f"matches more than one of: {', '.join(matched)}"


def check_schemas() -> None:
    """Raise when a shipped schema is itself invalid: not 2020-12, a wrong `$id`, no title or description,
    or a `$ref` that does not resolve. For tests and CI."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    names = schema_names()
    if not names:
        raise ValueError("no schemas found in the quiver package")
    for name in names:
        file_name = _file_name(name)
        schema = _read_schema(file_name)
        Draft202012Validator.check_schema(schema)
        expected = {"$schema": DRAFT, "$id": schema_id(name)}
        for key, value in expected.items():
            if schema.get(key) != value:
                raise ValueError(f"schema `{file_name}`: `{key}` must be {value!r}, not {schema.get(key)!r}")
        for key in ("title", "description"):
            if not isinstance(schema.get(key), str) or not schema[key].strip():
                raise ValueError(f"schema `{file_name}` has no `{key}`")
        resource = Resource.from_contents(schema, default_specification=DRAFT202012)
        resolver = Registry().with_resource(expected["$id"], resource).resolver(base_uri=expected["$id"])
        for ref in sorted(set(_refs(schema))):
            try:
                resolver.lookup(ref)
            except Unresolvable as exc:
                raise ValueError(f"schema `{file_name}`: `$ref` {ref!r} does not resolve") from exc


def _refs(node: JSON) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)
