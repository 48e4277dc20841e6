"""scripts/new_rule.py scaffolds a lint rule the catalog, the registry and `quiver rule` all see."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "new_rule.py"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "src" / "quiver", root / "src" / "quiver", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _new_rule(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--root", str(root)], capture_output=True, text=True, check=False
    )


def test_a_scaffolded_rule_is_in_the_catalog_the_registry_and_quiver_rule(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    made = _new_rule(root, "AGT099", "scaffolded-example")
    assert made.returncode == 0, made.stderr
    module = root / "src" / "quiver" / "lint" / "agt" / "scaffolded_example.py"
    assert module.is_file()
    assert json.loads((root / "tests/fixtures/lint/AGT099/bad/expected.json").read_text(encoding="utf-8")) == []
    assert (root / "tests/fixtures/lint/AGT099/good/.github/agents/dev.agent.md").is_file()
    probe = (
        "from quiver.lint.registry import all_rules\n"
        "from quiver.findings.catalog import CATALOG, entry\n"
        "codes = [e.code for e in CATALOG]\n"
        "assert codes == sorted(codes)\n"
        "rule = next(r for r in all_rules() if r.code == 'AGT099')\n"
        "print(rule.name, rule.check.__module__, entry('scaffolded-example').module)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout
    module_name = "quiver.lint.agt.scaffolded_example"
    assert out.split() == ["scaffolded-example", module_name, module_name]
    shown = subprocess.run(
        [sys.executable, "-m", "quiver", "rule", "AGT099"], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert shown.startswith("# AGT099 scaffolded-example") and f"Implemented in: {module}" in shown


def test_a_taken_code_or_a_bad_name_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    catalog = (root / "src/quiver/findings/catalog.py").read_text(encoding="utf-8")
    for args in (("AGT001", "another-name"), ("AGT098", "missing-description"), ("XYZ001", "x"), ("AGT097", "Bad")):
        result = _new_rule(root, *args)
        assert result.returncode == 2 and result.stderr.startswith("new_rule: "), args
    assert (root / "src/quiver/findings/catalog.py").read_text(encoding="utf-8") == catalog
    assert not (root / "tests").exists()


def test_a_skill_rule_is_scaffolded_with_a_skill_fixture_and_a_check_over_skills(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    made = _new_rule(root, "SKILL099", "scaffolded-skill-example")
    assert made.returncode == 0, made.stderr
    module = root / "src" / "quiver" / "lint" / "skill" / "scaffolded_skill_example.py"
    text = module.read_text(encoding="utf-8")
    assert "for skill in ctx.project.skills:" in text and 'message="skill `{skill}`: TODO' in text
    fixture = root / "tests/fixtures/lint/SKILL099/good/.claude/skills/example/SKILL.md"
    assert fixture.read_text(encoding="utf-8").startswith("---\nname: example\n")
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    probe = "from quiver.lint.registry import rules_of\nprint(' '.join(r.code for r in rules_of('SKILL')))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout
    assert "SKILL099" in out.split()
