"""Capability labels against the hand-labelled tools: `python bench/flows.py` prints precision and recall.

The labels (`bench/flows/eval.jsonl`, `tune.jsonl`, README there) were written by hand before the
classifier (`quiver.capabilities`); the classifier was tuned on `tune` only. Each tool is classified as
quiver does it for a lock entry: its name, description, inputSchema and annotations, with its server's
description. The corpus catalogs carry no annotations; `--annotations` takes the github tools'
annotations from the github-mcp-server v0.30.0 snapshots where a tool of that name exists there (the
real server sends them), to show what annotations change. `-v` lists every disagreement with both
reasons. QUIVER_CORPUS (else QUIVER_SHARED/corpus) overrides ../shared/corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from quiver.capabilities import LABELS, ToolFacts, classify_tool

_SHARED = Path(os.environ.get("QUIVER_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPUS = Path(os.environ.get("QUIVER_CORPUS", _SHARED / "corpus"))
SETS = Path(__file__).resolve().parent / "flows"


def catalog_tools(corpus: Path) -> dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """`server/tool` -> (server catalog, tool) over catalogs/ and catalogs-livemcpbench/."""
    out: dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
    for folder in ("catalogs", "catalogs-livemcpbench"):
        for path in sorted((corpus / folder).glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            for tool in data["tools"]:
                out[f"{data['server']}/{tool['name']}"] = (data, tool)
    return out


def snapshot_annotations(corpus: Path) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for path in sorted((corpus / "github-mcp-server" / "v0.30.0").glob("*.snap")):
        tool = json.loads(path.read_text(encoding="utf-8"))
        out[f"github/{tool['name']}"] = tool.get("annotations") or {}
    return out


def score(rows: list[dict[str, Any]], tools: Mapping[str, Any], annotations: Mapping[str, Any], verbose: bool) -> str:
    counts = {label: [0, 0, 0] for label in LABELS}  # tp, fp, fn
    for row in rows:
        server, tool = tools[row["tool"]]
        facts = ToolFacts(
            server=server["server"],
            name=tool["name"],
            description=tool.get("description") or "",
            title=tool.get("title") or "",
            input_schema=tool.get("inputSchema") or {},
            annotations=annotations.get(row["tool"], tool.get("annotations") or {}),
            server_description=server.get("description") or "",
        )
        found = classify_tool(facts)
        got, want = set(found.labels), set(row["labels"])
        for label in LABELS:
            if label in got and label in want:
                counts[label][0] += 1
            elif label in got:
                counts[label][1] += 1
                if verbose:
                    print(f"  false {label}: {row['tool']}: {found.reason(label).text}")  # type: ignore[union-attr]
            elif label in want:
                counts[label][2] += 1
                if verbose:
                    print(f"  missed {label}: {row['tool']}: {row['why']}")
    lines = [f"  {'label':<16} {'precision':>9} {'recall':>7} {'tp':>4} {'fp':>4} {'fn':>4} {'labelled':>8}"]
    for label, (tp, fp, fn) in counts.items():
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        lines.append(f"  {label:<16} {precision:>9.2f} {recall:>7.2f} {tp:>4} {fp:>4} {fn:>4} {tp + fn:>8}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--set", choices=("eval", "tune", "both"), default="both")
    parser.add_argument("--annotations", action="store_true", help="github tools' annotations from the snapshots")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    args = parser.parse_args()
    if not (CORPUS / "catalogs").is_dir():
        print(f"no corpus at {CORPUS}: set QUIVER_CORPUS", file=sys.stderr)
        return 2
    tools = catalog_tools(CORPUS)
    annotations = snapshot_annotations(CORPUS) if args.annotations else {}
    for name in ("eval", "tune") if args.set == "both" else (args.set,):
        rows = [json.loads(line) for line in (SETS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
        servers = len({r["tool"].split("/", 1)[0] for r in rows})
        note = " (held out: never tuned on)" if name == "eval" else " (the classifier was tuned on these)"
        with_hints = ", github annotations from the v0.30.0 snapshots" if args.annotations else ""
        print(f"{name}: {len(rows)} tools of {servers} servers{note}{with_hints}")
        print(score(rows, tools, annotations, args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
