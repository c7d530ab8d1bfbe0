#!/usr/bin/env bash
# BLEU by source-sentence length: runs the sweep nmt-length.ini beside this file (lava sweep run; finished runs and
# evaluations are kept, so a second call only prints), then prints one markdown row per length bucket and one
# column per model from the runs' RUN/eval/length.jsonl (lava eval's "bleu_bucket" lines), also into OUT/table.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lava=${LAVA:-$here/../../build/lava}
file=$here/nmt-length.ini
# GNU OpenMP spin-waits between parallel regions by default; on a shared machine a spinning thread steals the core
# another process needs. A short spin before sleeping still catches the next of a step's many small regions.
export OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-20000}

usage() {
  cat <<USAGE
usage: experiments/studies/nmt-length.sh [--scale quick|full] [--set KEY=VALUE]... [--jobs N] [--threads T]

Trains --attn none, soft and var-enum as experiments/studies/nmt-length.ini says at the scale (default quick;
run experiments/paper/prepare-data.sh nmt-demo first), decodes the test split with lava eval --length-buckets
and prints corpus BLEU per source-length bucket. --set, --jobs (default 1) and --threads are lava sweep's.
USAGE
}
sweep_args=() jobs=1 threads=()
while (($#)); do
  case $1 in
    --scale | --set | --jobs | --threads)
      (($# >= 2)) || { echo "nmt-length.sh: $1 needs a value; see --help" >&2; exit 2; }
      case $1 in
        --jobs) jobs=$2 ;;
        --threads) threads=(--threads "$2") ;;
        *) sweep_args+=("$1" "$2") ;;
      esac
      shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "nmt-length.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
[ -x "$lava" ] || { echo "nmt-length.sh: $lava not found; build it with make build/lava" >&2; exit 1; }

"$lava" sweep run "$file" "${sweep_args[@]}" --jobs "$jobs" "${threads[@]}" >&2

# field LINE KEY: KEY's value in one flat JSON line of lava's (strings unquoted; lava's JSON lines are flat and their
# strings hold no commas or braces).
field() { sed -nE "s/.*\"$2\":\"?([^,\"}]*).*/\1/p" <<<"$1"; }
# bleu LINE: its BLEU to 2 decimals, "–" when it has none.
bleu() { local v; v=$(field "$1" bleu); [[ $v =~ ^[0-9.eE+-]+$ ]] && printf '%.2f' "$v" || printf '–'; }
runs=() attns=()
while IFS= read -r line; do
  attns+=("$(field "$line" attn)") runs+=("$(field "$line" dir)")
done < <("$lava" sweep plan "$file" "${sweep_args[@]}" --format json)
out=$(dirname "${runs[0]}")
{
  printf '| Source length | Sentences |'
  # shellcheck disable=SC2016  # the backquotes are markdown
  for a in "${attns[@]}"; do printf ' BLEU `%s` |' "$a"; done
  printf '\n|---|--:|%s\n' "$(printf -- '--:|%.0s' "${attns[@]}")"
  mapfile -t first < <(grep -F '"event":"bleu_bucket"' "${runs[0]}/eval/length.jsonl")
  for i in "${!first[@]}"; do
    lo=$(field "${first[i]}" min_len) hi=$(field "${first[i]}" max_len) n=$(field "${first[i]}" sentences)
    ((lo >= 1)) || lo=1
    [ "$hi" = null ] && printf '| %s+ | %s |' "$lo" "$n" || printf '| %s–%s | %s |' "$lo" "$hi" "$n"
    for r in "${runs[@]}"; do
      b=$(grep -F '"event":"bleu_bucket"' "$r/eval/length.jsonl" | sed -n "$((i + 1))p")
      [ "$(field "$b" sentences)" = "$n" ] || { echo "nmt-length.sh: $r/eval/length.jsonl: bucket $((i + 1)) holds" \
        "other sentences than ${runs[0]}'s (another test set?)" >&2; exit 1; }
      printf ' %s |' "$(bleu "$b")"
    done
    printf '\n'
  done
  total=0
  for b in "${first[@]}"; do total=$((total + $(field "$b" sentences))); done
  printf '| all | %s |' "$total"
  for r in "${runs[@]}"; do printf ' %s |' "$(bleu "$(grep -v '"event"' "$r/eval/length.jsonl" | tail -n 1)")"; done
  printf '\n\nCorpus BLEU (multi-bleu formula) on the test split, by source length in tokens: %s, %s.\n' \
    "$(basename "$file")" "$out"
} | tee "$out/table.md"
