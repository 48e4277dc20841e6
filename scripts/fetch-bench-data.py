#!/usr/bin/env python3
"""Build the search benchmark's public data (not committed here) from public repositories at pinned commits.

    python scripts/fetch-bench-data.py [DIR]     default: $QUIVER_BENCH_DATA, else ~/.cache/quiver-bench

Writes, under DIR:
  livemcpbench-tasks.jsonl   LiveMCPBench's annotated tasks (icip-cas/LiveMCPBench@a928e57d:
                             annotated_data/all_annotations.json): each task's question and the tools its
                             annotators listed, as `server/tool` names of the corpus's 673 pooled tools
                             (tasks none of whose tools is in the pool are left out)
  catalogs-distractors/      real tool catalogs that do not overlap the corpus's servers, one JSON file per
                             server in the corpus's catalog format, for ranking at ~5,000 tools:
                             - docker/mcp-registry@818bf169: every `servers/*/tools.json` (MCP servers' own
                               tools/list output), except servers the corpus already has (notion, context7); a
                               tool listed without an inputSchema gets an empty object schema
                             - darosh/openapi-directory-lite@24eef4d4 (the APIs-guru OpenAPI directory, latest
                               version of each API): each API's operations as tools, the way an OpenAPI-to-MCP
                               bridge lists them (operationId, summary + description, parameters), APIs taken in
                               sha256 order of their spec path until the distractors reach DISTRACTORS tools;
                               github.com is left out (its operations are the corpus's github tools)
  SOURCES                    the repositories and commits this was built from

The corpus (QUIVER_CORPUS, else ../shared/corpus) must be there: tasks are resolved against its catalogs.
BENCH_GIT_URL is a format string for a repository's clone URL ({repo} = owner/name, {owner}, {name});
default https://github.com/{repo}.git. BENCH_GIT_DIR, a format string of the same kind, reads from git
directories you already have (only the files used are read). Output is deterministic: same commits, same bytes.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

LIVEMCPBENCH = ("icip-cas/LiveMCPBench", "a928e57d1ee7a25579b9a7036030faffff72d15b")
MCP_REGISTRY = ("docker/mcp-registry", "818bf169b365e7b7d5b117352e32757c54844718")
OPENAPI_LITE = ("darosh/openapi-directory-lite", "24eef4d43dafc9f4dccbe2288c63d091ff71fd52")
DISTRACTORS = 4438  # the count: 673 corpus tools + 4,438 distractors = 5,111
REGISTRY_SKIP = {"notion-remote", "context7"}  # the same services as corpus servers
OPENAPI_SKIP = {"specs/github.com/v3.json"}
METHODS = ("get", "put", "post", "delete", "patch")
HERE = Path(__file__).resolve().parent
CORPUS = Path(os.environ.get("QUIVER_CORPUS", HERE.parents[1] / "shared" / "corpus"))


class Tree:
    """One repository at one commit, read through git (a fetched depth-1 copy, or a git directory given)."""

    def __init__(self, work: Path, repo: str, commit: str) -> None:
        owner, name = repo.split("/")
        given = os.environ.get("BENCH_GIT_DIR")
        if given:
            self.git = Path(given.format(repo=repo, owner=owner, name=name))
        else:
            url = os.environ.get("BENCH_GIT_URL", "https://github.com/{repo}.git")
            self.git = work / f"{owner}+{name}.git"
            subprocess.run(["git", "init", "-q", "--bare", str(self.git)], check=True)
            fetch = ["fetch", "-q", "--depth", "1", url.format(repo=repo, owner=owner, name=name), commit]
            subprocess.run(["git", "--git-dir", str(self.git), *fetch], check=True)
        self.commit = commit

    def files(self, prefix: str) -> list[str]:
        out = subprocess.run(
            ["git", "--git-dir", str(self.git), "ls-tree", "-r", "--name-only", self.commit, "--", prefix],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return sorted(out.splitlines())

    def read(self, path: str) -> str:
        show = ["git", "--git-dir", str(self.git), "show", f"{self.commit}:{path}"]
        return subprocess.run(show, check=True, capture_output=True).stdout.decode("utf-8")


def pool() -> dict[str, list[str]]:
    """Tool name -> the `server/tool` names that carry it, over the corpus's 673 tools."""
    names: dict[str, list[str]] = {}
    for folder in ("catalogs", "catalogs-livemcpbench"):
        for path in sorted((CORPUS / folder).glob("*.json")):
            cat = json.loads(path.read_text(encoding="utf-8"))
            for tool in cat["tools"]:
                names.setdefault(tool["name"], []).append(f"{cat['server']}/{tool['name']}")
    return names


def tasks(src: Tree, names: dict[str, list[str]]) -> list[str]:
    rows = json.loads(src.read("annotated_data/all_annotations.json"))
    out = []
    for row in rows:
        listed = row["Annotator Metadata"]["Tools"]
        wanted = [re.sub(r"^\s*\d+[.)]\s*", "", line).strip() for line in listed.splitlines()]
        gold = sorted({full for name in wanted if name for full in names.get(name, ())})
        if gold:
            item = {"task_id": row["task_id"], "query": row["Question"], "category": row["category"], "gold": gold}
            out.append(json.dumps(item, ensure_ascii=False, sort_keys=True))
    return out


