"""Contract diff: compare two versions of a tool, or two catalogs, and return findings.

`inputSchema` is contravariant (breaking iff an argument valid under the old schema is invalid under the new),
`outputSchema` covariant (breaking iff a result valid under the new is invalid under the old). Each breaking
schema finding carries a witness confirmed with jsonschema; without one it is a warning that says so.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from quiver.contract import _rules_gaps as gap_rules
from quiver.contract import _rules_surface as surface_rules
from quiver.contract import _rules_tool as tool_rules
from quiver.contract._change import Change, pointer
from quiver.contract.catalog_files import UNREADABLE  # set by a side reader on a tool it could not read
from quiver.contract.document import Document
from quiver.contract.folds import match_folds
from quiver.contract.hazards import KINDS, TextScan, introduced
from quiver.contract.places import Locator
from quiver.contract.positions import Pointer
from quiver.contract.rules import rule_for
from quiver.contract.taxonomy import WIDER, UnknownCell
from quiver.contract.tool_fields import field_changes, header_changes
from quiver.contract.walk import Walker
from quiver.contract.witness import Checker, build_witness
from quiver.errors import InputError
from quiver.findings.rule import Rule
from quiver.model import JSON, SEVERITY_ORDER, Finding, Location, canonical_json

RENAME_THRESHOLD = 0.8
UNCONFIRMED = " (witness could not be confirmed)"
DEFAULT_INPUT_SCHEMA: JSON = {"type": "object"}

Direction = Literal["input", "output"]


@dataclass(frozen=True, slots=True)
class _Where:
    """The server, tool and location every finding of one tool shares; `locate` places a finding at the part
    of the tool it is about (a JSON pointer in the Tool object), when the side knows its file."""

    server: str
    tool: str
    location: Location | None
    locate: Locator | None = None

    def finding(self, rule: Rule, *, pointer: Pointer = ("name",), **values: JSON) -> Finding:  # JSON: format values
        location = self.location
        if self.locate is not None:
            location = self.locate(pointer) or location
        return tool_finding(rule, self.server, self.tool, location, **values)


def qualified(server: str | None, tool: str) -> str:
    """`server/tool` as messages name a tool; `tool` alone when the server has no name."""
    return f"{server}/{tool}" if server else tool


def tool_finding(rule: Rule, server: str | None, tool: str, location: Location | None, **values: JSON) -> Finding:
    """A finding on one tool of a server; an unnamed server ("") is no server."""
    return rule.finding(
        location=location, server=server or None, tool=tool, qualified=qualified(server, tool), **values
    )


def diff_tool(
    old: Mapping[str, JSON],
    new: Mapping[str, JSON],
    *,
    server: str,
    location: Location | None = None,
    scan: TextScan | None = None,
    locate: Locator | None = None,
) -> list[Finding]:
    """Findings for one tool's two MCP Tool objects (same tool, two versions), sorted (`locate`: see `_Where`).

    A tool that cannot be read or compared gets one CTR080 finding with the reason, never an exception; one
    whose old side could not be read and whose new side can, one CTR091 (a repair). `scan` finds hostile text
    (lint's detectors: see `hazards.py`); without it changed texts are not scanned."""
    at = _Where(server, str(new.get("name") or old.get("name") or ""), location, locate)
    new_docs = _documents(new, "new")
    if isinstance(new_docs, str):
        return [at.finding(gap_rules.TOOL_SCHEMA_UNREADABLE, reason=new_docs)]
    old_docs = _documents(old, "old")
    if isinstance(old_docs, str):  # a repair: nothing an old caller relied on can be compared
        return [at.finding(surface_rules.TOOL_SCHEMA_REPAIRED, reason=old_docs)]
    try:
        return _diff_tool(old, new, old_docs, new_docs, at, scan)
    except InputError as error:
        return [at.finding(gap_rules.TOOL_SCHEMA_UNREADABLE, reason=error.message)]
    except RecursionError:
        reason = "the schema is nested too deeply for the comparison"
        return [at.finding(gap_rules.TOOL_SCHEMA_UNREADABLE, reason=reason)]


Documents = tuple[Document, Document | None]  # inputSchema, outputSchema (None: the tool declares none)


def _documents(tool: Mapping[str, JSON], side: str) -> Documents | str:
    """One side's schemas, read; or why they cannot be (`new `inputSchema`: ...`)."""
    if UNREADABLE in tool:
        return f"the {side} definition {tool[UNREADABLE]}"
    try:
        inputs = _load(tool.get("inputSchema", DEFAULT_INPUT_SCHEMA), f"{side} `inputSchema`")
        outputs = _load(tool["outputSchema"], f"{side} `outputSchema`") if "outputSchema" in tool else None
    except InputError as error:
        return error.message
    except RecursionError:
        return f"the {side} schema is nested too deeply for the comparison"
    return inputs, outputs


def _diff_tool(
    old: Mapping[str, JSON],
    new: Mapping[str, JSON],
    old_docs: Documents,
    new_docs: Documents,
    at: _Where,
    scan: TextScan | None,
) -> list[Finding]:
    findings: list[Finding] = []
    if _words(old.get("description")) != _words(new.get("description")):
        findings.append(at.finding(tool_rules.TOOL_DESCRIPTION_CHANGED, pointer=("description",)))
    if scan is not None:
        for path, kind, phrase in introduced(old, new, scan):
            label, code = KINDS[kind]
            rule = surface_rules.TEXT_HAZARD_ADDED
            shown = ".".join(path)
            findings.append(at.finding(rule, pointer=path, path=shown, value=label, new=phrase, keyword=code))
    findings += [at.finding(rule, pointer=where, **values) for rule, values, where in field_changes(old, new)]
    findings += _annotations(old.get("annotations"), new.get("annotations"), at)
    findings += _compare("input", old_docs[0], new_docs[0], at)
    headers = header_changes(old_docs[0].root, new_docs[0].root)
    findings += [at.finding(rule, pointer=where, **values) for rule, values, where in headers]
    if old_docs[1] is not None and new_docs[1] is None:
        findings.append(at.finding(tool_rules.OUTPUT_SCHEMA_REMOVED, pointer=()))
    elif new_docs[1] is not None and old_docs[1] is None:
        findings.append(at.finding(tool_rules.OUTPUT_SCHEMA_ADDED, pointer=("outputSchema",)))
    elif old_docs[1] is not None and new_docs[1] is not None:
        findings += _compare("output", old_docs[1], new_docs[1], at)
    return sort_findings(findings)


def diff_catalogs(
    old: Mapping[str, Mapping[str, JSON]],
    new: Mapping[str, Mapping[str, JSON]],
    *,
    server: str,
    locations: Mapping[str, Location] | None = None,
    scan: TextScan | None = None,
    locators: Mapping[str, Locator] | None = None,
) -> list[Finding]:
    """Findings for two {tool name: Tool object} maps: removed, renamed and added tools, then each common tool.
    `locations` and `locators` are per tool name: the new side's, the old side's for a removed tool."""
    where, places = locations or {}, locators or {}
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    renames = match_renames({n: old[n] for n in removed}, {n: new[n] for n in added})
    renamed_to = set(renames.values())
    left = {n: old[n] for n in removed if n not in renames}
    folds = match_folds(left, new, set(added) - renamed_to, normalise=normalise_name)
    findings: list[Finding] = []
    for name in removed:
        at = _Where(server, name, where.get(name), places.get(name))
        if name in folds:
            target, how = folds[name]
            findings.append(at.finding(surface_rules.TOOL_FOLDED, new_name=target, accepts=how))
            continue
        if name not in renames:
            findings.append(at.finding(tool_rules.TOOL_REMOVED))
            continue
        target = renames[name]
        compared = diff_tool(
            old[name], new[target], server=server, location=where.get(target), scan=scan, locate=places.get(target)
        )
        findings += compared
        findings.append(at.finding(tool_rules.TOOL_RENAMED, new_name=target, accepts=_alias_must_accept(compared)))
    for name in added:
        if name not in renamed_to:
            findings.append(_Where(server, name, where.get(name), places.get(name)).finding(tool_rules.TOOL_ADDED))
    for name in sorted(set(old) & set(new)):
        if old[name] != new[name]:  # an unchanged tool has nothing to report: skip the schema walk
            findings += diff_tool(
                old[name], new[name], server=server, location=where.get(name), scan=scan, locate=places.get(name)
            )
    return sort_findings(findings)


def diff_moved(
    old: Mapping[str, JSON],
    new: Mapping[str, JSON],
    *,
    source: tuple[str, str],
    target: tuple[str, str],
    location: Location | None = None,
    scan: TextScan | None = None,
    locate: Locator | None = None,
) -> list[Finding]:
    """A tool that moved from server/tool `source` to `target`: one CTR092 naming both addresses, plus the
    findings of its two definitions, reported at the new address (as a rename's are)."""
    compared = diff_tool(old, new, server=target[0], location=location, scan=scan, locate=locate)
    moved = _Where(source[0], source[1], location, locate).finding(
        surface_rules.TOOL_MOVED, new_name=qualified(*target), accepts=_alias_must_accept(compared)
    )
    return sort_findings([moved, *compared])


def diff_agent_tools(
    old: Collection[str],
    new: Collection[str],
    *,
    agent: str,
    location: Location | None = None,
    wildcard: Collection[str] = (),
) -> list[Finding]:
    """One warning per `server/tool` the agent could use before and cannot use now; info for a tool in
    `wildcard` (reached only through `*` or an unset `tools`: the agent never chose it or its server)."""
    out = []
    for name in sorted(set(old) - set(new)):
        server, tool = name.split("/", 1) if "/" in name else ("", name)
        out.append(
            tool_rules.AGENT_TOOL_LOST.finding(
                location=location,
                severity="info" if name in wildcard else None,
                agent=agent,
                server=server or None,
                tool=tool,
                qualified=qualified(server, tool),
            )
        )
    return out


def diff_agent_loads(
    old: Mapping[tuple[str, str], str],
    new: Mapping[tuple[str, str], str],
    *,
    agent: str,
    location: Location | None = None,
    reasons: Mapping[tuple[str, str], str] | None = None,
) -> list[Finding]:
    """One info finding per (server, tool) of an agent whose loading ("preloaded"/"deferred") changed."""
    return [
        tool_rules.AGENT_TOOL_LOAD_CHANGED.finding(
            location=location,
            agent=agent,
            server=server,
            tool=name,
            qualified=qualified(server, name),
            before=old[(server, name)],
            after=load,
            reason=(reasons or {}).get((server, name), "no reason recorded"),
        )
        for (server, name), load in sorted(new.items())
        if (server, name) in old and old[(server, name)] != load
    ]


def match_renames(removed: Mapping[str, Mapping[str, JSON]], added: Mapping[str, Mapping[str, JSON]]) -> dict[str, str]:
    """Pair removed with added tools: the same normalised name (case, `-`, `_`, `.`, camelCase) first, then
    near-identical ones (best pairs first); {old name: new name}."""
    pairs: dict[str, str] = {}
    by_norm: dict[str, list[str]] = {}
    for name in added:
        by_norm.setdefault(normalise_name(name), []).append(name)
    for name in removed:
        same = by_norm.get(normalise_name(name), [])
        if len(same) == 1 and same[0] not in pairs.values():
            pairs[name] = same[0]
    removed = {n: t for n, t in removed.items() if n not in pairs}
    added = {n: t for n, t in added.items() if n not in pairs.values()}
    scored = sorted(
        (
            (similarity(old, new), old_name, new_name)
            for old_name, old in removed.items()
            for new_name, new in added.items()
        ),
        key=lambda item: (-item[0], item[1], item[2]),
    )
    for score, old_name, new_name in scored:
        if score < RENAME_THRESHOLD:
            break
        if old_name not in pairs and new_name not in pairs.values():
            pairs[old_name] = new_name
    return pairs


def similarity(old: Mapping[str, JSON], new: Mapping[str, JSON]) -> float:
    """0..1: name 0.2, description 0.4 and input schema 0.4 (difflib ratios). A tool with the same
    non-trivial input schema scores at least half its name ratio plus 0.5 (a reworded description does not
    hide a rename)."""

    def ratio(a: str, b: str) -> float:
        return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()

    old_schema, new_schema = canonical_json(old.get("inputSchema")), canonical_json(new.get("inputSchema"))
    names = ratio(normalise_name(str(old.get("name", ""))), normalise_name(str(new.get("name", ""))))
    score = (
        0.2 * names
        + 0.4 * ratio(_words(old.get("description")), _words(new.get("description")))
        + 0.4 * ratio(old_schema, new_schema)
    )
    schema = old.get("inputSchema")
    if old_schema == new_schema and isinstance(schema, dict) and schema.get("properties"):
        score = max(score, 0.5 * names + 0.5)
    return score


def normalise_name(name: str) -> str:
    """`getTinyImage`, `get-tiny-image`, `get.tiny_image` -> `get_tiny_image`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"[-_.\s]+", "_", spaced).lower().strip("_")


def _alias_must_accept(findings: Iterable[Finding]) -> str:
    """What an alias of the old name must keep accepting: the old arguments, and each break the new schema made."""
    breaks = [f.message.split(": ", 1)[-1] for f in findings if f.severity != "info" and f.rule != "CTR004"]
    if not breaks:
        return "the old arguments (the schema is compatible)"
    return "the old arguments, which the new schema rejects: " + "; ".join(breaks)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Deduplicated; ordered by tool, then most severe, then rule code and message."""
    unique = {(f.rule, f.server, f.tool, f.agent, f.message): f for f in findings}
    return sorted(
        unique.values(),
        key=lambda f: (f.server or "", f.tool or "", f.agent or "", -SEVERITY_ORDER[f.severity], f.rule, f.message),
    )


def _compare(direction: Direction, old: Document, new: Document, at: _Where) -> list[Finding]:
    root = "(arguments)" if direction == "input" else "(result)"
    # breaking run: the side that must accept first; the other run finds changes the other way round
    accepting, rejecting = (old, new) if direction == "input" else (new, old)
    findings: list[Finding] = []
    checker = Checker(accepting.root, rejecting.root)
    runs = [
        (breaking, b is new, Walker(a, b, root=root, witnesses=breaking, declarations=a is old).run())
        for breaking, a, b in ((True, accepting, rejecting), (False, rejecting, accepting))
    ]
    if direction == "input":
        findings += _case_changes(runs[0][2], runs[1][2], checker, accepting, at)
    for breaking, b_is_new, changes in runs:
        for change in changes:
            finding = _finding(direction, change, breaking=breaking, b_is_new=b_is_new, at=at)
            if finding is None:
                continue
            if breaking and "declaration" not in change.flags and finding.severity != "info":
                finding = _with_witness(finding, change, checker, accepting, direction)
                if finding.witness is None and "speculative" in change.flags:
                    continue  # a candidate change (overlapping branches) that no value confirms: none
            findings.append(finding)
    return findings


def _case_changes(
    narrowing: list[Change], widening: list[Change], checker: Checker, accepting: Document, at: _Where
) -> list[Finding]:
    """Input enum values removed and added at one path that differ only in case (`high`, `HIGH`): one CTR103
    finding for the path, with the first removal's witness; the joined changes leave both lists."""
    pairs: dict[str, list[tuple[Change, Change]]] = {}
    for removed in [c for c in narrowing if (c.kind, c.action) == ("enum", "value-removed")]:
        old_value = removed.values.get("value", "")
        added = next(
            (
                c
                for c in widening
                if (c.kind, c.action) == ("enum", "value-removed")
                and c.values.get("path") == removed.values.get("path")
                and c.values.get("value", "") != old_value
                and c.values.get("value", "").casefold() == old_value.casefold()
            ),
            None,
        )
        if added is not None:
            narrowing.remove(removed)
            widening.remove(added)
            pairs.setdefault(removed.values.get("path", ""), []).append((removed, added))
    out: list[Finding] = []
    for path, joined in pairs.items():
        old = ", ".join(removed.values["value"] for removed, _ in joined)
        new = ", ".join(added.values["value"] for _, added in joined)
        where = pointer(joined[0][0], "inputSchema")
        finding = at.finding(surface_rules.ENUM_CASE_CHANGED, pointer=where, path=path, old=old, new=new)
        out.append(_with_witness(finding, joined[0][0], checker, accepting, "input"))
    return out


def _finding(direction: Direction, change: Change, *, breaking: bool, b_is_new: bool, at: _Where) -> Finding | None:
    kind, action = change.kind, change.action
    if "declaration" in change.flags:
        if kind == "property" and action == "unlisted":
            skip = "b-closed" in change.flags if direction == "input" else "a-required" in change.flags
            action = "unlisted" if direction == "input" else "removed"
        else:  # a new input property that is required is reported as input-required-property-added
            skip = "b-required" in change.flags and direction == "input"
        if skip:
            return None
    elif kind == "property" and not (direction == "input" and breaking):
        return None  # property additions and output removals are declarations, reported above
    elif action == "changed" and not breaking:
        return None  # a changed const/pattern/format is reported once, with a witness, by the breaking run
    elif not b_is_new:
        wider = WIDER.get((kind, action))
        if wider is None:
            raise UnknownCell(f"contract change {kind}/{action} has no widening counterpart")
        action = wider
    rule = rule_for(direction, kind, action)
    if rule is None:
        return None  # a waived cell: see taxonomy.WAIVERS
    values = dict(change.values)
    a_text, b_text = values.pop("a", ""), values.pop("b", "")
    old_text, new_text = (a_text, b_text) if b_is_new else (b_text, a_text)
    template = {"value": "", "keyword": "", "was": "", "prop": "", "reason": "", **values}
    template.update(old=old_text, new=new_text)
    return at.finding(rule, pointer=pointer(change, f"{direction}Schema"), **template)


def _with_witness(
    finding: Finding, change: Change, checker: Checker, accepting: Document, direction: Direction
) -> Finding:
    witness = build_witness(change, checker, accepting)
    if witness is None:
        return replace(finding, severity="warning", message=finding.message + UNCONFIRMED)
    return replace(finding, witness={"arguments" if direction == "input" else "result": witness})


def _annotations(old_raw: JSON, new_raw: JSON, at: _Where) -> list[Finding]:
    old = old_raw if isinstance(old_raw, dict) else {}
    new = new_raw if isinstance(new_raw, dict) else {}
    findings: list[Finding] = []

    def shown(ann: Mapping[str, JSON], key: str, default: bool) -> str:
        return canonical_json(ann[key]) if key in ann else f"absent (default {str(default).lower()})"

    old_ro, new_ro = old.get("readOnlyHint") is True, new.get("readOnlyHint") is True
    if old_ro and not new_ro:
        rule = tool_rules.READ_ONLY_HINT_WEAKENED
        where = ("annotations", "readOnlyHint")
        findings.append(
            at.finding(
                rule, pointer=where, old=shown(old, "readOnlyHint", False), new=shown(new, "readOnlyHint", False)
            )
        )
    if not old_ro and not new_ro:
        if old.get("destructiveHint") is False and new.get("destructiveHint") is not False:
            rule = tool_rules.DESTRUCTIVE_HINT_WEAKENED
            where = ("annotations", "destructiveHint")
            findings.append(at.finding(rule, pointer=where, old="false", new=shown(new, "destructiveHint", True)))
        if old.get("idempotentHint") is True and new.get("idempotentHint") is not True:
            rule = tool_rules.IDEMPOTENT_HINT_WEAKENED
            where = ("annotations", "idempotentHint")
            findings.append(at.finding(rule, pointer=where, old="true", new=shown(new, "idempotentHint", False)))
    if old.get("openWorldHint") is False and new.get("openWorldHint") is not False:
        rule = tool_rules.OPEN_WORLD_HINT_WEAKENED
        where = ("annotations", "openWorldHint")
        findings.append(at.finding(rule, pointer=where, old="false", new=shown(new, "openWorldHint", True)))
    return findings


def _load(schema: JSON, where: str) -> Document:
    try:
        return Document.load(schema)
    except InputError as error:
        raise InputError(f"{where}: {error.message}", hint=error.hint) from error


def _words(text: JSON) -> str:
    return " ".join(text.split()) if isinstance(text, str) else ""
