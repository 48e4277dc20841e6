"""Which findings a run keeps: `--select`/`--ignore` by code, prefix or name, and `per-file-ignores`."""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Mapping, Sequence

from quiver.errors import UsageError
from quiver.findings.catalog import CATALOG, ids, resolve_id
from quiver.model import Finding


def _expand(entries: Sequence[str], option: str, among: Collection[str]) -> set[str]:
    out: set[str] = set()
    for entry in entries:
        if entry.upper() == "ALL":
            out.update(among)
            continue
        code = resolve_id(entry)
        if code is not None:
            out.add(code)
            continue
        matched = {c for c in among if c.startswith(entry.upper())}
        if not matched:
            from quiver.suggest import did_you_mean

            choices = [*ids(), *sorted({e.prefix for e in CATALOG})]
            raise UsageError(
                f"unknown rule or prefix `{entry}` in {option}",
                hint=did_you_mean(entry, choices, "run `quiver rule --all`"),
            )
        out.update(matched)
    return out


def selected_codes(among: Collection[str], select: Sequence[str], ignore: Sequence[str]) -> set[str]:
    """Codes of `among` chosen by `select` (default: all) minus `ignore`; entries are codes, prefixes or names."""
    chosen = _expand(select, "select", among) if select else set(among)
    return chosen - _expand(ignore, "ignore", among)


def per_file_ignored(finding: Finding, patterns: Mapping[str, Sequence[str]]) -> bool:
    """Whether a `per-file-ignores` glob matching the finding's file names its rule (code, prefix or name)."""
    if finding.location is None:
        return False
    for glob, entries in patterns.items():
        if fnmatch.fnmatch(finding.location.file, glob):
            for entry in entries:
                if resolve_id(entry) == finding.rule or finding.rule.startswith(entry.upper()):
                    return True
    return False
