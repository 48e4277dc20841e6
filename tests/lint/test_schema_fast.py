"""The jsonschema-free fast path (schema_fast.py) never vouches for what jsonschema rejects.

Differential: random shallow nodes and defaults, built from the keywords the fast path models, values that
are right, wrong and borderline, and keywords it does not model; whenever the fast path says "valid",
jsonschema (the meta-schema validator the lint uses, or the dialect's validator for a default) must agree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.lint.support.schema_walk import DIALECTS, MetaChecker, _shallow, validator_class, walk
from quiver.schema_fast import TABLES, default_valid, known_dialect, shallow_valid

ROOT = Path(__file__).resolve().parents[2]
FAST_DIALECTS = sorted(TABLES)
CHECKER = MetaChecker()

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.sampled_from([0.0, 2.0, 2.5, -1.5, 1e308]),
    st.sampled_from(["string", "integer", "object", "array", "number", "null", "boolean", "strin", "", "s0", "s1"]),
    st.sampled_from(["a+", "[", "^x$", "(?P<n>a)", "\\d{2}", "#/$defs/a", "#/definitions/x y", "http://x/y#", "#a#b"]),
)
_values = st.one_of(
    _scalars,
    st.just({}),
    st.lists(_scalars, max_size=3),
    st.lists(st.sampled_from([{}, True, False, "x"]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "b", "[", "^c"]), st.sampled_from([{}, True, "x", 1]), max_size=2),
)
_UNMODELLED = ["x-vendor", "markdownDescription", "dependentRequired", "$anchor", "$dynamicRef", "contentSchema", "id"]
_keywords = st.sampled_from([*sorted({k for table in TABLES.values() for k in table}), *_UNMODELLED])
_nodes = st.dictionaries(_keywords, _values, min_size=1, max_size=4)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FAST_DIALECTS), _nodes)
def test_a_node_the_fast_path_vouches_for_passes_the_meta_schema(dialect: str, node: dict[str, Any]) -> None:
    if shallow_valid(dialect, node):
        validator = CHECKER._meta_validator(dialect)
        assert validator.is_valid(node), (dialect, node)


_defaults = st.one_of(
    _scalars, st.just([]), st.just({}), st.lists(st.integers(0, 2), min_size=1, max_size=2), st.just({"a": 1})
)
_constraints = st.dictionaries(
    st.sampled_from(
        [
            "type",
            "enum",
            "const",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "items",
            "minItems",
            "maxItems",
            "required",
            "minProperties",
            "properties",
            "multipleOf",
            "anyOf",
            "allOf",
            "x-vendor",
        ]
    ),
    st.one_of(
        st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object", "email"]),
        st.lists(st.sampled_from(["string", "integer", "null", "a", "b"]), min_size=1, max_size=3, unique=True),
        st.integers(0, 4),
        st.sampled_from([0.5, 2.0, -1]),
        st.sampled_from(["^a", "b$", "\\d+"]),
        st.just({}),
        st.just([]),
        st.just(["a"]),
        st.just({"type": "integer"}),
        st.just([{"type": "string"}, {"type": "null"}]),
        st.just([{"type": "integer", "minimum": 1}, True]),
        st.just([{"enum": ["a", "b"]}, {"type": "string", "maxLength": 1}]),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FAST_DIALECTS), _constraints, _defaults)
def test_a_default_the_fast_path_vouches_for_satisfies_its_schema(
    dialect: str, schema: dict[str, Any], value: Any
) -> None:
    node = {**schema, "default": value}
    if not CHECKER._meta_validator(dialect).is_valid(_shallow(node, DIALECTS[dialect][1] or {})):
        return  # TOOL016 only runs on schemas that pass their meta-schema
    if default_valid(dialect, node):
        assert validator_class(dialect)(schema).is_valid(value), (dialect, node)


def test_every_published_dialect_uri_is_named_as_jsonschema_names_it() -> None:
    from jsonschema.validators import validator_for

    for uri in [
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
    ]:
        assert known_dialect(uri) == validator_for({"$schema": uri}, default=None).__name__
    assert known_dialect("https://example.com/my-schema") is None
    assert known_dialect("http://json-schema.org/draft-07/schema#x") is None


def _real_schemas(corpus: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted((corpus / "catalogs").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = data.get("tools", data) if isinstance(data, dict) else data
        out += [t["inputSchema"] for t in tools if isinstance(t, dict) and isinstance(t.get("inputSchema"), dict)]
    return out


def test_the_fast_path_decides_nearly_every_node_of_real_tool_schemas(corpus: Path) -> None:
    nodes = vouched = 0
    for schema in _real_schemas(corpus):
        dialect = CHECKER.dialect_of(schema)
        if dialect not in TABLES:
            continue
        app = DIALECTS[dialect][1] or {}
        for _, node in walk(schema, app):
            nodes += 1
            vouched += shallow_valid(dialect, _shallow(node, app))
    assert nodes > 1000
    assert vouched / nodes > 0.97, f"{vouched} of {nodes}"


def test_a_cold_lint_of_the_demo_never_imports_jsonschema(tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "demo"
    shutil.copytree(ROOT / "examples" / "demo", project, ignore=shutil.ignore_patterns("build", ".quiver"))
    code = (
        "import sys\n"
        "from quiver.cli import main\n"
        f"sys.argv = ['quiver', 'lint', '--fail-on', 'never', '--format', 'json', '--project', {str(project)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('jsonschema' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "False"
    assert any(f["rule"].startswith("TOOL") for f in json.loads(done.stdout))  # it did lint the tools


_leaf_schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"]),
        "minimum": st.integers(-2, 3),
        "maxLength": st.integers(0, 4),
        "enum": st.just(["a", "b", ""]),
        "minItems": st.integers(0, 2),
        "uniqueItems": st.booleans(),
    },
)
_schemas_tree = st.recursive(
    _leaf_schemas,
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "array"]),
            "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
            "required": st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=2),
            "additionalProperties": st.one_of(st.booleans(), inner),
            "items": inner,
            "maxProperties": st.integers(0, 3),
            "anyOf": st.lists(inner, min_size=1, max_size=2),
        },
    ),
    max_leaves=6,
)
_instances = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 4), st.sampled_from([1.0, 2.5, "a", "b", "xyz", ""])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FAST_DIALECTS), _schemas_tree, _instances)
def test_an_instance_the_fast_path_vouches_for_satisfies_its_schema(dialect: str, schema: Any, value: Any) -> None:
    from quiver.schema_fast import instance_valid

    if instance_valid(dialect, schema, value):
        assert validator_class(dialect)(schema).is_valid(value), (dialect, schema, value)


def test_the_fast_path_vouches_for_typical_tool_arguments() -> None:
    from quiver.schema_fast import instance_valid

    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
        "required": ["text"],
        "additionalProperties": False,
    }
    assert instance_valid("Draft202012Validator", schema, {"text": "hi", "count": 2})
    assert not instance_valid("Draft202012Validator", schema, {"text": "hi", "extra": 1})
    assert not instance_valid("Draft202012Validator", schema, {"count": 2})
    assert not instance_valid("Draft4Validator", schema, {"text": "hi"})  # not modelled: jsonschema decides
