"""`--format sarif`: one SARIF 2.1.0 log with one run, for GitHub code scanning and other SARIF viewers.

Every rule that appears is described in `tool.driver.rules` (sorted by code; `ruleIndex` points there).
Locations are project-relative URIs under `%SRCROOT%`; columns count Unicode code points, and `endColumn`
is exclusive, as in quiver's own locations. `partialFingerprints["quiverFingerprint/v1"]` is the finding's
line-independent fingerprint, so alerts survive edits above them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import quote

from quiver import __version__
from quiver.findings.rule import Rule
from quiver.model import JSON, Finding, Location
from quiver.report.render import ReportContext

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/agent-quiver/"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "quiverFingerprint/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    return json.dumps(sarif_log(findings, ctx), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def sarif_log(findings: Sequence[Finding], ctx: ReportContext) -> dict[str, JSON]:
    """The SARIF log as a JSON value."""
    codes = sorted({f.rule for f in findings})
    index = {code: i for i, code in enumerate(codes)}
    names = {f.rule: f.name for f in findings}
    driver: dict[str, JSON] = {
        "name": "quiver",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": INFORMATION_URI,
        "rules": [_descriptor(code, names[code], ctx) for code in codes],
    }
    run: dict[str, JSON] = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule]) for f in findings],
        "properties": {"command": ctx.tool},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _descriptor(code: str, name: str, ctx: ReportContext) -> dict[str, JSON]:
    rule = ctx.rules.get(code) or ctx.rules.get(name)
    if rule is None:  # a rule outside the table (should not happen): id and name only
        return {"id": code, "name": name}
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc.strip(), "markdown": rule.doc.strip()},
        "help": {"text": rule.doc.strip(), "markdown": rule.doc.strip()},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": _tags(rule, ctx.tool)},
    }


def _tags(rule: Rule, tool: str) -> list[str]:
    """`lint` or `diff`, the code family (`AGT`, `CTR`...), then a contract rule's direction, kind and action."""
    tags = [tool, rule.prefix]
    tags.extend(value for value in (rule.direction, rule.kind, rule.action) if value)
    return list(dict.fromkeys(tags))


def _result(finding: Finding, rule_index: int) -> dict[str, JSON]:
    text = finding.message if not finding.hint else f"{finding.message}\nhint: {finding.hint}"
    result: dict[str, JSON] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
    }
    if finding.location is not None:
        result["locations"] = [{"physicalLocation": _physical(finding.location)}]
    properties = {
        key: value
        for key, value in (
            ("server", finding.server),
            ("tool", finding.tool),
            ("agent", finding.agent),
            ("witness", finding.witness),
        )
        if value is not None
    }
    if properties:
        result["properties"] = properties
    return result


def _physical(loc: Location) -> dict[str, JSON]:
    physical: dict[str, JSON] = {"artifactLocation": {"uri": quote(loc.file, safe="/"), "uriBaseId": SRCROOT}}
    if loc.line > 0:
        region: dict[str, JSON] = {"startLine": loc.line}
        if loc.column > 0:
            region["startColumn"] = loc.column
        if loc.end_line >= loc.line:
            region["endLine"] = loc.end_line
            if loc.end_column > 0:
                region["endColumn"] = loc.end_column
        physical["region"] = region
    return physical
