"""Scaffold a lint rule: `python scripts/new_rule.py CODE name [--root DIR]`.

Writes `src/quiver/lint/<prefix>/<name>.py` (the doc headings, a `check`, the `Rule` beside it, `RULES`),
`tests/fixtures/lint/<CODE>/{bad,good}/` (an agent file each, and an empty `bad/expected.json`) and the
rule's line in `src/quiver/findings/catalog.py`. The rule harness (tests/findings/test_rules.py) fails until the
check finds something in `bad/`: write the check, make the fixtures show the problem, then regenerate
`bad/expected.json` and docs/rules.md as the printed steps say.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PACKAGES = {
    "AGT": "agt",
    "MCP": "mcp",
    "TOOL": "tool",
    "SEC": "sec",
    "BUD": "bud",
    "ROUTE": "route",
    "QVR": "qvr",
    "SKILL": "skill",
}
CODE = re.compile(r"^(?P<prefix>[A-Z]{3,5})(?P<number>\d{3})$")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CATALOG = "src/quiver/findings/catalog.py"

MODULE = '''"""{code} {name}: TODO one line on what it flags."""

from __future__ import annotations

from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.model import Finding


def check(ctx: LintContext) -> Iterator[Finding]:
{loop}


{constant} = Rule(
    code="{code}",
    name="{name}",
    severity="warning",
    check=check,
    message="{subject}: TODO what is wrong, naming the exact key or tool",
    hint="TODO what to do",
    doc="""\\
## What it does
TODO one or two sentences.

## Why is this bad?
TODO the cost: tokens, misrouting, a broken caller.

## Example
```yaml
TODO the bad input
```
Use instead:
```yaml
TODO the fixed input
```

## Fix
TODO what the hint proposes, and when it is wrong.

## References
TODO
""",
)


RULES: tuple[Rule, ...] = ({constant},)
'''

AGENT = "---\ndescription: TODO an agent that {what}.\n---\nDo the work.\n"
SKILL = "---\nname: example\ndescription: TODO a skill that {what}.\n---\nDo the work.\n"
# What the scaffolded check walks, per prefix: the fixture file it writes, the loop, the message's subject.
AGENT_LOOP = """    for agent in ctx.project.agents:
        if False:  # TODO: the condition this rule flags
            yield {constant}.finding(location=agent.location, agent=agent.id)"""
SKILL_LOOP = """    for skill in ctx.project.skills:
        if False:  # TODO: the condition this rule flags
            yield {constant}.finding(location=skill.location, skill=skill.id)"""
SUBJECTS = {
    "SKILL": (".claude/skills/example/SKILL.md", SKILL, SKILL_LOOP, "skill `{skill}`"),
}
DEFAULT_SUBJECT = (".github/agents/dev.agent.md", AGENT, AGENT_LOOP, "agent `{agent}`")


def _fail(message: str) -> None:
    print(f"new_rule: {message}", file=sys.stderr)
    raise SystemExit(2)


def _catalog_line(text: str, code: str, name: str, module: str) -> str:
    """`text` (catalog.py) with the rule's line inserted in code order, in the table's column layout."""
    head, sep, rest = text.partition('CATALOG: tuple[Entry, ...] = _entries("""\n')
    table, end, tail = rest.partition('""")')
    rows = [line.split() for line in table.strip().splitlines()]
    if any(row[0] == code for row in rows):
        _fail(f"code `{code}` is already in the catalog")
    if any(row[1] == name for row in rows):
        _fail(f"name `{name}` is already in the catalog")
    rows = sorted([*rows, [code, name, module]], key=lambda row: row[0])
    widths = [max(len(row[i]) for row in rows) for i in (0, 1)]
    lines = [f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}" for row in rows]
    return head + sep + "\n".join(lines) + "\n" + end + tail


def scaffold(root: Path, code: str, name: str) -> list[Path]:
    """Write the module, the fixtures and the catalog line; return the files written."""
    match = CODE.match(code)
    if match is None or match.group("prefix") not in PACKAGES:
        _fail(f"`{code}` is not a lint code: one of {', '.join(PACKAGES)} and three digits, e.g. AGT022")
    if not NAME.match(name):
        _fail(f"`{name}` is not a kebab-case name, e.g. `missing-description`")
    package = PACKAGES[match.group("prefix")]
    fixture_file, fixture_text, loop, subject = SUBJECTS.get(match.group("prefix"), DEFAULT_SUBJECT)
    stem = name.replace("-", "_")
    module_path = root / "src" / "quiver" / "lint" / package / f"{stem}.py"
    fixtures = root / "tests" / "fixtures" / "lint" / code
    if module_path.exists() or fixtures.exists():
        _fail(f"{module_path.relative_to(root)} or {fixtures.relative_to(root)} exists already")
    catalog = root / CATALOG
    updated = _catalog_line(catalog.read_text(encoding="utf-8"), code, name, f"quiver.lint.{package}.{stem}")
    constant = stem.upper()
    text = MODULE.format(code=code, name=name, constant=constant, loop=loop.format(constant=constant), subject=subject)
    written: list[Path] = []
    package_init = module_path.parent / "__init__.py"
    if not package_init.exists():  # the first rule of a new prefix
        module_path.parent.mkdir(parents=True, exist_ok=True)
        package_init.write_text(f'"""{match.group("prefix")} rules."""\n', encoding="utf-8")
        written.append(package_init)
    module_path.write_text(text, encoding="utf-8")
    written.append(module_path)
    for kind, what in (("bad", "shows the problem"), ("good", "is fine")):
        example = fixtures / kind / fixture_file
        example.parent.mkdir(parents=True)
        example.write_text(fixture_text.format(what=what), encoding="utf-8")
        written.append(example)
    (fixtures / "bad" / "expected.json").write_text("[]\n", encoding="utf-8")
    written.append(fixtures / "bad" / "expected.json")
    catalog.write_text(updated, encoding="utf-8")
    written.append(catalog)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("code", help="e.g. AGT022")
    parser.add_argument("name", help="kebab-case, e.g. missing-handoff-prompt")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="the repository")
    args = parser.parse_args(argv)
    for path in scaffold(args.root, args.code, args.name):
        print(f"wrote {path.relative_to(args.root)}")
    print(
        "next: write the check and the doc, make bad/ show the problem and good/ not, then\n"
        f"  QUIVER_REGEN=1 python -m pytest tests/findings/test_rules.py -k {args.code}\n"
        "  python -m quiver.commands.rule   # docs/rules.md"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
