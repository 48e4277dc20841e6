from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from quiver.cli import cli
from quiver.commands.rule import README_END, README_START, markdown_table, rule_table
from quiver.findings.rule import DOC_HEADINGS
from quiver.lint.registry import all_rules

RULES_DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_docs_rule_table_is_generated_from_the_registry() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    block = text.split(README_START, 1)[1].split(README_END, 1)[0]
    assert block.strip() == markdown_table().strip(), "run `python -m quiver.commands.rule` and commit docs/rules.md"


def test_every_rule_has_a_unique_code_and_name_and_every_doc_heading_in_order() -> None:
    rules = {r.code: r for r in rule_table().values()}
    names = [r.name for r in rules.values()]
    assert len(names) == len(set(names))
    for rule in rules.values():
        positions = [rule.doc.find(h) for h in DOC_HEADINGS]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), rule.code


def test_lint_rules_are_sorted_and_at_least_forty() -> None:
    codes = [r.code for r in all_rules()]
    assert codes == sorted(codes)
    assert len([c for c in codes if not c.startswith("QVR")]) >= 40


def test_rule_shows_its_doc_by_code_or_name_and_suggests_on_a_typo() -> None:
    runner = CliRunner()
    by_code = runner.invoke(cli, ["rule", "AGT008"])
    by_name = runner.invoke(cli, ["rule", "unknown-tool-reference"])
    assert by_code.exit_code == 0 and by_code.output == by_name.output
    assert by_code.output.startswith("# AGT008 unknown-tool-reference") and "## Why is this bad?" in by_code.output
    contract = runner.invoke(cli, ["rule", "CTR001"])
    assert "direction: tool" in contract.output
    typo = runner.invoke(cli, ["rule", "AGT08"])
    assert typo.exit_code == 2 and "did you mean" in typo.stderr


def test_rule_names_the_file_that_implements_it_for_lint_and_contract_rules() -> None:
    runner = CliRunner()
    for code, module in (("AGT015", "quiver.lint.agt.duplicate_tool_reference"), ("CTR001", "quiver.contract.")):
        result = runner.invoke(cli, ["rule", code])
        line = next(x for x in result.output.splitlines() if x.startswith("Implemented in: "))
        path = Path(line.removeprefix("Implemented in: "))
        assert path.is_file() and f'"{code}"' in path.read_text(encoding="utf-8")
        assert ".".join(path.with_suffix("").parts[-len(module.split(".")) :]).startswith(module.rstrip("."))
