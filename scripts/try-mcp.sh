#!/usr/bin/env bash
# Run the whole suite against another release of the MCP SDK before admitting it (docs/decisions.md, "MCP SDK:
# private names and the version cap", issue 24).
#
#   scripts/try-mcp.sh VERSION        e.g. scripts/try-mcp.sh 2.4.0
#
# pyproject.toml caps `mcp` and `mcp-types` below the next minor release, because the gateway uses private
# SDK names (src/quiver/mcp_sdk.py). This copies the working tree to a temporary directory, lifts the
# cap there, installs `.[test]` with mcp==VERSION and mcp-types==VERSION into a fresh venv and runs
# `python -m pytest` (tests/runtime/test_sdk_private.py first, so a moved private name shows at once).
# Only when it passes, move the bound in pyproject.toml (to below VERSION's next minor) in its own commit,
# naming this run; when it fails, fix the adapter (or the caller) first and run it again.
set -euo pipefail
version="${1:?usage: scripts/try-mcp.sh VERSION}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
IFS=. read -r major minor _ <<<"$version"
next="$major.$((minor + 1))"

git -C "$root" ls-files -z --cached --others --exclude-standard | (cd "$root" && tar --null -T - -cf -) | tar -x -C "$work"
sed -i -E "s/\"(mcp|mcp-types)>=([0-9.]+),<[0-9.]+\"/\"\1>=\2,<$next\"/" "$work/pyproject.toml"
grep -E '"mcp(-types)?>=' "$work/pyproject.toml"
cd "$work"
python3 -m venv .venv
. .venv/bin/activate
pip install -q -e ".[test]" "mcp==$version" "mcp-types==$version"
pip list 2>/dev/null | grep -E '^mcp(-types)? '
export QUIVER_CORPUS="${QUIVER_CORPUS:-$root/../shared/corpus}"
python -m pytest -q tests/runtime/test_sdk_private.py
python -m pytest
echo "mcp $version: the suite passed; move the bound in pyproject.toml to <$next (mcp and mcp-types)"
