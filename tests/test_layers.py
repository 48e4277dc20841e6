"""The import graph runs one way: no module of src/quiver imports a module of a higher layer.

The layers are stated in docs/architecture.md; this test reads every import statement (module level or
inside a function) with `ast`, so a lazy import cannot hide a back-edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "quiver"
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"

# Bottom first. A unit is a top-level module or package of quiver (`quiver.lint` covers all of lint/).
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "quiver",
        "quiver.model",
        "quiver.errors",
        "quiver.jsonout",
        "quiver.names",
        "quiver.suggest",
        "quiver.variables",
        "quiver.validation",
        "quiver.schema_fast",
        "quiver.regex_budget",
        "quiver.builtins",
        "quiver.metatools",
        "quiver.since",
        "quiver.gc_pause",
        "quiver.globs",
        "quiver.extras",
        "quiver.policy_values",
        "quiver.mcp_sdk",
    ),
    ("quiver.tokens", "quiver.hosts"),
    ("quiver.sources", "quiver.config"),
    ("quiver.project", "quiver.references", "quiver.resolve", "quiver.findings", "quiver.search", "quiver._search"),
    (
        "quiver.lint",
        "quiver.contract",
        "quiver.runtime",
        "quiver.compile",
        "quiver.host_exports",
        "quiver.policy",
        "quiver.capabilities",
        "quiver.advise",
        "quiver.routes",
        "quiver.stats",
        "quiver.usage_totals",
    ),
    ("quiver.report",),
    ("quiver.commands", "quiver.cli", "quiver.__main__", "quiver.api"),
)
LAYER_OF = {unit: depth for depth, units in enumerate(LAYERS) for unit in units}
# Imports under `if TYPE_CHECKING:` that point up a layer, each with its reason (they run no import).
TYPE_ONLY_WAIVERS: dict[tuple[str, str], str] = {}
# Units of one layer that must not import each other either (both directions).
APART = (("quiver.lint", "quiver.contract"), ("quiver.lint", "quiver.runtime"), ("quiver.contract", "quiver.runtime"))


def _unit(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _module_of(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_only_lines(tree: ast.Module) -> set[int]:
    """Lines of imports under `if TYPE_CHECKING:` (not executed; checked against TYPE_ONLY_WAIVERS)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        lines.add(sub.lineno)
    return lines


def _imports(source: str, package: str) -> list[tuple[int, str]]:
    """(line, imported module) for every quiver import in `source`; `from a import b` counts `a.b` too."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.append((node.lineno, base))
            out.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
    return [(line, name) for line, name in out if name == "quiver" or name.startswith("quiver.")]


def _edges(*, type_only: bool = False) -> list[tuple[str, int, str, str]]:
    """(file, line, importing unit, imported unit) for every import between two units: those run at import
    time, or (`type_only`) those under `if TYPE_CHECKING:`."""
    edges = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_of(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        unit = _unit(module)
        source = path.read_text(encoding="utf-8")
        typing_lines = _type_only_lines(ast.parse(source))
        for line, name in _imports(source, package):
            target = _unit(name)
            if target != unit and target != "quiver.__version__" and (line in typing_lines) == type_only:
                edges.append((str(path.relative_to(SRC.parent)), line, unit, target))
    return edges


def _back(edges: list[tuple[str, int, str, str]]) -> list[tuple[str, str]]:
    return sorted(
        {
            (file, target)
            for file, _, unit, target in edges
            if target in LAYER_OF and unit in LAYER_OF and LAYER_OF[target] > LAYER_OF[unit]
        }
    )


def test_every_unit_of_src_quiver_has_a_layer() -> None:
    units = {_unit(_module_of(p)) for p in SRC.rglob("*.py")}
    assert sorted(units - LAYER_OF.keys()) == [], "add the new module to LAYERS and docs/architecture.md"


def test_no_module_imports_a_module_of_a_higher_layer() -> None:
    assert [f"{file} imports {target}" for file, target in _back(_edges())] == []


def test_typing_only_back_edges_are_the_waived_ones() -> None:
    assert _back(_edges(type_only=True)) == sorted(TYPE_ONLY_WAIVERS)


@pytest.mark.parametrize(("a", "b"), APART)
def test_sibling_units_that_must_stay_apart_do_not_import_each_other(a: str, b: str) -> None:
    crossing = [f"{file}:{line}" for file, line, unit, target in _edges() if {unit, target} == {a, b}]
    assert crossing == []


def test_the_layer_test_sees_lazy_and_relative_imports() -> None:
    lazy = "def f() -> None:\n    from quiver.commands.compile import CACHE_FILE\n"
    assert (2, "quiver.commands.compile") in _imports(lazy, "quiver.lint.bud")
    assert (1, "quiver.commands") in _imports("from ...commands import lint\n", "quiver.lint.bud")


def test_docs_architecture_names_every_layer() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for units in LAYERS:
        for unit in units:
            if unit not in ("quiver", "quiver.__main__"):
                assert f"`{unit.removeprefix('quiver.')}" in text, unit
