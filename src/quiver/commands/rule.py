"""`quiver rule ID` / `quiver rule --all`: rule documentation from the registry."""

from __future__ import annotations

import json

from quiver.errors import UsageError
from quiver.lint.registry import rule_table
from quiver.suggest import did_you_mean


def run(rule_id: str | None, *, show_all: bool, fmt: str) -> str:
    table = rule_table()
    rules = sorted({r.code: r for r in table.values()}.values(), key=lambda r: r.code)
    if show_all or rule_id is None:
        if fmt == "json":
            rows = [{"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary,
                     "fixable": r.fixable} for r in rules]
            return json.dumps(rows, indent=2) + "\n"
        width = max(len(r.name) for r in rules)
        return "".join(f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {r.summary}\n" for r in rules)
    rule = table.get(rule_id) or table.get(rule_id.upper())
    if rule is None:
        raise UsageError(f"no rule `{rule_id}`", hint=did_you_mean(rule_id, table, "run `quiver rule --all`"))
    if fmt == "json":
        return json.dumps({"code": rule.code, "name": rule.name, "severity": rule.severity, "doc": rule.doc,
                           "fixable": rule.fixable}, indent=2) + "\n"
    head = f"# {rule.code} {rule.name}\n\nDefault severity: {rule.severity}"
    if rule.fixable:
        head += " (fixable with `quiver lint --fix`)"
    taxonomy = [f"{k}: {getattr(rule, k)}" for k in ("direction", "kind", "action") if getattr(rule, k)]
    if taxonomy:
        head += "\n" + ", ".join(taxonomy)
    return f"{head}\n\n{rule.doc.rstrip()}\n"