def registry(src: Tree) -> list[dict[str, object]]:
    cats = []
    listed = src.files("servers")
    for tools_json in (f for f in listed if f.endswith("/tools.json")):
        server = tools_json.split("/")[1]
        if server in REGISTRY_SKIP:
            continue
        about = ""
        meta = f"servers/{server}/server.yaml"
        if meta in listed:
            found = re.search(r"^\s+description:\s*(.+)$", src.read(meta), re.MULTILINE)
            about = found.group(1).strip().strip("'\"") if found else ""
        tools = [
            {"name": t["name"], "description": t.get("description") or "", "inputSchema": _schema(t)}
            for t in json.loads(src.read(tools_json))
        ]
        source = f"{MCP_REGISTRY[0]}@{MCP_REGISTRY[1]}:servers/{server}/tools.json"
        cats.append({"server": server, "description": about, "source": source, "tools": tools})
    return cats


def _schema(tool: dict[str, object]) -> object:
    """The tool's inputSchema; the registry's summaries leave it out for tools without parameters, which an MCP
    Tool cannot: those get an empty object schema."""
    schema = tool.get("inputSchema")
    return schema if isinstance(schema, dict) else {"type": "object", "properties": {}}


def _text(value: object) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", value)).split())


def _tool_name(op: dict[str, object], method: str, path: str) -> str:
    raw = op.get("operationId") if isinstance(op.get("operationId"), str) else f"{method}_{path}"
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(raw)).strip("_")[:64] or method


def openapi(src: Tree, budget: int) -> list[dict[str, object]]:
    specs = sorted(
        (p for p in src.files("specs") if p.endswith(".json") and p not in OPENAPI_SKIP),
        key=lambda p: hashlib.sha256(p.encode()).hexdigest(),
    )
    cats: list[dict[str, object]] = []
    total = 0
    for spec_path in specs:
        if total >= budget:
            break
        spec = json.loads(src.read(spec_path))
        rel = spec_path.removeprefix("specs/")
        server = re.sub(r"[^a-z0-9]+", "-", rel.rsplit("/", 1)[0].lower()).strip("-")
        tools, seen = [], set()
        for path, ops in sorted((spec.get("paths") or {}).items()):
            shared = ops.get("parameters", []) if isinstance(ops, dict) else []
            for method in METHODS:
                op = ops.get(method) if isinstance(ops, dict) else None
                if not isinstance(op, dict):
                    continue
                name = _tool_name(op, method, path)
                if name in seen:
                    continue
                seen.add(name)
                summary, details = _text(op.get("summary")), _text(op.get("description"))
                description = summary if not details or details == summary else f"{summary}. {details}".lstrip(". ")
                props, required = {}, []
                for param in [*shared, *op.get("parameters", [])]:
                    if not isinstance(param, dict) or "name" not in param or param.get("in") == "header":
                        continue
                    kind = param.get("type") if isinstance(param.get("type"), str) else "object"
                    props[str(param["name"])] = {"type": kind, "description": _text(param.get("description"))}
                    if param.get("required"):
                        required.append(str(param["name"]))
                schema: dict[str, object] = {"type": "object", "properties": props}
                if required:
                    schema["required"] = sorted(set(required))
                tools.append({"name": name, "description": description, "inputSchema": schema})
        if not tools:
            continue
        info = spec.get("info") or {}
        about = _text(info.get("description")).split(". ")[0][:300] or _text(info.get("title"))
        source = f"{OPENAPI_LITE[0]}@{OPENAPI_LITE[1]}:specs/{rel}"
        cats.append({"server": server, "description": about, "source": source, "tools": tools})
        total += len(tools)
    return cats


def main(argv: list[str]) -> int:
    default = os.environ.get("QUIVER_BENCH_DATA", str(Path.home() / ".cache" / "quiver-bench"))
    target = Path(argv[1] if len(argv) > 1 else default)
    if not (CORPUS / "catalogs").is_dir():
        raise SystemExit(f"no corpus at {CORPUS}: set QUIVER_CORPUS")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        live = Tree(work, *LIVEMCPBENCH)
        reg = Tree(work, *MCP_REGISTRY)
        lite = Tree(work, *OPENAPI_LITE)
        lines = tasks(live, pool())
        cats = registry(reg)
        have = sum(len(c["tools"]) for c in cats)  # type: ignore[arg-type]
        cats += openapi(lite, DISTRACTORS - have)
    out = target / "catalogs-distractors"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json"):
        old.unlink()
    names = set()
    for cat in cats:
        name = str(cat["server"])
        if name in names:
            raise SystemExit(f"two distractor servers named {name}")
        names.add(name)
        (out / f"{name}.json").write_text(json.dumps(cat, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (target / "livemcpbench-tasks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sources = "\n".join(f"{repo}@{commit}" for repo, commit in (LIVEMCPBENCH, MCP_REGISTRY, OPENAPI_LITE))
    (target / "SOURCES").write_text(sources + "\n", encoding="utf-8")
    tools = sum(len(c["tools"]) for c in cats)  # type: ignore[arg-type]
    print(f"{target}: {len(lines)} tasks, {len(cats)} distractor servers, {tools} distractor tools")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
