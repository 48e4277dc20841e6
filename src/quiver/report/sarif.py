"""`--format sarif`: one SARIF 2.1.0 log with one run, shaped as GitHub code scanning documents it.

Every rule that appears is described in `tool.driver.rules` (sorted by code; `ruleIndex` points there):
a plain-text `fullDescription`, the whole rule doc as `help.markdown` (and plain `help.text`), tags, and for
security rules the `security` tag and a `security-severity`. No `helpUri` and no `informationUri`: quiver has
no web site, and a link that does not resolve is worse than none (the doc is `quiver rule CODE`, and the
`help` GitHub shows beside each alert). URIs are relative to the repository root under
`%SRCROOT%` (GitHub resolves them from the checkout); run in a subdirectory, `originalUriBaseIds` also
names the project directory as `PROJECTROOT`. Columns count Unicode code points; `endColumn` is exclusive,
as in quiver's own locations. `automationDetails.id` is `quiver/<command>/<project dir>/`, so lint and
diff uploads (and projects) do not replace each other. Fingerprints: `quiverFingerprint/v1` (line
independent) and `primaryLocationLineHash`, computed as GitHub's upload action computes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import quote

from quiver import __version__
from quiver.findings.rule import Rule
from quiver.model import JSON, Finding, Location
from quiver.report._linehash import line_hashes
from quiver.report._repo import repository_prefix
from quiver.report._security import security_severity
from quiver.report.context import ReportContext
from quiver.report.ruledoc import plain_text
from quiver.sources.files import read_bytes

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
PROJECTROOT = "PROJECTROOT"
LINE_HASH_KEY = "primaryLocationLineHash"
MAX_HASHED_BYTES = 5 * 1024 * 1024
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
        "rules": [_descriptor(code, names[code], ctx) for code in codes],
    }
    prefix = repository_prefix(ctx.root)
    hashes = _LineHashes(ctx)
    run: dict[str, JSON] = {
        "tool": {"driver": driver},
        "automationDetails": {"id": f"quiver/{ctx.tool}/{prefix}"},
        "originalUriBaseIds": _base_ids(prefix),
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule], prefix, hashes, ctx.fallback) for f in findings],
        "properties": {"command": ctx.tool},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _descriptor(code: str, name: str, ctx: ReportContext) -> dict[str, JSON]:
    rule = ctx.rules.get(code) or ctx.rules.get(name)
    if rule is None:  # a rule outside the table (should not happen): id and name only
        return {"id": code, "name": name}
    doc = rule.doc.strip()
    properties: dict[str, JSON] = {"tags": _tags(rule, ctx.tool)}
    severity = security_severity(rule.code)
    if severity is not None:
        properties["security-severity"] = severity
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": plain_text(rule.summary)},
        "fullDescription": {"text": plain_text(doc, sections=("What it does", "Why is this bad?"))},
        "help": {"text": plain_text(doc), "markdown": doc},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": properties,
    }


def _tags(rule: Rule, tool: str) -> list[str]:
    """`lint` or `diff`, the code family (`AGT`, `CTR`...), a contract rule's direction, kind and action,
    and `security` for security rules (GitHub shows those as security alerts)."""
    tags = [tool, rule.prefix]
    tags.extend(value for value in (rule.direction, rule.kind, rule.action) if value)
    if security_severity(rule.code) is not None:
        tags.append("security")
    return list(dict.fromkeys(tags))


def _base_ids(prefix: str) -> dict[str, JSON]:
    """`%SRCROOT%` is the repository root (its absolute place is the consumer's checkout, so no `uri`)."""
    ids: dict[str, JSON] = {SRCROOT: {"description": {"text": "The root of the git repository."}}}
    if prefix:
        ids[PROJECTROOT] = {
            "uri": quote(prefix, safe="/"),
            "uriBaseId": SRCROOT,
            "description": {"text": "The quiver project directory (`-C`)."},
        }
    return ids


class _LineHashes:
    """primaryLocationLineHash per (file, line), each project file read and hashed once."""

    def __init__(self, ctx: ReportContext) -> None:
        self._root = ctx.root
        self._files: dict[str, dict[int, str]] = {}

    def get(self, file: str, line: int) -> str | None:
        if file not in self._files:
            path = self._root / file
            try:  # a huge file is left to the upload action, which hashes what it finds itself
                text = read_bytes(path, limit=MAX_HASHED_BYTES).decode("utf-8", "replace")
            except OSError:
                text = None
            self._files[file] = {} if text is None else line_hashes(text)
        return self._files[file].get(line)


def _result(
    finding: Finding, rule_index: int, prefix: str, hashes: _LineHashes, fallback: Location | None
) -> dict[str, JSON]:
    text = finding.message if not finding.hint else f"{finding.message}\nhint: {finding.hint}"
    fingerprints: dict[str, JSON] = {FINGERPRINT_KEY: finding.fingerprint}
    result: dict[str, JSON] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "partialFingerprints": fingerprints,
    }
    loc = finding.location or fallback  # code scanning rejects a result without a location
    if loc is not None:
        result["locations"] = [{"physicalLocation": _physical(loc, prefix)}]
        line_hash = hashes.get(loc.file, loc.line) if loc.line > 0 else None
        if line_hash is not None:
            fingerprints[LINE_HASH_KEY] = line_hash
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


def _physical(loc: Location, prefix: str) -> dict[str, JSON]:
    uri = quote(prefix + loc.file, safe="/")
    physical: dict[str, JSON] = {"artifactLocation": {"uri": uri, "uriBaseId": SRCROOT}}
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
