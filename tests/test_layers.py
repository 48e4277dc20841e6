"""The import graph runs one way: no module of src/quiver imports a module of a higher layer, and no
modules import each other in a circle.

The layers are stated in docs/architecture.md: the top-level units of `quiver` (LAYERS) and the inside of
every package (ORDER). This test reads every import statement (module level, inside a function, under
`if TYPE_CHECKING:`) with `ast`, so a lazy or a typing-only import cannot hide a back-edge or a circle, and
it finds every `importlib.import_module` / `__import__` of a project module: only the lint registry loads
modules by name.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "quiver"
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"

Layers = tuple[tuple[str, ...], ...]

# Bottom first. A unit is a top-level module or package of quiver (`quiver.lint` covers all of lint/).
LAYERS: Layers = (
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
        "quiver.host_ids",
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
RULE_PACKAGE: Layers = (("*",),)  # rule modules side by side (one may use another's check, in no circle)
# Inside each package, bottom first: its modules and subpackages by their name in the package; `*` stands for
# every one the order does not name. A unit may import its own layer (never in a circle) and those below.
ORDER: dict[str, Layers] = {
    "quiver._search": (
        ("_text", "_vocab", "_doc", "_embed_id"),
        ("_intent", "_query", "_rank", "_similar", "_embed", "_vectors", "_fuse"),
        ("_index",),
        ("_lock_vectors", "_scope"),
    ),
    "quiver.advise": (("manifest",), ("model",), ("patch", "shadow")),
    "quiver.capabilities": (("model", "_words"), ("_builtins", "_tool"), ("overrides",), ("flows",)),
    "quiver.commands": (
        ("_group", "_progress", "*"),
        ("_options", "advise", "explain", "ledger_cli"),
        ("budget",),
        ("usage_cli",),
    ),
    "quiver.contract": (
        (
            "taxonomy",
            "formats",
            "folds",
            "hazards",
            "positions",
            "catalog_files",
            "_json_type",
            "_regex_lang",
            "_ruledoc",
        ),
        (
            "_rules_tool",
            "_rules_input",
            "_rules_input_safe",
            "_rules_output",
            "_rules_surface",
            "_rules_gaps",
            "rules",
            "tool_fields",
            "places",
            "git",
            "_wellformed",
        ),
        ("document", "schema", "_change", "_sample", "_keywords", "_candidates", "witness"),
        ("_walker", "_scalars", "_constraints", "_conditions", "_dependencies"),
        ("walk",),
        ("diff", "sides", "history", "moves"),
    ),
    "quiver.findings": (("rule", "catalog", "order", "baseline"), ("select", "severity", "suppress")),
    "quiver.hosts": (
        ("model",),
        ("base", "gateway"),
        ("claude_code", "copilot_cli"),
        ("vscode", "github_coding_agent", "anthropic_api", "openai_api"),
    ),
    "quiver.lint": (("engine", "registry", "fix"), ("support",), ("*",), ("parallel", "run")),
    "quiver.lint.agt": RULE_PACKAGE,
    "quiver.lint.bud": RULE_PACKAGE,
    "quiver.lint.mcp": RULE_PACKAGE,
    "quiver.lint.qvr": RULE_PACKAGE,
    "quiver.lint.skill": RULE_PACKAGE,
    "quiver.lint.route": RULE_PACKAGE,
    "quiver.lint.sec": RULE_PACKAGE,
    "quiver.lint.tool": RULE_PACKAGE,
    "quiver.lint.support": (("*",), ("route_words", "server_values", "text")),
    "quiver.report": (
        ("context", "_markdown", "_summary", "_linehash", "_repo", "_security", "changes", "ruledoc", "lines"),
        (
            "text",
            "json_format",
            "sarif",
            "github",
            "markdown",
            "markdown_diff",
            "html",
            "html_overview",
            "budget",
            "flows",
        ),
        ("render",),
    ),
    "quiver.runtime": (
        ("states",),
        (
            "protocol",
            "ledger",
            "session",
            "usage",
            "_manifest",
            "_diff",
            "_guard",
            "_throttle",
            "_read_stream",
            "_exec_owner",
            "_sqlite_checkpoint",
            "_stdio_calls",
        ),
        (
            "retry",
            "transient",
            "approval",
            "telemetry",
            "telemetry_mcp",
            "_exec_outcome",
            "_exec_policy",
            "input_required",
            "flow_guard",
            "gateway_scope",
            "gateway_index",
            "_sqlite_integrity",
            "ledger_postgres_pool",
            "upstream_stdio",
            "_stdio",
            "_uvicorn_limits",
        ),
        (
            "ledger_sqlite",
            "ledger_doctor",
            "ledger_postgres_schema",
            "ledger_postgres_sql",
            "ledger_postgres",
            "upstream_connection",
            "upstream_spawn",
            "upstream_errors",
            "upstream",
            "reconcile",
            "executor",
            "direct",
        ),
        ("ledger_open", "gateway_results", "gateway_meta", "gateway"),
        ("serve",),
    ),
    "quiver.sources": (("files", "_json", "_toml", "_yaml"), ("*",), ("agents", "imports"), ("skills",)),
}
# Imports under `if TYPE_CHECKING:` that may point up a layer or close a circle, each as (file, imported
# module) with its reason. They run no import, but they tie the modules all the same: none is needed today.
TYPE_ONLY_WAIVERS: dict[tuple[str, str], str] = {}
# Units of one layer that must not import each other either (both directions).
APART = (("quiver.lint", "quiver.contract"), ("quiver.lint", "quiver.runtime"), ("quiver.contract", "quiver.runtime"))
# The one module that imports project modules by name: the lint rule modules the findings catalog lists.
REGISTRY = "quiver/lint/registry.py"


@dataclass(frozen=True, slots=True)
class Import:
    file: str  # as `quiver/lint/registry.py`
    line: int
    source: str  # the importing module
    target: str  # the imported module (a package stands for its __init__.py)
    type_only: bool  # under `if TYPE_CHECKING:`


def _module_of(path: Path, src: Path) -> str:
    parts = path.relative_to(src.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _modules(src: Path) -> dict[str, Path]:
    return {_module_of(path, src): path for path in sorted(src.rglob("*.py"))}


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


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` statement names, relative ones (`from ..x import y`) made absolute."""
    if not node.level:
        return node.module or ""
    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*anchor, node.module] if node.module else anchor)


