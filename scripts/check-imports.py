#!/usr/bin/env python3
"""Every package src/quiver imports is declared in pyproject.toml, and every declared package is used.

    python scripts/check-imports.py          exit 1 and one line per problem; silent when all is well

Reads every `import x` / `from x import y` (at any depth, under TYPE_CHECKING too) and every
`importlib.import_module("x")` with a literal name in src/quiver, keeps the top-level names that are
neither the standard library nor quiver, and maps each module imported to the distribution whose
installed files hold it in this environment (so run it where `.[test]` is installed; a namespace package
such as `opentelemetry` is told apart by the module: `opentelemetry.sdk` is opentelemetry-sdk's). Each
distribution must be in `[project].dependencies` or in an extra other than `test`, by its normalized
name. A declared distribution that nothing imports must be listed in NOT_IMPORTED with the reason.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import tomllib
from importlib.metadata import distributions
from importlib.util import find_spec
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "quiver"
NOT_IMPORTED = {
    "httptools": "uvicorn's HTTP/1.1 parser, picked by uvicorn when installed (serve --http)",
    "psycopg-binary": "psycopg's C implementation, loaded by psycopg",
}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules() -> dict[str, list[str]]:
    """Module name (as imported) -> the files (relative to the repository) that import it."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]  # a name may be a submodule
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names = [node.args[0].value]
            for name in names:
                top = name.split(".")[0]
                if top != "quiver" and top not in sys.stdlib_module_names:
                    found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def declared() -> dict[str, str]:
    """Normalized distribution name -> where pyproject.toml declares it (`dependencies` or the extra)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"dependencies": project["dependencies"]}
    groups.update({k: v for k, v in project["optional-dependencies"].items() if k != "test"})
    out: dict[str, str] = {}
    for group, requirements in groups.items():
        for requirement in requirements:
            match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
            assert match, requirement
            name = normalize(match.group(0))
            if name != normalize(project["name"]):
                out.setdefault(name, group)
                if name == "psycopg" and "[binary]" in requirement:
                    out.setdefault("psycopg-binary", group)
    return out


def owners() -> dict[str, str]:
    """Each installed .py/extension file -> the normalized name of the distribution that installed it."""
    out: dict[str, str] = {}
    for dist in distributions():
        name = normalize(dist.metadata["Name"])
        base = os.path.realpath(str(dist.locate_file("")))
        for file in dist.files or ():
            if file.suffix in (".py", ".so", ".pyd"):
                out[os.path.normpath(os.path.join(base, str(file)))] = name
    return out


def provider(module: str, files: dict[str, str]) -> str | None:
    """The distribution providing `module`, or the nearest parent module that is a file (not a namespace)."""
    parts = module.split(".")
    while parts:
        try:
            spec = find_spec(".".join(parts))
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin and spec.origin not in ("built-in", "frozen"):
            return files.get(os.path.realpath(spec.origin))
        parts.pop()
    return None


def problems() -> list[str]:
    files = owners()
    have = declared()
    out: list[str] = []
    undeclared: dict[str, tuple[str, str]] = {}  # distribution -> (first importing file, module)
    used = set()
    for module, where in sorted(imported_modules().items()):
        dist = provider(module, files)
        if dist is None:
            out.append(f"{where[0]}: imports `{module}`, which no installed distribution provides")
            continue
        used.add(dist)
        if dist not in have:
            undeclared.setdefault(dist, (where[0], module))
    for dist, (where, module) in sorted(undeclared.items()):
        out.append(f"{where}: imports `{module}` from {dist}, which pyproject.toml does not declare")
    for name, group in sorted(have.items()):
        if name not in used and name not in NOT_IMPORTED:
            out.append(f"pyproject.toml: `{name}` ({group}) is declared but src/quiver never imports it")
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
