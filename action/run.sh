#!/usr/bin/env bash
# The GitHub Action's work: lint and contract diff against the PR base. Annotations on changed lines only
# (with a note when GitHub's cap of 10 per kind drops some); markdown reports appended to
# $GITHUB_STEP_SUMMARY; SARIF reports written for upload; outputs findings, report, sarif. The exit code
# counts findings on changed lines only unless QUIVER_FAIL_ON_UNCHANGED=true: 1 on findings at or above
# $QUIVER_FAIL_ON, 2 on an input error.
set -uo pipefail

project="${QUIVER_PROJECT:-.}"
fail_on="${QUIVER_FAIL_ON:-error}"
base="${QUIVER_BASE:-}"
if [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
  git -C "$project" fetch --quiet --depth=1 origin "$GITHUB_BASE_REF" 2>/dev/null || true
  base="origin/$GITHUB_BASE_REF"
fi
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
outputs="${GITHUB_OUTPUT:-/dev/null}"
out_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/quiver"
mkdir -p "$out_dir/sarif"
report="$out_dir/report.md"
: > "$report"
part=$(mktemp)
annotations=$(mktemp)
trap 'rm -f "$part" "$annotations"' EXIT
status=0

record() {  # keep the worst exit code: 2 (input error) beats 1 (findings) beats 0
  local code=$1
  if [ "$code" -gt "$status" ]; then status=$code; fi
}

annotate() {  # run one quiver command in github format; echo it (notes on stderr too) and keep the exit code
  "$@" >"$annotations" 2>&1
  local code=$?
  cat "$annotations"
  grep '^quiver: ' "$annotations" | sed 's/^quiver: /> **Note:** /' >> "$report"
  if [ "$code" -eq 2 ] || [ "${QUIVER_FAIL_ON_UNCHANGED:-false}" != "true" ]; then record "$code"; fi
}

whole() {  # the exit code of a whole-project run (fail-on-unchanged); its notes were shown by annotate
  if [ "${QUIVER_FAIL_ON_UNCHANGED:-false}" = "true" ]; then "$@" >/dev/null 2>&1; record $?; fi
}

base_args=()
[ -n "$base" ] && base_args=(--base "$base")

annotate quiver lint --project "$project" --format github --changed-only "${base_args[@]}" --fail-on "$fail_on"
whole quiver lint --project "$project" --format json --fail-on "$fail_on"
quiver lint --project "$project" --format markdown --fail-on never --output "$part" && cat "$part" >> "$report"
quiver lint --project "$project" --format sarif --fail-on never --output "$out_dir/sarif/lint.sarif"

# Always diffed: a side without the lock file (the pull request that adds it, or removes it) is an empty
# catalog, so every tool is added (info) or removed (error); with no lock on either side quiver says
# "nothing to compare" in a note, which lands in the report.
# QUIVER_CATALOGS (one path per line) diffs those catalogs at the base against the working tree instead.
diff_base=()
[ -n "$base" ] && diff_base=("$base")
while IFS= read -r catalog; do
  catalog="$(printf '%s' "$catalog" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')"
  [ -n "$catalog" ] && diff_base+=(--catalog "$catalog")
done <<< "${QUIVER_CATALOGS:-}"
annotate quiver diff "${diff_base[@]}" --project "$project" --format github --changed-only --fail-on "$fail_on"
whole quiver diff "${diff_base[@]}" --project "$project" --format json --fail-on "$fail_on"
quiver diff "${diff_base[@]}" --project "$project" --format markdown --fail-on never --output "$part" 2>/dev/null \
  && cat "$part" >> "$report"
quiver diff "${diff_base[@]}" --project "$project" --format sarif --fail-on never \
  --output "$out_dir/sarif/diff.sarif" 2>/dev/null

findings=$(python3 - "$out_dir/sarif" <<'PY'
import json, pathlib, sys
total = 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.sarif")):
    total += sum(len(run.get("results", [])) for run in json.loads(path.read_text(encoding="utf-8"))["runs"])
print(total)
PY
)
cat "$report" >> "$summary"
{
  echo "findings=${findings:-0}"
  echo "report=$report"
  echo "sarif=$out_dir/sarif"
} >> "$outputs"
exit "$status"