def _loaded(tree: ast.Module, package: str, modules: Iterable[str]) -> list[tuple[int, str]]:
    """(line, module) for every import of a module of `modules` anywhere in `tree` (in a function too): `from a
    import b` loads `a.b` when that is a module, else `a`; `import a.b.c` loads the deepest module named."""
    known = set(modules)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            while name not in known and "." in name:
                name = name.rpartition(".")[0]
            if name in known:
                out.append((node.lineno, name))
    return out


@functools.cache
def _graph(src: Path = SRC) -> tuple[Import, ...]:
    """Every import between two modules of `src` (the `quiver` folder); a package stands for its __init__.py."""
    modules = _modules(src)
    graph = set()
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_lines = _type_only_lines(tree)
        for line, target in _loaded(tree, package, modules):
            if target != module:
                graph.add(Import(str(path.relative_to(src.parent)), line, module, target, line in typing_lines))
    return tuple(sorted(graph, key=lambda i: (i.file, i.line, i.target)))


def _counted(graph: Iterable[Import], waivers: Mapping[tuple[str, str], str] = TYPE_ONLY_WAIVERS) -> list[Import]:
    """The imports that tie modules together: all but the waived typing-only ones."""
    return [i for i in graph if not (i.type_only and (i.file, i.target) in waivers)]


def _module_edges(graph: Iterable[Import]) -> dict[str, set[str]]:
    """Module -> the modules it imports."""
    edges: dict[str, set[str]] = {}
    for i in graph:
        edges.setdefault(i.source, set()).add(i.target)
    return edges


def circles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more nodes (Tarjan), each sorted: the import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    nodes = sorted({*edges, *(t for targets in edges.values() for t in targets)})

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in nodes:
        if node not in index:
            visit(node)
    return sorted(found)


def _child(package: str, module: str) -> str | None:
    """The unit of `package` that holds `module` (its first name below the package), or None."""
    if not module.startswith(package + "."):
        return None
    return module[len(package) + 1 :].split(".")[0]


def _unit_edges(graph: Iterable[Import], package: str) -> dict[str, dict[str, list[Import]]]:
    """Unit -> unit of `package` -> the imports behind that edge (between two of its units, not its face)."""
    out: dict[str, dict[str, list[Import]]] = {}
    for i in graph:
        a, b = _child(package, i.source), _child(package, i.target)
        if a is not None and b is not None and a != b:
            out.setdefault(a, {}).setdefault(b, []).append(i)
    return out


def _packages(src: Path = SRC) -> list[str]:
    return sorted(m for m, path in _modules(src).items() if path.name == "__init__.py")


def _units(package: str, src: Path = SRC) -> set[str]:
    return {u for m in _modules(src) if (u := _child(package, m)) is not None}


def _layer_of(layers: Layers, units: Iterable[str]) -> dict[str, int]:
    """Unit -> its layer in `layers` (`*`: every unit no layer names)."""
    named = {name: depth for depth, names in enumerate(layers) for name in names if name != "*"}
    rest = next((depth for depth, names in enumerate(layers) if "*" in names), None)
    out = {}
    for unit in units:
        depth = named.get(unit, rest)
        if depth is not None:
            out[unit] = depth
    return out


