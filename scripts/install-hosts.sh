#!/usr/bin/env bash
# Install the real hosts the host recordings were made with, at pinned versions, into DIR:
#
#   scripts/install-hosts.sh DIR          then DIR/node_modules/.bin/{claude,copilot}
#
# Claude Code @anthropic-ai/claude-code@2.1.332 and Copilot CLI @github/copilot@1.0.102 (each ships its
# native binary as an optional per-platform package), from the npm registry with `npm ci` on the committed
# scripts/hosts/package-lock.json, so npm checks every package against the integrity hash recorded there
# (taken from the registry when the lock was made):
#   @anthropic-ai/claude-code@2.1.332            sha512-tvSh6bLvEbd97APD31AnojOrRC3AmcRj5R8sF8QIQitu3x2ucOb1kKmTkGDw41kjva+CGJfpkt+wYouk6yv56Q==
#   @anthropic-ai/claude-code-linux-x64@2.1.332  sha512-f4JWhzwYutJIHScC7/dYOPX6s28tt7ZADhsOi8zwOHq5fFPEuUeChh2NMfinSg0GrUckYxaeebC4h0DqiKzLcw==
#   @github/copilot@1.0.102                      sha512-mv6cTWMhMILxg5ZDgqJ6UsnpPuySCPWOPbZVaO8lL0dpmjY3VD9ZhJr6DFcG7fhUXZv6OmvLdcRCa5MJ6hBI+Q==
#   @github/copilot-linux-x64@1.0.102            sha512-eGHPbsP0p2QgfVZCjtbGBFZPBOJQ0DN7xIbBRAo7oG8b1zfLirQIdfI4h8Iy68Dv2cKJGJZg2/EO7W7KpIMJOw==
# (the other platforms' hashes are in the lock). Both are proprietary: they are installed here to be run
# against a loopback endpoint (bench/_host_recorder.py), never committed or redistributed.
# Plain `npm install @anthropic-ai/claude-code` picked 2.1.197 from a stale range: keep the exact pins.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:?usage: scripts/install-hosts.sh DIR}"
mkdir -p "$dir"
cp "$here/hosts/package.json" "$here/hosts/package-lock.json" "$dir/"
cd "$dir"
npm ci --no-audit --no-fund --loglevel=error
# Claude Code's postinstall copies the platform binary over bin/claude.exe; where npm did not run it, do.
if [ "$(wc -c < node_modules/@anthropic-ai/claude-code/bin/claude.exe)" -lt 1000000 ]; then
  (cd node_modules/@anthropic-ai/claude-code && node install.cjs)
fi
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
echo "claude:  $(HOME="$home" node_modules/.bin/claude --version)"
echo "copilot: $(HOME="$home" COPILOT_OFFLINE=true node_modules/.bin/copilot --version | head -1)"
node -e '
const lock = require("./package-lock.json");
for (const [path, p] of Object.entries(lock.packages)) {
  if (path && p.integrity && (!p.optional || require("fs").existsSync(path))) {
    console.log(`${path.replace(/^node_modules\//, "")}@${p.version}  ${p.integrity}`);
  }
}'
