"""quiver's split of each agent's tools beside what the real host sends: `python bench/hosts.py [SCENARIO...]`.

For every scenario of tests/fixtures/hosts/ (bench/_host_record.py says what one is) and every agent it
records, one row: the host's split, from the committed recorded.json or, with `--live`, from running the
host now (Claude Code / Copilot CLI as installed by `scripts/install-hosts.sh DIR`, `--hosts DIR`), and
quiver's split of the same project, from `quiver compile --project <copy> --host <host> --format json`
and its `build/quiver/<agent>.json`. Columns, each `host/quiver`: MCP tools and the host's own tools up
front and deferred, the search tool, o200k tokens of the MCP tools sent up front (the host's counted as
sent: name, description, input_schema; quiver's `budget.preloaded_tokens`), and tokens of the deferred
tools' listing (the host's reminder; quiver's `budget.server_index_tokens`). `diff` names the tools whose
place differs (`+x`: quiver has it there and the host does not, `-x`: the other way), or why there is no
quiver side: the main thread (quiver compiles agent files), or a quiver without `--host`.

The scenario's model and ENABLE_TOOL_SEARCH reach quiver as `[hosts.<host>]` settings in a quiver.toml
written into the copy; the count Claude Code's `auto` compares is the one the recorder answered
(`count_tokens` in scenario.json), which quiver does not see: an `auto` row compares quiver's own count.
`--format json` prints the rows as JSON. Figures do not depend on the machine's load; `--live` prints the
wall time with the load beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _host_record import Scenario, load_scenario, record_scenario, scenario_dirs
from _host_recorder import CLAUDE_CODE, PINNED, host_version

NAMES_KEY = {"claude-code": "claude", "copilot-cli": "copilot_cli"}
DEFAULT_HOSTS = Path(os.environ.get("QUIVER_HOSTS_DIR", "/tmp/quiver-hosts"))
COPIED_OUT = {"recorded.json", "build", ".quiver"}
QUIVER = (sys.executable, "-m", "quiver")


@dataclass(frozen=True, slots=True)
class Side:
    """One side's split of one agent's tools."""

    up_mcp: tuple[str, ...]
    up_builtin: tuple[str, ...]
    deferred_mcp: tuple[str, ...]
    deferred_builtin: tuple[str, ...]
    search_tool: str | None
    mcp_tokens_up: int
    listing_tokens: int
    model: str | None


@dataclass(frozen=True, slots=True)
class Row:
    host: str
    scenario: str
    agent: str | None
    recorded: Side | None  # None: the host never ran the agent
    quiver: Side | None
    note: str  # why there is no quiver side, or a caveat

    def diff(self) -> str:
        if self.quiver is None:
            return self.note
        if self.recorded is None:
            return "the host never ran this agent; quiver compiled it"
        parts = []
        for label, host, ours in (
            ("up", {*self.recorded.up_mcp, *self.recorded.up_builtin}, {*self.quiver.up_mcp, *self.quiver.up_builtin}),
            (
                "deferred",
                {*self.recorded.deferred_mcp, *self.recorded.deferred_builtin},
                {*self.quiver.deferred_mcp, *self.quiver.deferred_builtin},
            ),
        ):
            extra, missing = sorted(ours - host), sorted(host - ours)
            if extra or missing:
                names = [f"+{n}" for n in extra] + [f"-{n}" for n in missing]
                shown = " ".join(names[:6]) + (f" (+{len(names) - 6} more)" if len(names) > 6 else "")
                parts.append(f"{label}: {shown}")
        if self.recorded.search_tool != self.quiver.search_tool:
            parts.append(f"search: {self.quiver.search_tool} vs {self.recorded.search_tool}")
        text = "; ".join(parts) or "same split"
        return f"{text} ({self.note})" if self.note else text


def is_mcp(host: str, name: str) -> bool:
    """An MCP tool's model-facing name: `mcp__server__tool` (Claude Code), `server-tool` (Copilot CLI,
    whose own tools have no hyphen)."""
    return name.startswith("mcp__") if host == CLAUDE_CODE else "-" in name


def recorded_side(host: str, record: dict[str, Any]) -> Side | None:
    if not record.get("sent"):
        return None
    up, deferred = record["up_front"], record["deferred"]
    tokens = record["raw"]["tool_tokens"]
    return Side(
        up_mcp=tuple(n for n in up if is_mcp(host, n)),
        up_builtin=tuple(n for n in up if not is_mcp(host, n)),
        deferred_mcp=tuple(n for n in deferred if is_mcp(host, n)),
        deferred_builtin=tuple(n for n in deferred if not is_mcp(host, n)),
        search_tool=record["search_tool"],
        mcp_tokens_up=sum(tokens[n] for n in up if is_mcp(host, n)),
        listing_tokens=record["tokens"]["deferred_listing"],
        model=record["model_sent"],
    )


@cache
def compile_supports_host() -> bool:
    out = subprocess.run([*QUIVER, "compile", "--help"], capture_output=True, text=True, check=False).stdout
    return "--host" in out


def quiver_toml(scenario: Scenario) -> str:
    """The scenario's host settings as quiver reads them: `[hosts.<host>]` model (and ENABLE_TOOL_SEARCH)."""
    lines = [f"[hosts.{scenario.host}]"]
    if scenario.model:
        lines.append(f"model = {json.dumps(scenario.model)}")
    if scenario.host == CLAUDE_CODE and "ENABLE_TOOL_SEARCH" in scenario.env:
        lines.append(f"enable_tool_search = {json.dumps(scenario.env['ENABLE_TOOL_SEARCH'])}")
    return "\n".join(lines) + "\n"


