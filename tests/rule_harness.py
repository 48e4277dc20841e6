"""The one rule-test harness: every rule of the catalog, lint and contract, through the same demands.

Fixtures: `tests/fixtures/<family>/<CODE>/{bad,good}/` for every catalog code (ruff's per-rule snapshot
tests), `bad/expected.json` the snapshot of what the bad case reports. A lint case is a small project; a
contract case is `case.json`, an old/new pair (`{"kind", "old", "new"}`). `QUIVER_REGEN=1` rewrites every
snapshot (and the lint projects built from a `Spec`); review the diff. tests/findings/test_rules.py is the
one driver; tests/fixtures/README.md says how the cases are built.

Documentation demands, the same for every rule: the `DOC_HEADINGS` first and in order, then any of
`## Witness`, `## Options` in that order, and `## References` last; no section empty.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quiver.commands.diff import diff_sides, text_hazards
from quiver.contract.diff import diff_agent_loads, diff_agent_tools, diff_catalogs, diff_tool
from quiver.contract.rules import CONTRACT_RULES
from quiver.contract.sides import Side
from quiver.contract.witness import is_valid
from quiver.findings.catalog import CATALOG, Entry
from quiver.findings.rule import DOC_HEADINGS, Rule
from quiver.lint.registry import all_rules
from quiver.lint.run import run
from quiver.model import Finding, Location
from quiver.sources.lock import ServerCatalog, render_lock

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
REGEN = os.environ.get("QUIVER_REGEN") == "1"
HEADINGS = (*DOC_HEADINGS, "## Witness", "## Options", "## References")
LINT_FIELDS = ("rule", "severity", "file", "line", "column", "message", "hint")
# The test modules that build lint fixture projects from `Spec`s: each has SPECS, code -> Case (or a
# function of the corpus directory giving the Case).
SPEC_MODULES = ("test_tools", "test_security", "test_budget", "test_routing")
AGENT = ".github/agents/dev.agent.md"

# ---------------------------------------------------------------------------------------------------------
# Rules, families and documentation


def family(entry: Entry) -> str:
    """The fixture folder of a catalog line: `lint` or `contract`, from the module that declares it."""
    return entry.module.split(".")[1]


RULES: Mapping[str, Rule] = {r.code: r for r in (*all_rules(), *CONTRACT_RULES)}
ENTRIES: Mapping[str, Entry] = {e.code: e for e in CATALOG}
CODES = sorted(ENTRIES)
FAMILIES = sorted({family(e) for e in CATALOG})


def case_dir(code: str, side: str) -> Path:
    return FIXTURES / family(ENTRIES[code]) / code / side


def fixture_codes() -> list[str]:
    """Every fixture directory named like a rule code, in every family folder."""
    return sorted(p.name for f in FAMILIES for p in (FIXTURES / f).iterdir() if p.is_dir() and p.name != "cases")


def audit(rule: Rule) -> None:
    """The documentation demands and both fixture cases of one rule."""
    found = [line for line in rule.doc.splitlines() if line.startswith("## ")]
    assert found[: len(DOC_HEADINGS)] == list(DOC_HEADINGS), f"{rule.code}: the required headings, in order"
    assert all(h in HEADINGS for h in found), f"{rule.code}: a heading outside {HEADINGS}"
    assert [HEADINGS.index(h) for h in found] == sorted({HEADINGS.index(h) for h in found}), f"{rule.code}: order"
    assert found[-1] == "## References", f"{rule.code}: no References last"
    for heading in found:
        body = rule.doc.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
        assert body.strip(), f"{rule.code}: empty {heading}"
    assert (case_dir(rule.code, "bad") / "expected.json").is_file(), f"{rule.code}: no bad/expected.json"
    assert case_dir(rule.code, "good").is_dir(), f"{rule.code}: no good/ case"


# ---------------------------------------------------------------------------------------------------------
# Running a case


def contract_findings(case: Mapping[str, Any]) -> list[Finding]:
    """What the contract diff reports for one old/new pair of the given kind."""
    kind = case["kind"]
    if kind == "tool":
        where = Location("quiver.lock", 7, 3)
        return diff_tool(case["old"], case["new"], server="github", location=where, scan=text_hazards)
    if kind == "catalog":
        return diff_catalogs(case["old"], case["new"], server="github")
    if kind == "servers":  # {server: {tool: Tool}} on each side: moves between servers
        return diff_sides(Side("old", case["old"]), Side("new", case["new"]))
    agent = {"agent": "reviewer", "location": Location("agents/r.agent.md", 2, 1)}
    if kind == "agent-loads":
        old = {(server, tool): load for server, tool, load in case["old"]}
        new = {(server, tool): load for server, tool, load in case["new"]}
        return diff_agent_loads(old, new, **agent, reasons={("github", "search_code"): "over the preload budget"})
    return diff_agent_tools(case["old"], case["new"], **agent)


def contract_case(root: Path) -> dict[str, Any]:
    with (root / "case.json").open(encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]  # JSON fixture


def report(code: str, side: str) -> list[dict[str, Any]]:
    """The snapshot of one case: lint, the rule's findings over the project; contract, every finding."""
    root = case_dir(code, side)
    if family(ENTRIES[code]) == "contract":
        return [f.to_json() for f in contract_findings(contract_case(root))]
    return [{k: f.to_json().get(k) for k in LINT_FIELDS} for f in run(root, select=[code]).findings if f.rule == code]


