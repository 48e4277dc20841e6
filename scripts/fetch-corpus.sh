#!/usr/bin/env bash
# Rebuild the public test corpus (what ../shared/corpus holds) from its public repositories at pinned
# commits, then check every file against scripts/corpus.sha256.
#
#   scripts/fetch-corpus.sh [DIR]        default: $QUIVER_CORPUS, else ../shared/corpus
#   scripts/fetch-corpus.sh DIR --from OLD   also copy the hand-extracted files from an existing corpus
#
# The tests find the corpus through QUIVER_CORPUS (default ../shared/corpus, see tests/conftest.py).
#
# Rebuilt from the pinned sources, byte for byte:
#   awesome-copilot/agents/   github/awesome-copilot@ab7544d03d4c49fdd07f5958e1888ad39c4118e2, every
#                             second file of agents/*.agent.md in byte order (112 of 224), and LICENSE
#   github-mcp-server/v0.20.0, v0.30.0   github/github-mcp-server@ff98fc46... (v0.20.0) and
#                             @0caa2654... (v0.30.0): pkg/github/__toolsnaps__/*.snap, and LICENSE
#   catalogs-livemcpbench/    icip-cas/LiveMCPBench@a928e57d...:tools/LiveMCPTool/tools.json, one file per
#                             server (the servers also in catalogs/, and puppeteer, left out)
# Not derivable by a script: catalogs/*.json (tool lists read out of each server's source code at the
# commit its `source` field names) and queries-dev.jsonl (benchmark labels); pass --from to copy them
# from a corpus you have, and the checksums prove they are the same files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target="${1:-${QUIVER_CORPUS:-$here/../../shared/corpus}}"
from=""
if [ "${2:-}" = "--from" ]; then from="${3:?--from needs a directory}"; fi
url="${CORPUS_GIT_URL:-https://github.com/%s.git}"  # printf template: owner/name -> clone URL
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

checkout() {  # checkout OWNER/NAME COMMIT -> a work tree at that commit, printed
  local dir="$work/${1//\//+}-$2"
  if [ ! -d "$dir" ]; then
    git init -q "$dir"
    # shellcheck disable=SC2059
    git -C "$dir" fetch -q --depth 1 "$(printf "$url" "$1")" "$2"
    git -C "$dir" checkout -q FETCH_HEAD
  fi
  echo "$dir"
}

mkdir -p "$target/awesome-copilot/agents" "$target/github-mcp-server" "$target/catalogs-livemcpbench"

src="$(checkout github/awesome-copilot ab7544d03d4c49fdd07f5958e1888ad39c4118e2)"
cp "$src/LICENSE" "$target/awesome-copilot/LICENSE"
(cd "$src/agents" && LC_ALL=C ls -1 -- *.agent.md | awk 'NR % 2 == 1') | while read -r name; do
  cp "$src/agents/$name" "$target/awesome-copilot/agents/$name"
done

for pin in v0.20.0:ff98fc4615a1a13b3ba727e6190734eb721a3310 v0.30.0:0caa26546fdef3fcda4c6ea2a005e771a46ff661; do
  src="$(checkout github/github-mcp-server "${pin#*:}")"
  mkdir -p "$target/github-mcp-server/${pin%%:*}"
  cp "$src"/pkg/github/__toolsnaps__/*.snap "$target/github-mcp-server/${pin%%:*}/"
  cp "$src/LICENSE" "$target/github-mcp-server/LICENSE"
done

src="$(checkout icip-cas/LiveMCPBench a928e57d1ee7a25579b9a7036030faffff72d15b)"
python3 - "$src/tools/LiveMCPTool/tools.json" "$target/catalogs-livemcpbench" <<'PY'
import json, re, sys
from pathlib import Path

SOURCE = "icip-cas/LiveMCPBench@a928e57d1ee7a25579b9a7036030faffff72d15b:tools/LiveMCPTool/tools.json"
SKIP = {"sequential-thinking", "time", "playwright", "memory", "fetch", "git", "filesystem", "puppeteer"}
out = Path(sys.argv[2])
for entry in json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")):
    for key, listed in entry["tools"].items():
        name = re.sub(r"[\s_]+", "-", key.strip()).lower()
        if name in SKIP:
            continue
        tools = []
        for tool in listed["tools"]:
            item = {"name": tool["name"], "description": tool.get("description") or ""}
            if "inputSchema" in tool:
                item["inputSchema"] = tool["inputSchema"]
            tools.append(item)
        doc = {
            "server": name,
            "description": entry["description"].split("\n")[0],
            "source": f"{SOURCE} (tools/list dump of {entry['web']})",
            "extraction": "tools/list output recorded by the LiveMCPBench authors by running the server; copied verbatim",
            "tools": tools,
        }
        (out / f"{name}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
PY

if [ -n "$from" ]; then
  mkdir -p "$target/catalogs"
  cp "$from"/catalogs/*.json "$target/catalogs/"
  cp "$from/queries-dev.jsonl" "$target/queries-dev.jsonl"
fi

cd "$target"
if sha256sum --quiet -c "$here/corpus.sha256"; then
  echo "corpus complete and verified at $target"
else
  echo "corpus at $target differs from scripts/corpus.sha256 (missing files: pass --from DIR for catalogs/ and queries-dev.jsonl)" >&2
  exit 1
fi