def upward(graph: Iterable[Import], order: Mapping[str, Layers], src: Path = SRC) -> list[str]:
    """Every import from a unit of a package to a unit written in a higher layer of that package's order."""
    out = []
    for package, layers in order.items():
        layer = _layer_of(layers, _units(package, src))
        for a, targets in _unit_edges(graph, package).items():
            for b, imports in targets.items():
                if a in layer and b in layer and layer[b] > layer[a]:
                    out += [f"{i.file}:{i.line} imports {i.target} ({package}: {a} is below {b})" for i in imports]
    return sorted(out)


def _static_strings(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a string literal (`RUNNER = "mcp.server.runner"`, `A, B = "x", "y"`)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = (
                zip(target.elts, node.value.elts, strict=False)
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                else [(target, node.value)]
            )
            for name, value in pairs:
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out[name.id] = value.value
    return out


def dynamic_imports(src: Path = SRC) -> list[str]:
    """Every `import_module(...)` / `__import__(...)` outside the registry that may load a project module: its
    name is a project one, or not a string this test can read (a literal, or a module-level constant)."""
    out = []
    for path in sorted(src.rglob("*.py")):
        file = str(path.relative_to(src.parent))
        if file == REGISTRY:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _static_strings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called not in ("import_module", "__import__"):
                continue
            arg = node.args[0] if node.args else None
            name = None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                name = arg.value
            elif isinstance(arg, ast.Name):
                name = constants.get(arg.id)
            if name is None or name == "quiver" or name.startswith(("quiver.", ".")):
                out.append(f"{file}:{node.lineno} {called}({ast.unparse(arg) if arg else ''})")
    return out


# --- src/quiver ------------------------------------------------------------------------------------------


def _unit(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _top_edges(graph: Iterable[Import]) -> list[tuple[str, int, str, str]]:
    """(file, line, importing unit, imported unit) for every import between two top-level units."""
    return [(i.file, i.line, _unit(i.source), _unit(i.target)) for i in graph if _unit(i.source) != _unit(i.target)]


def test_every_unit_of_src_quiver_has_a_layer() -> None:
    units = {_unit(m) for m in _modules(SRC)}
    assert sorted(units - {u for layer in LAYERS for u in layer}) == [], "add it to LAYERS and docs/architecture.md"


def test_every_package_has_its_order_and_every_unit_a_layer_in_it() -> None:
    assert sorted(_packages()) == sorted(["quiver", *ORDER]), "write the new package's order in ORDER and the docs"
    for package, layers in ORDER.items():
        units = _units(package)
        named = [n for names in layers for n in names if n != "*"]
        assert sorted(set(named) - units) == [], f"{package}: its order names what is gone"
        assert len(named) == len(set(named)), f"{package}: a unit in two layers"
        assert sorted(units - _layer_of(layers, units).keys()) == [], f"{package}: give the new module a layer"


def test_no_module_imports_a_module_of_a_higher_layer() -> None:
    top = {"quiver": tuple(tuple(u.removeprefix("quiver.") for u in layer) for layer in LAYERS)}
    assert upward(_counted(_graph()), {**top, **ORDER}) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert circles(_module_edges(_counted(_graph()))) == []


@pytest.mark.parametrize("package", ["quiver", *ORDER])
def test_no_units_of_a_package_import_each_other_in_a_circle(package: str) -> None:
    """A circle through folders: `a/x.py` imports `b/y.py` and `b/z.py` imports `a/w.py`."""
    units = _unit_edges(_counted(_graph()), package)
    assert circles({a: set(targets) for a, targets in units.items()}) == []


def test_typing_only_waivers_are_all_still_needed() -> None:
    typing = {(i.file, i.target) for i in _graph() if i.type_only}
    assert sorted(set(TYPE_ONLY_WAIVERS) - typing) == []


@pytest.mark.parametrize(("a", "b"), APART)
def test_sibling_units_that_must_stay_apart_do_not_import_each_other(a: str, b: str) -> None:
    crossing = [f"{file}:{line}" for file, line, unit, target in _top_edges(_graph()) if {unit, target} == {a, b}]
    assert crossing == []


def test_only_the_registry_imports_project_modules_by_name() -> None:
    assert dynamic_imports() == []


def test_docs_architecture_names_every_layer() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for units in LAYERS:
        for unit in units:
            if unit not in ("quiver", "quiver.__main__"):
                assert f"`{unit.removeprefix('quiver.')}" in text, unit


def _docs_order(text: str, package: str) -> list[str]:
    """The layers docs/architecture.md writes for `package`, bottom first: the bullet `- `lint/tool`: a, b < c`
    (or one naming several packages before its colon)."""
    name = f"`{package.removeprefix('quiver.').replace('.', '/')}`"
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if line.startswith("- ") and name in line.partition(": ")[0]), None)
    assert start is not None, f"docs/architecture.md has no bullet for {name}"
    bullet = [lines[start].partition(": ")[2]]
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        bullet.append(line.strip())
    return " ".join(bullet).split(" < ")