def check_snapshot(code: str, findings: list[dict[str, Any]], path: Path) -> None:
    """`findings` equal the committed snapshot (rewritten first under QUIVER_REGEN=1; a lint snapshot keeps
    the LINT_FIELDS order, a contract one, every field of the finding, sorted)."""
    if REGEN:
        whole = code not in ENTRIES or family(ENTRIES[code]) == "contract"  # a rule code, or a contract case name
        text = json.dumps(findings, indent=2, sort_keys=whole, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")
    assert findings == json.loads(path.read_text(encoding="utf-8")), f"{code}: {path} differs; QUIVER_REGEN=1"


def assert_witnesses_hold(old: Mapping[str, Any], new: Mapping[str, Any], findings: list[Finding]) -> None:
    """Every witness is valid under the accepting schema and invalid under the other."""
    for finding in findings:
        if finding.witness is None:
            continue
        if "arguments" in finding.witness:
            valid, invalid, value = old["inputSchema"], new["inputSchema"], finding.witness["arguments"]
        else:
            valid, invalid, value = new["outputSchema"], old["outputSchema"], finding.witness["result"]
        assert is_valid(valid, value), finding.message
        assert not is_valid(invalid, value), finding.message


# ---------------------------------------------------------------------------------------------------------
# Lint fixture projects written from specs (TOOL, SEC, BUD, ROUTE)


def tool(name: str, description: str | None = None, **fields: Any) -> dict[str, Any]:
    """A clean tool: a real description, a documented parameter, read-only annotations; `fields` override."""
    out: dict[str, Any] = {
        "name": name,
        "description": f"Return the {name.replace('_', ' ')} record for the given identifier."
        if description is None
        else description,
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "description": "Identifier of the record."}},
            "required": ["id"],
        },
        "annotations": {"readOnlyHint": True},
    }
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def agent(tools_field: str = "['srv/*']", description: str = "Works on the project's records.") -> str:
    return f"---\ndescription: {description}\ntools: {tools_field}\n---\nDo the work.\n"


@dataclass(frozen=True)
class Spec:
    """One fixture project."""

    catalogs: Mapping[str, Sequence[Mapping[str, Any]]]
    agents: Mapping[str, str] = field(default_factory=lambda: {AGENT: agent()})
    servers: Mapping[str, Mapping[str, Any]] | None = None  # .mcp.json `mcpServers`; default: one per catalog
    config: str | None = None
    instructions: Mapping[str, str] = field(default_factory=dict)
    edit_lock: Callable[[str], str] | None = None  # for locks render_lock refuses to write (duplicates)

    def files(self) -> dict[str, str]:
        servers = self.servers
        if servers is None:
            servers = {name: {"type": "stdio", "command": name, "tools": ["*"]} for name in self.catalogs}
        out = dict(self.agents)
        out[".mcp.json"] = json.dumps({"mcpServers": servers}, indent=2) + "\n"
        if self.config is not None:
            out["quiver.toml"] = self.config
        return out

    def lock(self) -> str:
        catalogs = (
            ServerCatalog(name, {"name": name, "version": "1.0.0"}, self.instructions.get(name), None, tuple(t))
            for name, t in self.catalogs.items()
        )
        text = render_lock(catalogs)
        return self.edit_lock(text) if self.edit_lock else text


@dataclass(frozen=True)
class Case:
    code: str
    bad: Spec
    good: Spec


def materialize(spec: Spec, root: Path) -> None:
    """Write the spec's project to `root`, replacing what is there except `expected.json` (the snapshot)."""
    expected = root / "expected.json"
    kept = expected.read_bytes() if expected.is_file() else None
    if root.exists():
        shutil.rmtree(root)
    if kept is not None:
        root.mkdir(parents=True)
        expected.write_bytes(kept)
    for rel, text in spec.files().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "quiver.lock.json").write_text(spec.lock(), encoding="utf-8")


def matches_spec(spec: Spec, root: Path) -> bool:
    """The committed files are what the spec writes (the lock compared by its tool definitions)."""
    for rel, text in spec.files().items():
        if (root / rel).read_text(encoding="utf-8") != text:
            return False
    committed = json.loads((root / "quiver.lock.json").read_text(encoding="utf-8"))["servers"]
    wanted = {name: sorted((dict(t) for t in ts), key=lambda t: str(t["name"])) for name, ts in spec.catalogs.items()}
    got = {name: [entry["tool"] for entry in body["tools"]] for name, body in committed.items()}
    if spec.edit_lock is None and got != wanted:
        return False
    return {n: b.get("instructions") for n, b in committed.items()} == {n: spec.instructions.get(n) for n in wanted}


def spec_makers() -> dict[str, Case | Callable[[Path], Case]]:
    """Every lint rule's spec, code -> Case or a function of the corpus directory (the ROUTE cases)."""
    lint = str(TESTS / "lint")
    if lint not in sys.path:
        sys.path.insert(0, lint)
    out: dict[str, Case | Callable[[Path], Case]] = {}
    for name in SPEC_MODULES:
        out.update(importlib.import_module(name).SPECS)
    return out
