"""The catalog (quiver/findings/catalog.py) against the rules the modules declare: one hop from a code to its file."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import quiver.lint
from quiver.commands.rule import rule_table
from quiver.contract.rules import CONTRACT_RULES, RULE_MODULES
from quiver.findings.catalog import CATALOG, entry, resolve_id
from quiver.findings.rule import Rule
from quiver.lint.registry import all_rules

LINT_ROOT = Path(quiver.lint.__file__).parent
PACKAGE_OF = {
    "AGT": "agt",
    "MCP": "mcp",
    "TOOL": "tool",
    "SEC": "sec",
    "BUD": "bud",
    "ROUTE": "route",
    "QVR": "qvr",
    "SKILL": "skill",
}
# Rules whose check sits in a sibling module of the same small group, with the reason.
SHARED_CHECKS = {
    "TOOL015": "quiver.lint.tool.schema",  # one cached schema pass per tool runs TOOL006-009 and TOOL015-017
    "TOOL016": "quiver.lint.tool.schema",
    "TOOL017": "quiver.lint.tool.schema",
}
NO_CHECK = {"QVR001"}  # raised by lint/run.py once suppressions are applied


def _declared(module_name: str) -> dict[str, Rule]:
    """The rules a module declares itself: lint modules by `NAME = Rule(...)` statements (not imports);
    contract modules build theirs with factories, so by the Rule values they hold."""
    module = importlib.import_module(module_name)
    if not module_name.startswith("quiver.lint."):
        return {v.code: v for v in vars(module).values() if isinstance(v, Rule)}
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    names = [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name) and node.value.func.id == "Rule"
        for target in node.targets
        if isinstance(target, ast.Name)
    ]  # fmt: skip
    return {rule.code: rule for rule in (getattr(module, n) for n in names)}


def _lint_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages([str(LINT_ROOT)], "quiver.lint.") if not m.ispkg)


def test_catalog_is_sorted_with_unique_codes_and_names() -> None:
    codes = [e.code for e in CATALOG]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert len({e.name for e in CATALOG}) == len(CATALOG)


def test_every_catalog_line_names_the_module_that_declares_that_rule() -> None:
    for line in CATALOG:
        declared = _declared(line.module)
        assert line.code in declared, f"{line.code}: not declared in {line.module}"
        assert declared[line.code].name == line.name, line.code


def test_every_rule_of_the_registries_has_a_catalog_line() -> None:
    registered = {r.code for r in (*all_rules(), *CONTRACT_RULES)}
    assert registered == {e.code for e in CATALOG}
    assert {r.code for r in rule_table().values()} == registered


def test_no_underscore_module_of_lint_holds_a_rule_and_every_rule_module_is_in_the_catalog() -> None:
    in_catalog = {e.module for e in CATALOG}
    for name in _lint_modules():
        rules = _declared(name)
        private = any(part.startswith("_") for part in name.split("."))
        if rules:
            assert not private, f"{name}: an underscore module holds rules"
            assert name in in_catalog, f"{name}: declares rules the catalog does not list"
            assert name.split(".")[2] != "support", f"{name}: support/ holds no rules"


def test_a_lint_code_names_its_package_and_each_module_lists_its_rules() -> None:
    for line in CATALOG:
        if not line.module.startswith("quiver.lint."):
            continue
        assert line.module.split(".")[2] == PACKAGE_OF[line.prefix], line.code
        module = importlib.import_module(line.module)
        assert {r.code for r in module.RULES} == set(_declared(line.module)), line.module


def test_the_contract_registry_is_the_modules_the_catalog_names_and_each_lists_its_rules() -> None:
    named = {e.module for e in CATALOG if e.module.startswith("quiver.contract.")}
    assert {m.__name__ for m in RULE_MODULES} == named
    for module in RULE_MODULES:
        codes = [r.code for r in module.RULES]
        assert codes == sorted(codes) and set(codes) == set(_declared(module.__name__)), module.__name__
        assert {e.code for e in CATALOG if e.module == module.__name__} == set(codes), module.__name__


def test_every_lint_rule_is_declared_beside_the_check_it_runs() -> None:
    for rule in all_rules():
        line = entry(rule.code)
        assert line is not None
        if rule.code in NO_CHECK:
            assert rule.check is None
            continue
        assert rule.check is not None, rule.code
        assert rule.check.__module__ == SHARED_CHECKS.get(rule.code, line.module), rule.code


def test_ids_resolve_by_code_and_by_name_only() -> None:
    assert resolve_id("AGT015") == "AGT015"
    assert resolve_id("duplicate-tool-reference") == "AGT015"
    assert resolve_id("AGT") is None and resolve_id("agt015") is None
    found = entry("agt015")
    assert found is not None and found.module == "quiver.lint.agt.duplicate_tool_reference"
