#!/usr/bin/env bash
# The support size over training of sparse runs: one markdown row per validation ("epoch" line) of each
# metrics.jsonl given (a sweep run's, or lava train --format json's output): updates, the mean support per target
# word over the epoch's training batches and on the validation split, and the validation PPL.
# usage: experiments/results/sparse/support-curve.sh METRICS.jsonl...
set -euo pipefail
if [ $# -lt 1 ]; then echo "usage: $0 METRICS.jsonl..." >&2; exit 2; fi
# json_get LINE KEY: KEY's value in one JSON line (strings unquoted), or nothing.
json_get() {
  local v
  v=$(printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2-) || true
  v=${v#\"}
  printf '%s' "${v%\"}"
}
# fmt_num VALUE FORMAT: VALUE in the printf FORMAT, or – when it is missing or not a number.
fmt_num() {
  case "$1" in
    "" | null | nan | NaN | -nan) printf '–' ;;
    *) awk -v v="$1" -v f="$2" 'BEGIN { printf f, v }' ;;
  esac
}
echo "| run | attn | epoch | updates | train support | valid support | valid PPL |"
echo "|---|---|--:|--:|--:|--:|--:|"
for f in "$@"; do
  run=$(basename "$(dirname "$f")")
  grep -F '"event":"epoch"' "$f" | while IFS= read -r line; do
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$run" "$(json_get "$line" attn)" "$(json_get "$line" epoch)" \
      "$(json_get "$line" steps)" "$(fmt_num "$(json_get "$line" support)" %.2f)" \
      "$(fmt_num "$(json_get "$line" valid_support)" %.2f)" "$(fmt_num "$(json_get "$line" valid_ppl)" %.2f)"
  done
done
