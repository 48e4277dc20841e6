#!/usr/bin/env python3
"""Record what the real hosts send for each scenario of tests/fixtures/hosts/ into its recorded.json.

    scripts/record-hosts.py [SCENARIO...] [--hosts DIR] [--jobs N] [--check] [--save-requests DIR]

Each scenario runs against its host (Claude Code or Copilot CLI, installed at the pinned versions by
`scripts/install-hosts.sh DIR`; DIR defaults to $QUIVER_HOSTS_DIR, else /tmp/quiver-hosts) pointed at a
recording endpoint on loopback (bench/_host_recorder.py), once per agent it records, and its
recorded.json is written atomically (format: bench/_host_record.py). `--check` writes nothing and exits 1
when a fresh recording differs from the committed one. `--save-requests DIR` keeps every raw request
body there (they hold the hosts' own prompts and tool descriptions: never commit them).
Run it from the repository's venv: the catalog servers are started with this Python.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _host_record import RecordError, Scenario, load_scenario, record_scenario, recorded_text, scenario_dirs  # noqa: E402
from _host_recorder import HOSTS, PINNED, host_version  # noqa: E402

DEFAULT_HOSTS = Path(os.environ.get("QUIVER_HOSTS_DIR", "/tmp/quiver-hosts"))


def write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".recorded-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)


def summary(record: dict[str, Any]) -> str:
    if not record["sent"]:
        return "no request (the agent never ran)"
    search = record["search_tool"] or "no search"
    return (
        f"up {len(record['up_front'])} ({record['tokens']['up_front']:,} tok), deferred {len(record['deferred'])}, "
        f"{search}, model {record['model_sent']}"
    )


def one(scenario: Scenario, hosts: Path, versions: dict[str, str], args: argparse.Namespace) -> tuple[str, bool]:
    save = Path(args.save_requests) / scenario.name if args.save_requests else None
    started = time.monotonic()
    try:
        records = record_scenario(scenario, hosts, versions[scenario.host], save)
    except RecordError as exc:
        return f"FAILED {exc}", False
    lines = [f"{scenario.name:34} {time.monotonic() - started:5.1f}s  {summary(records[scenario.agent])}"]
    for agent in scenario.runs[1:]:
        lines.append(f"  {agent:32}        {summary(records[agent])}")
    text = recorded_text(records, scenario)
    path = scenario.dir / "recorded.json"
    if args.check:
        old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        if _comparable(old) != _comparable(json.loads(text)):
            failed = sorted({s for r in records.values() for s in r["raw"]["mcp_failed"]})
            why = f" (servers that did not connect: {', '.join(failed)})" if failed else ""
            return "\n".join([*lines, f"  DIFFERS from the committed {path.relative_to(ROOT)}{why}"]), False
        return "\n".join(lines), True
    failed = sorted({s for r in records.values() for s in r["raw"]["mcp_failed"]})
    if failed:
        return "\n".join([*lines, f"  NOT WRITTEN: servers did not connect: {', '.join(failed)}"]), False
    write_atomic(path, text)
    return "\n".join(lines), True


def _comparable(record: Any) -> Any:
    """A record without its wall times."""
    if isinstance(record, dict):
        return {k: _comparable(v) for k, v in record.items() if k != "seconds"}
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO")
    parser.add_argument("--hosts", type=Path, default=DEFAULT_HOSTS, help="where install-hosts.sh put the hosts")
    parser.add_argument("--jobs", type=int, default=2, help="host runs at once (default 2)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a recording differs")
    parser.add_argument("--save-requests", metavar="DIR", help="keep the raw request bodies in DIR")
    args = parser.parse_args()
    scenarios = [load_scenario(d) for d in scenario_dirs(args.scenarios)]
    versions = {}
    for host in sorted({s.host for s in scenarios}):
        versions[host] = host_version(args.hosts, host)
        if versions[host] != PINNED[host]:
            print(f"note: {host} {versions[host]} is installed, the recordings pin {PINNED[host]}", file=sys.stderr)
    uptime = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"recording {len(scenarios)} scenarios with {', '.join(f'{h} {v}' for h, v in versions.items())}")
    started = time.monotonic()
    ok = True
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for text, good in pool.map(lambda s: one(s, args.hosts, versions, args), scenarios):
            print(text, flush=True)
            ok = ok and good
    print(f"{len(scenarios)} scenarios in {time.monotonic() - started:.0f}s (load before: {uptime.split('load')[-1]})")
    return 0 if ok else 1


if __name__ == "__main__":
    assert set(HOSTS) == set(PINNED)
    sys.exit(main())
