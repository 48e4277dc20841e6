#!/usr/bin/env bash
# The GitHub Action's work: lint and contract diff against the PR base; annotations on changed lines
# only; markdown reports appended to $GITHUB_STEP_SUMMARY; uploads nothing. Exit 1 on findings at or
# above $QUIVER_FAIL_ON, 2 on an input error.
set -uo pipefail

project="${QUIVER_PROJECT:-.}"
fail_on="${QUIVER_FAIL_ON:-error}"
base="${QUIVER_BASE:-}"
if [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
  git -C "$project" fetch --quiet --depth=1 origin "$GITHUB_BASE_REF" 2>/dev/null || true
  base="origin/$GITHUB_BASE_REF"
fi
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
report=$(mktemp)
trap 'rm -f "$report"' EXIT
status=0

record() {  # keep the worst exit code: 2 (input error) beats 1 (findings) beats 0
  local code=$1
  if [ "$code" -gt "$status" ]; then status=$code; fi
}

base_args=()
[ -n "$base" ] && base_args=(--base "$base")

quiver lint --project "$project" --format github --changed-only "${base_args[@]}" --fail-on "$fail_on"
record $?
quiver lint --project "$project" --format markdown --fail-on never --output "$report" && cat "$report" >> "$summary"

if [ -f "$project/quiver.lock.json" ]; then
  diff_base=()
  [ -n "$base" ] && diff_base=("$base")
  quiver diff "${diff_base[@]}" --project "$project" --format github --changed-only --fail-on "$fail_on"
  record $?
  quiver diff "${diff_base[@]}" --project "$project" --format markdown --fail-on never --output "$report" \
    && cat "$report" >> "$summary"
fi
exit "$status"
