"""The contract diff against a blind fuzz oracle on a real history (issue 23).

    python bench/diff_oracle.py [--repo PATH] [--commits 150] [--tries 400]

For every commit of the range that touched the snapshots, and every tool whose `inputSchema` changed (renames
paired as the diff pairs them), `bench/_fuzz.py` draws argument objects from the old schema and keeps the
first that jsonschema accepts under the old and rejects under the new. Prints, per verdict:
- quiver errors on input schemas, and how many the oracle confirms (it found a break in the same tool, or the
  error's own witness passes the oracle's independent validator: valid old, invalid new);
- oracle breaks with no quiver error on the tool (misses) and quiver warnings there;
- every witness checked with the oracle's validator (its own format checkers).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _fuzz import breaks, validator  # noqa: E402

from quiver.commands.diff import text_hazards  # noqa: E402
from quiver.contract.diff import diff_catalogs  # noqa: E402
from quiver.contract.git import SnapshotReader  # noqa: E402
from quiver.contract.history import commits  # noqa: E402

DEFAULT_REPO = "/work/.mirror/github+github-mcp-server/repo"
INPUT = "inputSchema"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", default=os.environ.get("QUIVER_BENCH_GITHUB_MCP", DEFAULT_REPO))
    parser.add_argument("--path", default="pkg/github/__toolsnaps__")
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--tries", type=int, default=400)
    args = parser.parse_args()
    repo = Path(args.repo)
    steps = commits(repo, "HEAD", args.path)[-args.commits :]
    tally: Counter[str] = Counter()
    misses: list[str] = []
    unconfirmed: list[str] = []
    with SnapshotReader(repo, args.path) as reader:
        for step in steps:
            old, new = reader.catalog(step.parent), reader.catalog(step.commit)
            findings = diff_catalogs(old, new, server="github", scan=text_hazards)
            pairs = {name: name for name in set(old) & set(new)}
            pairs.update({f.tool or "": _target(f.message) for f in findings if f.rule == "CTR002"})
            errors = {f.tool for f in findings if f.severity == "error" and f.witness and "arguments" in f.witness}
            for f in findings:
                if f.witness is None:
                    continue
                tally["witnesses"] += 1
                before, after = old.get(f.tool or ""), new.get(f.tool or "") or new.get(pairs.get(f.tool or "", ""))
                if before is None or after is None:
                    continue
                key = INPUT if "arguments" in f.witness else "outputSchema"
                value = f.witness["arguments" if key == INPUT else "result"]
                accepting, rejecting = (before, after) if key == INPUT else (after, before)
                ok = _valid(accepting.get(key, {}), value) and not _valid(rejecting.get(key, {}), value)
                tally["witnesses valid (oracle's validator)" if ok else "witnesses INVALID"] += 1
            for name, target in sorted(pairs.items()):
                before, after = old[name].get(INPUT), new[target].get(INPUT)
                if before == after or not isinstance(before, dict) or not isinstance(after, dict):
                    continue
                tally["tools whose inputSchema changed"] += 1
                found = breaks(before, after, tries=args.tries, seed=int(step.commit[:8], 16))
                rules = sorted({f.rule for f in findings if f.tool in (name, target) and f.severity == "error"})
                if name in errors or target in errors:
                    tally["quiver input errors (tools)"] += 1
                    tally[
                        "  confirmed by the oracle's own draw" if found is not None else "  confirmed by the witness"
                    ] += 1
                elif found is not None:
                    tally["oracle breaks with no quiver error (misses)"] += 1
                    warned = sorted({f.rule for f in findings if f.tool in (name, target) and f.severity == "warning"})
                    misses.append(f"{step.commit[:8]} {name}: {found} (quiver: errors {rules}, warnings {warned})")
            for f in findings:
                if f.severity == "warning" and "could not be confirmed" in f.message:
                    unconfirmed.append(f"{step.commit[:8]} {f.rule} {f.message}")
    print(f"{len(steps)} commits of {args.path}, {args.tries} draws per changed inputSchema")
    for key in sorted(tally):
        print(f"  {key:<60} {tally[key]}")
    for line in misses:
        print(f"  miss {line}")
    for line in unconfirmed:
        print(f"  unconfirmed {line}")


def _valid(schema: object, value: object) -> bool:
    return bool(validator(schema).is_valid(value))


def _target(message: str) -> str:
    return message.rsplit("`", 2)[-2] if "renamed to" in message else ""


if __name__ == "__main__":
    main()
