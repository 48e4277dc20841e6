"""One-line rendering of a finding, for stderr notes of commands other than lint and diff."""

from __future__ import annotations

from quiver.model import Finding


def finding_line(finding: Finding) -> str:
    where = f"{finding.location}: " if finding.location else ""
    hint = f" ({finding.hint})" if finding.hint else ""
    return f"{where}{finding.severity}[{finding.rule}] {finding.message}{hint}"
