"""One-line rendering of a finding, for stderr notes of commands other than lint and diff, and the one line
that stands for a run's info findings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from quiver.model import Finding


def finding_line(finding: Finding) -> str:
    where = f"{finding.location}: " if finding.location else ""
    hint = f" ({finding.hint})" if finding.hint else ""
    return f"{where}{finding.severity}[{finding.rule}] {finding.message}{hint}"


def stderr_lines(findings: Sequence[Finding]) -> list[str]:
    """What `compile` prints of its findings: each error and warning on its line, then one line for every info
    finding together (a run repeats them all; `quiver lint` is where to read them)."""
    lines = [finding_line(f) for f in findings if f.severity != "info"]
    infos = Counter(f.rule for f in findings if f.severity == "info")
    if infos:
        codes = sorted(infos)
        each = ", ".join(f"{code} x{infos[code]}" for code in codes)
        total = sum(infos.values())
        lines.append(
            f"note: {total} info finding{'s' if total != 1 else ''} ({each}): "
            f"`quiver lint --select {','.join(codes)}` shows them"
        )
    return lines
