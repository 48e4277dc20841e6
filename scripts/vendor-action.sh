#!/usr/bin/env bash
# Copy what the GitHub Action needs into DEST (a directory of the consuming repository, such as
# .github/actions/quiver), so a workflow can run it as `uses: ./.github/actions/quiver`: action.yml, its
# scripts, and quiver's source for its default `install: source`. Nothing else is copied: quiver's own
# examples and tests hold agent files that `quiver lint` would otherwise find in the consumer's repository.
# Usage: scripts/vendor-action.sh DEST
set -euo pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: scripts/vendor-action.sh DEST (for example ../my-repo/.github/actions/quiver)" >&2
  exit 2
fi
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$1"
if [ -e "$dest" ] && [ -n "$(ls -A "$dest")" ]; then
  echo "$dest is not empty: remove it first (the copy replaces it whole)" >&2
  exit 2
fi
mkdir -p "$dest"
for item in action.yml action pyproject.toml README.md LICENSE NOTICE; do
  if [ -e "$src/$item" ]; then cp -R "$src/$item" "$dest/$item"; fi
done
mkdir -p "$dest/src"
cp -R "$src/src/quiver" "$dest/src/quiver"
find "$dest/src" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +
echo "copied the quiver action to $dest; a workflow uses it as \`uses: ./PATH\`, PATH from the repository root"
