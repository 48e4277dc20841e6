"""An oracle for contract breaks that shares nothing with quiver's diff: random instances of the old schema.

`breaks(old, new, tries)` draws argument objects from the old `inputSchema` (its own generator: types, enums,
bounds, lengths, formats, required and optional properties, arrays, `anyOf`/`oneOf`/`allOf`, local `$ref`,
then mutations: a property dropped, a value of another type, an extra key), keeps those jsonschema accepts
under the old schema, and returns the first one it rejects under the new: a break, found blind. Deterministic
for a seed. Format checks are jsonschema's own checkers where the standard library has them, plus the
RFC 3339 and RFC 3986 shapes (no optional package), as an independent reading of the formats.
"""

from __future__ import annotations

import datetime
import random
import re
from typing import Any

from jsonschema import FormatChecker, validators

JSON = Any
_STRINGS = ["", "x", "a", "abc", "A", "0", "1", "open", "OPEN", "closed", "all", "asc", "DESC", "high", "HIGH",
            "x" * 5, "x" * 40, "2024-01-01", "2024-01-01T00:00:00Z", "user@example.com", "https://example.com/",
            "00000000-0000-4000-8000-000000000000", "127.0.0.1", "::1", "main", "octocat", "a b", "√"]  # fmt: skip
_CHECKER = FormatChecker()


@_CHECKER.checks("date-time")
def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", value)
    if match is None:
        return False
    try:
        datetime.date.fromisoformat(match[1])
    except ValueError:
        return False
    return int(match[2]) < 24 and int(match[3]) < 60 and int(match[4]) <= 60


@_CHECKER.checks("time")
def _time(value: object) -> bool:
    return not isinstance(value, str) or _date_time("2000-01-01T" + value)


@_CHECKER.checks("uri")
def _uri(value: object) -> bool:
    return not isinstance(value, str) or re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*", value) is not None


def validator(schema: JSON) -> Any:
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    return cls(schema, format_checker=_CHECKER)


def breaks(old: JSON, new: JSON, *, tries: int = 400, seed: int = 0) -> JSON | None:
    """An instance valid under `old` and invalid under `new`, or None when `tries` draws find none."""
    rng = random.Random(seed)
    accept, reject = validator(old), validator(new)
    for _ in range(tries):
        value = _mutate(_draw(old, old, rng, 0), old, rng)
        try:
            if accept.is_valid(value) and not reject.is_valid(value):
                return value
        except Exception:  # a schema jsonschema cannot judge: no verdict
            return None
    return None


def _resolve(node: JSON, root: JSON) -> JSON:
    for _ in range(16):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
            target: JSON = root
            for part in node["$ref"][2:].split("/"):
                target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
            node = {**{k: v for k, v in node.items() if k != "$ref"}, **target} if isinstance(target, dict) else target
        else:
            break
    return node


def _draw(node: JSON, root: JSON, rng: random.Random, depth: int) -> JSON:
    node = _resolve(node, root)
    if node is True or node is None or depth > 6:
        return rng.choice([*_STRINGS, 0, 1, True, None])
    if node is False or not isinstance(node, dict):
        return None
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return rng.choice(node["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and node[key]:
            rest = {k: v for k, v in node.items() if k != key}
            return _draw({"allOf": [rest, rng.choice(node[key])]}, root, rng, depth + 1)
    if isinstance(node.get("allOf"), list):
        merged: dict[str, JSON] = {k: v for k, v in node.items() if k != "allOf"}
        for part in node["allOf"]:
            part = _resolve(part, root)
            if isinstance(part, dict):
                for k, v in part.items():
                    if k == "properties" and isinstance(merged.get(k), dict) and isinstance(v, dict):
                        merged[k] = {**merged[k], **v}
                    elif k == "required":
                        merged[k] = [*merged.get(k, []), *v]
                    else:
                        merged.setdefault(k, v)
        return _draw(merged, root, rng, depth + 1)
    kinds = node.get("type")
    kind = rng.choice(kinds) if isinstance(kinds, list) and kinds else kinds
    if kind is None:
        kind = "object" if "properties" in node else "array" if "items" in node else rng.choice(["string", "integer"])
    return _value(kind, node, root, rng, depth)


def _value(kind: str, node: dict[str, JSON], root: JSON, rng: random.Random, depth: int) -> JSON:
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", -5))
        high = node.get("maximum", node.get("exclusiveMaximum", 120))
        low, high = (low, high) if isinstance(low, (int, float)) and isinstance(high, (int, float)) else (-5, 120)
        pick = rng.choice([low, high, low + 1, high - 1, 0, 1, rng.randint(int(min(low, high)), int(max(low, high)))])
        return pick + (0.5 if kind == "number" and rng.random() < 0.2 else 0)
    if kind == "string":
        pool = list(_STRINGS)
        low, high = node.get("minLength", 0), node.get("maxLength", 60)
        pool += ["y" * n for n in (low, high, max(0, high - 1), low + 1) if isinstance(n, int) and 0 <= n < 200]
        return rng.choice(pool)
    if kind == "array":
        items = node.get("prefixItems") or []
        count = rng.choice([0, 1, 2, node.get("minItems", 0) or 0, node.get("maxItems", 3) or 3])
        out = [_draw(item, root, rng, depth + 1) for item in items]
        out += [_draw(node.get("items", True), root, rng, depth + 1) for _ in range(max(0, int(count) - len(out)))]
        return out
    props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
    required = [r for r in node.get("required", []) if isinstance(r, str)]
    out: dict[str, JSON] = {}
    for name, sub in props.items():
        if name in required or rng.random() < 0.5:
            out[name] = _draw(sub, root, rng, depth + 1)
    for name in required:
        out.setdefault(name, rng.choice(_STRINGS))
    return out


def _mutate(value: JSON, schema: JSON, rng: random.Random) -> JSON:
    """Now and then: a top-level key dropped, one given another type, or an undeclared key added."""
    if not isinstance(value, dict) or rng.random() < 0.5:
        return value
    value = dict(value)
    choice = rng.random()
    if value and choice < 0.4:
        value.pop(rng.choice(sorted(value)))
    elif value and choice < 0.7:
        value[rng.choice(sorted(value))] = rng.choice([*_STRINGS, 0, 1.5, True, None, [], {}])
    else:
        value["quiver_fuzz_extra"] = rng.choice(_STRINGS)
    return value
