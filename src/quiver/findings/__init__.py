"""The findings layer, under lint and contract (which import it; it imports neither).

`Rule` (rule.py) declares a rule: code, name, default severity, message, hint, doc, fix safety and the check
it runs. `Finding` and `Edit` are model dataclasses, re-exported here. `catalog.py` lists every code once;
`select.py` chooses rules by code, prefix or name; `severity.py` applies overrides and `--fail-on`;
`suppress.py` reads inline suppressions; `baseline.py` hides findings a baseline records (fingerprints);
`order.py` sorts and deduplicates.
"""

from __future__ import annotations

from quiver.findings.rule import DOC_HEADINGS, Check, FixSafety, Rule, index_rules
from quiver.model import Edit, Finding, Location, Severity

__all__ = ["DOC_HEADINGS", "Check", "Edit", "Finding", "FixSafety", "Location", "Rule", "Severity", "index_rules"]
