#!/usr/bin/env bash
# Install quiver for the Action. QUIVER_INSTALL: "source" (the default) = this action's own copy of quiver
# (its checkout at a tag or commit, or a vendored copy); "pinned" = agent-quiver at this action's own version
# (read from the action's pyproject.toml) from the package index, once it is published there; anything else =
# a pip requirement. `install.sh --requirement` prints what would be installed. Lint and diff
# need no extra: this is the light install (no MCP SDK, numpy or model; README, "What each install brings").
set -euo pipefail

action_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$(command -v python3 || command -v python || true)"
if [ -z "$python" ]; then
  echo "::error title=quiver::no python3 on PATH: quiver needs Python 3.11 or later (set the python-version input)"
  exit 2
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  found="$("$python" -c 'import platform; print(platform.python_version())')"
  echo "::error title=quiver::quiver needs Python 3.11 or later, found $found (set the python-version input)"
  exit 2
fi

requirement() {
  case "${QUIVER_INSTALL:-source}" in
    pinned)
      version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_dir/pyproject.toml" | head -n 1)"
      if [ -z "$version" ]; then
        echo "cannot read this action's version from $action_dir/pyproject.toml" >&2
        exit 2
      fi
      echo "agent-quiver==$version"
      ;;
    source) echo "$action_dir" ;;
    *) echo "$QUIVER_INSTALL" ;;
  esac
}

req="$(requirement)"
if [ "${1:-}" = "--requirement" ]; then
  echo "$req"
  exit 0
fi
echo "installing $req"
"$python" -m pip install --quiet "$req"