@pytest.mark.parametrize("package", sorted(ORDER))
def test_docs_architecture_writes_every_package_order(package: str) -> None:
    written = _docs_order(ARCHITECTURE.read_text(encoding="utf-8"), package)
    layers = ORDER[package]
    assert len(written) == len(layers), f"{package}: {written}"
    for names, part in zip(layers, written, strict=True):
        for name in names:
            assert f"`{name}`" in part, f"{package}: `{name}` in `{part}`"


# --- the checks themselves, on small packages written for them ------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in {"quiver/__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root / "quiver"


def test_the_layer_test_sees_lazy_and_relative_imports() -> None:
    modules = ("quiver.commands", "quiver.commands.compile", "quiver.commands.lint", "quiver.model")
    lazy = "def f() -> None:\n    from quiver.commands.compile import CACHE_FILE\n"
    assert _loaded(ast.parse(lazy), "quiver.lint.bud", modules) == [(2, "quiver.commands.compile")]
    relative = "from ...commands import lint, _group\nimport quiver.model\n"
    assert _loaded(ast.parse(relative), "quiver.lint.bud", modules) == [
        (1, "quiver.commands.lint"),
        (1, "quiver.commands"),
        (2, "quiver.model"),
    ]


def test_the_circle_detector_finds_a_circle_closed_by_a_function_local_import(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "quiver/a.py": "from quiver.b import B\n",
            "quiver/b.py": "B = 1\n\n\ndef late() -> None:\n    from quiver import a\n",
            "quiver/c.py": "from quiver import b\n",
        },
    )
    assert circles(_module_edges(_graph(src))) == [["quiver.a", "quiver.b"]]
    assert circles({"x": {"y"}, "y": {"z"}, "z": set()}) == []


def test_the_circle_detector_counts_typing_only_imports_unless_waived(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "quiver/a.py": "from quiver.b import B\n",
            "quiver/b.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from quiver.a import A\nB = 1\n",
        },
    )
    graph = _graph(src)
    assert [(i.source, i.target, i.type_only) for i in graph] == [
        ("quiver.a", "quiver.b", False),
        ("quiver.b", "quiver.a", True),
    ]
    assert circles(_module_edges(_counted(graph, {}))) == [["quiver.a", "quiver.b"]]
    assert circles(_module_edges(_counted(graph, {("quiver/b.py", "quiver.a"): "a reason"}))) == []


def test_a_function_local_import_up_a_package_order_fails(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "quiver/pkg/__init__.py": "",
            "quiver/pkg/low.py": "def f() -> None:\n    from quiver.pkg.high import H\n",
            "quiver/pkg/high.py": "from quiver.pkg import low\n\nH = 1\n",
            "quiver/pkg/sub/__init__.py": "",
            "quiver/pkg/sub/deep.py": "from quiver.pkg.low import f\n",
        },
    )
    order: dict[str, Layers] = {"quiver.pkg": (("low",), ("high", "*"))}
    assert upward(_graph(src), order, src) == [
        "quiver/pkg/low.py:2 imports quiver.pkg.high (quiver.pkg: low is below high)"
    ]
    assert upward(_graph(src), {"quiver.pkg": (("low", "high"), ("sub",))}, src) == []


def test_import_module_of_a_project_module_is_caught_outside_the_registry(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "quiver/x.py": (
                "import importlib\n"
                "from importlib import import_module\n\n"
                'SDK, OURS = "mcp.server", "quiver.y"\n\n\n'
                "def f(name: str) -> None:\n"
                '    importlib.import_module("numpy")\n'
                "    importlib.import_module(SDK)\n"
                '    importlib.import_module("quiver.y")\n'
                "    import_module(OURS)\n"
                "    importlib.import_module(name)\n"
                '    __import__("quiver.z")\n'
            ),
            "quiver/lint/registry.py": "import importlib\n\n\ndef load(name: str) -> None:\n"
            "    importlib.import_module(name)\n",
        },
    )
    assert dynamic_imports(src) == [
        "quiver/x.py:10 import_module('quiver.y')",
        "quiver/x.py:11 import_module(OURS)",
        "quiver/x.py:12 import_module(name)",
        "quiver/x.py:13 __import__('quiver.z')",
    ]
