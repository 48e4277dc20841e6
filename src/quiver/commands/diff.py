"""`quiver diff [BASE] [HEAD]`: which tool-contract changes break callers, each with a witness."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from quiver.commands.outcome import Outcome
from quiver.contract.sides import Side, default_base, git_ref, load_side, name_servers
from quiver.errors import UsageError
from quiver.findings.rule import Rule
from quiver.model import Finding, Location

if TYPE_CHECKING:
    from quiver.contract.places import Locator, Places
from quiver.sources.contract_ignore import read_ignores


def diff_sides(old: Side, new: Side) -> list[Finding]:
    """Findings for every server of either side (a tool that moved between servers once, as a move), then for
    every agent present on both sides. Each finding has a location: the tool's own (new side first), its
    server's entry, else the side's file at line 1."""

    from quiver.contract.diff import diff_catalogs, diff_moved, sort_findings
    from quiver.contract.moves import match_moves
    from quiver.contract.places import Places

    moves = match_moves(old.catalogs, new.catalogs)
    arrived = set(moves.values())
    places = Places()
    findings: list[Finding] = []
    for server in sorted(set(old.catalogs) | set(new.catalogs)):
        locations = {tool: loc for (srv, tool), loc in new.locations.items() if srv == server}
        fallback = new.server_locations.get(server) or old.server_locations.get(server)
        locators = _locators(places, new, server)
        for name in old.catalogs.get(server, {}):
            if name not in locations:
                at = fallback or old.locations.get((server, name))
                if at is not None:
                    locations[name] = at
            if name not in new.catalogs.get(server, {}) and fallback is None:
                locators.pop(name, None)  # a removed tool: the old side's file, unless its server is still here
                old_locator = places.locator(old.sources.get((server, name)))
                if old_locator is not None:
                    locators[name] = old_locator
        findings += diff_catalogs(
            {n: t for n, t in old.catalogs.get(server, {}).items() if (server, n) not in moves},
            {n: t for n, t in new.catalogs.get(server, {}).items() if (server, n) not in arrived},
            server=server,
            locations=locations,
            scan=text_hazards,
            locators=locators,
        )
    for (server, name), target in sorted(moves.items()):
        before, after = old.catalogs[server][name], new.catalogs[target[0]][target[1]]
        where = new.locations.get(target) or new.server_locations.get(target[0])
        locate = places.locator(new.sources.get(target))
        moved = diff_moved(before, after, source=(server, name), target=target, location=where, locate=locate)
        findings += moved
    findings += _agent_findings(old, new)
    default = new.file or old.file
    return sort_findings(f if f.location or default is None else replace(f, location=default) for f in findings)


def _locators(places: Places, side: Side, server: str) -> dict[str, Locator]:
    """{tool: its locator} for the tools of `server` whose file `side` knows."""
    out = {}
    for (srv, tool), source in side.sources.items():
        locator = places.locator(source) if srv == server else None
        if locator is not None:
            out[tool] = locator
    return out


def text_hazards(text: str) -> list[tuple[str, str]]:
    """What `quiver lint`'s SEC rules flag in one text: the contract diff's `TextScan` (it may not import lint).
    Imported on the first changed text, so a diff that changes none loads no lint module."""
    from quiver.lint.support.injection import hazards

    return hazards(text)


def _agent_findings(old: Side, new: Side) -> list[Finding]:
    """CTR070 for each tool an agent carried and carries no more (a warning when the agent names the tool
    or its server, info when only `*` or an unset `tools` reached it), CTR071 for each change of loading."""
    from quiver.contract.diff import diff_agent_loads, diff_agent_tools

    out: list[Finding] = []
    new_agents = {r.agent.id: r for r in new.agents}
    for before in old.agents:
        after = new_agents.get(before.agent.id)
        if after is None:
            continue
        location = after.agent.key_locations.get("tools", after.agent.location)
        refs = {ref.text for ref in before.agent.tools or ()}
        carried = {f"{t.server}/{t.tool.name}": t for t in before.tools}
        wildcard = {key for key, t in carried.items() if not t.named and not {t.server, f"{t.server}/*"} & refs}
        now = {f"{t.server}/{t.tool.name}" for t in after.tools}
        out += diff_agent_tools(carried, now, agent=after.agent.id, location=location, wildcard=wildcard)
        out += diff_agent_loads(
            {(t.server, t.tool.name): t.load for t in before.tools},
            {(t.server, t.tool.name): t.load for t in after.tools},
            agent=after.agent.id,
            location=location,
            reasons={(t.server, t.tool.name): t.decision.text for t in after.tools},
        )
    return out


def contract_overrides(overrides: Mapping[str, str], table: Mapping[str, Rule]) -> dict[str, str]:
    """The severity overrides that name contract rules; the others belong to `quiver lint`, which checks them.
    A `CTR` code that is no contract rule is still an error (apply_severity reports it)."""
    return {k: v for k, v in overrides.items() if k in table or k.upper().startswith("CTR")}


def _changed_files(root: Path, base: str | None, findings: list[Finding]) -> dict[str, frozenset[int]]:
    """Every finding of a diff is about a change, and a removed tool has no line of its own in the new
    file: so `--changed-only` keeps the findings of every changed file, on any line, and of every file the
    change deleted (a removed lock file or snapshot: findings located in the base's copy)."""
    from quiver.report.changes import changed_lines

    out = {}
    for rel in changed_lines(root, base):
        try:
            count = (root / rel).read_text(encoding="utf-8").count("\n") + 1
        except (OSError, UnicodeDecodeError):
            count = 1
        out[rel] = frozenset(range(0, count + 1))
    gone: dict[str, set[int]] = {}
    for finding in findings:
        loc = finding.location
        if loc is not None and loc.file not in out and not (root / loc.file).exists():
            gone.setdefault(loc.file, set()).add(loc.line)
    return {**out, **{file: frozenset(lines) for file, lines in gone.items()}}


@dataclass(frozen=True, slots=True)
class DiffOptions:
    root: Path
    base: str | None = None  # None: the merge-base with the default branch
    head: str | None = None  # None: the working tree
    server: str | None = None
    fmt: str = "text"
    fail_on: str = "error"
    output: Path | None = None  # the report to this file instead of stdout
    changed_only: bool = False  # only findings in files changed against BASE
    color: bool = False
    commits: str | None = None  # a range A..B: every commit of it that touched the path BASE
    catalogs: tuple[str, ...] = ()  # these tool catalogs at BASE against the working tree, not the lock


def run(options: DiffOptions) -> Outcome:
    """The contract findings of BASE..HEAD (or of `commits`, or of `catalogs`), and the exit code: 1 for a
    finding at or above `fail_on` (in scope of `changed_only`), else 0."""
    from quiver.config import load_config
    from quiver.findings.severity import at_or_above
    from quiver.report.context import ReportContext
    from quiver.report.render import render

    o, root = options, options.root
    config = load_config(root)
    table = contract_table()
    overrides = contract_overrides(config.severity, table)
    ignores = read_ignores(root)
    if o.commits is not None:
        if o.base is None or o.head is not None:
            raise UsageError(
                "`--commits RANGE` diffs one path through history", hint="write `quiver diff --commits A..B PATH`"
            )
        return _history(o, o.base, overrides, ignores)
    base_spec = o.base if o.base is not None else default_base(root)
    from quiver.commands._progress import Progress

    with Progress("diffing contracts"):
        if o.catalogs:
            if o.head is not None:
                raise UsageError(
                    "`--catalog` diffs each catalog at BASE against the working tree; HEAD is the working tree",
                    hint="write `quiver diff BASE --catalog PATH`",
                )
            ref = git_ref(root, base_spec) or base_spec
            pairs = [_catalog_sides(root, ref, path, o.server) for path in o.catalogs]
        else:
            sides = (load_side(root, base_spec, lock_rel=config.lock), load_side(root, o.head, lock_rel=config.lock))
            pairs = [name_servers(*sides, o.server)]
        findings = _accepted([f for old, new in pairs for f in diff_sides(old, new)], overrides, ignores)
    old, new = pairs[0]
    messages: tuple[str, ...] = ()
    if old.missing_lock and new.missing_lock:  # never "all checks passed" when there was nothing to compare
        messages = (
            f"quiver: no {old.missing_lock} in `{old.label}` nor `{new.label}`: nothing to compare "
            "(`quiver snapshot` writes one)",
        )
    changed = None
    if o.changed_only:
        against = git_ref(root, base_spec) if o.base is not None or o.head is None else None
        changed = _changed_files(root, against, findings[0])
    ctx = ReportContext(
        tool="diff",
        rules=table,
        root=root,
        color=o.color,
        changed_lines=changed,
        summary={"ignored": len(findings[1])},
        fallback=new.file or old.file or Location(config.lock, 1, 1),
    )
    from quiver.report.changes import in_scope

    code = 1 if at_or_above(in_scope(findings[0], changed), o.fail_on) else 0
    text = render(findings[0], o.fmt, ctx)  # with FORCE_COLOR, `color` keeps the colors when piped
    return Outcome(text, messages, code=code, output=o.output, color=o.color)


def _catalog_sides(root: Path, ref: str, path: str, server: str | None) -> tuple[Side, Side]:
    """`--catalog PATH`: the catalog at `ref` against the working tree's (none there: an empty catalog)."""
    rel = Path(path).as_posix().strip("/")
    old = load_side(root, f"{ref}:{rel}", lock_rel=rel)
    here = root / rel
    new = load_side(root, str(here), lock_rel=rel) if here.exists() else Side(rel, {})
    return name_servers(old, new, server)


def compare(
    root: Path, base: str | None, head: str | None, server: str | None, *, lock: str, overrides: Mapping[str, str]
) -> tuple[Side, Side, tuple[list[Finding], list[Finding]]]:
    """Both sides read and diffed: (old, new, (kept, ignored)), the project's ignore file applied."""
    old, new = name_servers(load_side(root, base, lock_rel=lock), load_side(root, head, lock_rel=lock), server)
    return old, new, _accepted(diff_sides(old, new), overrides, read_ignores(root))


def contract_table() -> Mapping[str, Rule]:
    """The contract rules only: `quiver diff` never builds the lint catalog."""
    from quiver.contract.rules import CONTRACT_RULES
    from quiver.findings.rule import index_rules

    return index_rules(CONTRACT_RULES)


def _accepted(
    findings: list[Finding], overrides: Mapping[str, str], ignores: Mapping[str, str]
) -> tuple[list[Finding], list[Finding]]:
    """(kept, ignored): severities overridden, then the ignore file applied."""
    from quiver.findings.severity import apply_severity

    adjusted = apply_severity(findings, overrides)
    return [f for f in adjusted if f.fingerprint not in ignores], [f for f in adjusted if f.fingerprint in ignores]


def _history(options: DiffOptions, path: str, overrides: Mapping[str, str], ignores: Mapping[str, str]) -> Outcome:
    """`quiver diff --commits A..B PATH`: every commit that touched PATH against its parent, in one process."""

    from quiver.contract.history import diff_history
    from quiver.findings.severity import at_or_above

    rev_range, fmt = options.commits or "", options.fmt
    worst: list[Finding] = []
    records: list[dict[str, object]] = []
    lines: list[str] = []
    steps = diff_history(options.root, rev_range, path, server=options.server or "", scan=text_hazards)
    for step, found in steps:
        kept, _ = _accepted(found, overrides, ignores)
        worst += at_or_above(kept, options.fail_on)
        records.append({"base": step.parent, "head": step.commit, "findings": [f.to_json() for f in kept]})
        serious = [f for f in kept if f.severity != "info"]
        lines.append(f"{(step.parent or 'root')[:10]}..{step.commit[:10]} {step.subject}: {len(kept)} findings")
        lines += [f"  {f.severity}[{f.rule}] {f.message}" for f in serious]
    if fmt == "json":
        text = json.dumps(records, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    elif fmt == "text":
        text = "\n".join(lines) + "\n" if lines else f"no commit of {rev_range} touched {path}\n"
    else:
        raise UsageError(f"`--commits` writes text or json, not {fmt}", hint="pass `--format text` or `--format json`")
    return Outcome(text, code=1 if worst else 0, output=options.output)
