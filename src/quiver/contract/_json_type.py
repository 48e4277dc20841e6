"""The JSON Schema type name of a parsed JSON value (`integer` for a whole number, also written `1.0`): below
`document.py` and `_wellformed.py`, which both name the type of a value they reject."""

from __future__ import annotations

from quiver.model import JSON


def json_type(value: JSON) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