def compile_scenario(scenario: Scenario) -> dict[str, dict[str, Any]] | str:
    """quiver's manifests of the scenario's agents by id, compiled in a copy of it; or why not."""
    if not compile_supports_host():
        return "quiver compile has no --host yet: quiver side left out"
    with tempfile.TemporaryDirectory(prefix="hostbench-") as tmp:
        project = Path(tmp) / scenario.name
        shutil.copytree(scenario.dir, project, ignore=lambda d, names: [n for n in names if n in COPIED_OUT])
        if not (project / "quiver.toml").exists():
            (project / "quiver.toml").write_text(quiver_toml(scenario), encoding="utf-8")
        done = subprocess.run(
            [*QUIVER, "compile", "--project", str(project), "--host", scenario.host, "--format", "json", "-q"],
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode not in (0, 1):
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            return f"quiver compile exit {done.returncode}: {last}"
        out = project / "build" / "quiver"
        return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*.json") if p.stem != "index"}


def quiver_side(host: str, manifest: dict[str, Any]) -> Side:
    key = NAMES_KEY[host]
    tools = manifest.get("tools", [])
    facts = manifest.get("host") if isinstance(manifest.get("host"), dict) else {}
    budget = manifest.get("budget", {})
    search = facts.get("search_tool")
    up_builtin = [*facts.get("builtins_up_front", [])]
    if search and search not in up_builtin:
        up_builtin.append(search)
    return Side(
        up_mcp=tuple(t["names"][key] for t in tools if t.get("load") == "preloaded"),
        up_builtin=tuple(up_builtin),
        deferred_mcp=tuple(t["names"][key] for t in tools if t.get("load") == "deferred"),
        deferred_builtin=tuple(facts.get("builtins_deferred", [])),
        search_tool=search,
        mcp_tokens_up=int(budget.get("preloaded_tokens", 0)),
        listing_tokens=int(budget.get("server_index_tokens", 0)),
        model=facts.get("model"),
    )


def rows_for(scenario: Scenario, records: dict[str | None, dict[str, Any]]) -> list[Row]:
    manifests = compile_scenario(scenario) if any(a is not None for a in scenario.runs) else {}
    notes = []
    if scenario.host == CLAUDE_CODE and scenario.env.get("ENABLE_TOOL_SEARCH", "").startswith("auto"):
        notes.append(f"host's count_tokens answered {scenario.count_tokens:,}")
    rows = []
    for agent in scenario.runs:
        recorded = recorded_side(scenario.host, records[agent])
        note = "; ".join(notes)
        ours: Side | None = None
        if agent is None:
            note = "main thread: quiver compiles agent files, not the host's main thread"
        elif isinstance(manifests, str):
            note = manifests
        elif agent not in manifests:
            note = f"quiver wrote no manifest for `{agent}`"
        else:
            ours = quiver_side(scenario.host, manifests[agent])
        rows.append(Row(scenario.host, scenario.name, agent, recorded, ours, note))
    return rows


def committed(scenario: Scenario) -> dict[str | None, dict[str, Any]]:
    path = scenario.dir / "recorded.json"
    if not path.exists():
        raise SystemExit(f"{path}: not recorded; run scripts/record-hosts.py {scenario.name}")
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str | None, dict[str, Any]] = {scenario.agent: data}
    out.update(data.get("agents", {}))
    return out


