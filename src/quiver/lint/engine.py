"""The lint engine: run every rule family over a loaded project, then select, override, suppress, baseline."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from quiver.errors import InputError, Position, UsageError
from quiver.model import SEVERITY_ORDER, Finding, Severity
from quiver.project import Project
from quiver.resolve import ResolvedAgent
from quiver.rules import Rule


@dataclass(frozen=True, slots=True)
class LintContext:
    """What a rule family sees: the project as read, and every agent as resolved."""

    project: Project
    resolved: tuple[ResolvedAgent, ...]

    def source(self, rel: str) -> str:
        """A project file's text ('' when unreadable)."""
        try:
            return (self.project.root / rel).read_text(encoding="utf-8-sig").replace("\r\n", "\n")
        except OSError:
            return ""


Check = Callable[[LintContext], Iterable[Finding]]


@dataclass(frozen=True, slots=True)
class Family:
    """A rule family: its rules and the one check that yields their findings."""

    name: str
    rules: tuple[Rule, ...]
    check: Check


def selected_codes(
    rules: Sequence[Rule], select: Sequence[str], ignore: Sequence[str], table: Mapping[str, Rule]
) -> set[str]:
    """Codes chosen by `select` (default: all) minus `ignore`; entries are codes, prefixes or names."""

    def expand(entries: Sequence[str], option: str) -> set[str]:
        out: set[str] = set()
        for entry in entries:
            if entry.upper() == "ALL":
                out.update(r.code for r in rules)
                continue
            if entry in table:
                out.add(table[entry].code)
                continue
            matched = {r.code for r in rules if r.code.startswith(entry.upper())}
            if not matched:
                from quiver.suggest import did_you_mean

                raise UsageError(
                    f"unknown rule or prefix `{entry}` in {option}",
                    hint=did_you_mean(entry, [*table, *{r.prefix for r in rules}], "run `quiver rule --all`"),
                )
            out.update(matched)
        return out

    chosen = expand(select, "select") if select else {r.code for r in rules}
    return chosen - expand(ignore, "ignore")


def apply_severity(
    findings: Iterable[Finding], overrides: Mapping[str, str], table: Mapping[str, Rule]
) -> list[Finding]:
    by_code: dict[str, Severity] = {}
    for key, sev in overrides.items():
        if key not in table:
            raise UsageError(f"unknown rule `{key}` in severity overrides", hint="run `quiver rule --all`")
        by_code[table[key].code] = sev  # type: ignore[assignment]  # validated by config
    return [replace(f, severity=by_code[f.rule]) if f.rule in by_code else f for f in findings]


def at_or_above(findings: Iterable[Finding], level: str) -> list[Finding]:
    if level == "never":
        return []
    floor = SEVERITY_ORDER[level]
    return [f for f in findings if SEVERITY_ORDER[f.severity] >= floor]


def per_file_ignored(finding: Finding, patterns: Mapping[str, Sequence[str]], table: Mapping[str, Rule]) -> bool:
    if finding.location is None:
        return False
    for glob, entries in patterns.items():
        if fnmatch.fnmatch(finding.location.file, glob):
            for entry in entries:
                rule = table.get(entry)
                if (rule and rule.code == finding.rule) or finding.rule.startswith(entry.upper()):
                    return True
    return False


def read_baseline(path: Path) -> set[str]:
    if not path.is_file():
        raise InputError(
            "baseline file not found",
            position=Position(str(path)),
            hint="create it with `quiver lint --baseline FILE --update-baseline`",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(item["fingerprint"]) for item in data["findings"]}
    except (ValueError, KeyError, TypeError):
        raise InputError(
            "not a quiver baseline", position=Position(str(path)), hint="recreate it with --update-baseline"
        ) from None


def render_baseline(findings: Sequence[Finding]) -> str:
    items = sorted(
        (
            {"fingerprint": f.fingerprint, "rule": f.rule, "file": f.location.file if f.location else ""}
            for f in findings
        ),
        key=lambda d: (d["file"], d["rule"], d["fingerprint"]),
    )
    return json.dumps({"baselineVersion": 1, "findings": items}, indent=2, sort_keys=True) + "\n"


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    def key(f: Finding) -> tuple[str, int, int, str, str]:
        loc = f.location
        return (loc.file if loc else "", loc.line if loc else 0, loc.column if loc else 0, f.rule, f.message)

    unique: dict[tuple[str, str, int, int, str], Finding] = {}
    for f in findings:
        loc = f.location
        unique.setdefault(
            (f.rule, loc.file if loc else "", loc.line if loc else 0, loc.column if loc else 0, f.message), f
        )
    return sorted(unique.values(), key=key)