def _pair(rec: Side | None, ours: Side | None, field: str) -> str:
    def one(side: Side | None) -> str:
        if side is None:
            return "-"
        value = getattr(side, field)
        return str(len(value)) if isinstance(value, tuple) else (f"{value:,}" if isinstance(value, int) else str(value))

    return f"{one(rec)}/{one(ours)}"


COLUMNS = (
    ("up MCP", "up_mcp"),
    ("up own", "up_builtin"),
    ("def MCP", "deferred_mcp"),
    ("def own", "deferred_builtin"),
    ("search", "search_tool"),
    ("MCP tok up", "mcp_tokens_up"),
    ("listing tok", "listing_tokens"),
)


def print_table(rows: list[Row]) -> None:
    head = ["host", "scenario", "agent", *(c for c, _ in COLUMNS), "diff (host/quiver)"]
    body = [
        [r.host, r.scenario, r.agent or "(main)", *(_pair(r.recorded, r.quiver, f) for _, f in COLUMNS), r.diff()]
        for r in rows
    ]
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head) - 1)]
    for line in [head, ["-" * w for w in widths] + ["-" * 18], *body]:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=False)) + "  " + str(line[-1]))
    compared = [r for r in rows if r.quiver is not None and r.recorded is not None]
    same = [r for r in compared if r.diff().startswith("same split")]
    print(
        f"\n{len(rows)} agents in {len({r.scenario for r in rows})} scenarios: {len(compared)} compared, "
        f"{len(same)} with the host's split, {len(compared) - len(same)} differ, "
        f"{len(rows) - len(compared)} without a quiver side"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO")
    parser.add_argument("--live", action="store_true", help="run the hosts now instead of reading recorded.json")
    parser.add_argument("--hosts", type=Path, default=DEFAULT_HOSTS, help="where install-hosts.sh put the hosts")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios at once (default 2)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args()
    scenarios = [load_scenario(d) for d in scenario_dirs(args.scenarios)]
    started = time.monotonic()
    load = os.getloadavg()
    if args.live:
        versions = {h: host_version(args.hosts, h) for h in sorted({s.host for s in scenarios})}
        for host, version in versions.items():
            if version != PINNED[host]:
                print(f"note: {host} {version} is installed, the recordings pin {PINNED[host]}", file=sys.stderr)

        def source(s: Scenario) -> dict[str | None, dict[str, Any]]:
            return record_scenario(s, args.hosts, versions[s.host])
    else:
        source = committed
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        rows = [row for rs in pool.map(lambda s: rows_for(s, source(s)), scenarios) for row in rs]
    if args.format == "json":
        print(json.dumps([{**asdict(r), "diff": r.diff()} for r in rows], indent=1))
    else:
        print_table(rows)
    if args.live:
        end = os.getloadavg()
        print(
            f"live: {len(scenarios)} scenarios in {time.monotonic() - started:.0f}s with --jobs {args.jobs} "
            f"(load average {load[0]:.2f} before, {end[0]:.2f} after)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
