#!/usr/bin/env bash
# BLEU by source-sentence length for no attention, soft attention and variational attention (enumerated): reuses
# the models of experiments/nmt-table1.sh when they exist, trains the missing ones, and prints a markdown table with
# one row per length bucket (also OUT/table.md). See usage() for the options.
set -euo pipefail
SCRIPT=nmt-length
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VARIANTS="none soft var-enum"

usage() {
  cat <<EOF
usage: experiments/nmt-length.sh [--quick] [--data DIR] [--out DIR] [--models DIR] [--buckets B1,B2,...]
                                 [--threads N] [--minutes M | --steps N] [--limit N] [--beam B] [--seed S] [-- TRAIN ARGS]

Decodes the test split of DIR (default data/gettext-de-en) with the models for --attn $VARIANTS and
prints corpus BLEU per source-length bucket (lava eval --length-buckets) as a markdown table (also OUT/table.md;
default OUT runs/nmt-length-quick or runs/nmt-length-full).

  --models DIR   take MODEL files DIR/ATTN.safetensors from here when present (default: the models directory of
                 runs/nmt-table1-quick or runs/nmt-table1-full); missing ones are trained into OUT/models with
                 nmt-table1.sh's settings for the same mode
  --buckets B    inclusive upper ends of the source-length buckets (default 5,10,20: 1-5, 6-10, 11-20, 21+)
  --quick        nmt-table1.sh --quick's model settings; test on the first 1000 sentences, beam 2
  (default)      the paper's settings; the whole test set, beam 10
  --minutes M    training time per variant when one must be trained (quick: 1; full: 0 = no limit)
  --steps N      a budget of N updates instead (no time limit unless --minutes is also given)
  --limit N      test sentences (0 = all), --beam B beam size, --threads N OpenMP threads, --seed S seed
  -- ARGS        extra lava train options for variants trained here (each replaces the default of the same name)
EOF
}

quick=0 data=$REPO/data/gettext-de-en out="" models="" buckets=5,10,20 threads="" minutes="" limit="" beam=""
seed=1 steps="" minutes_given=0 user_train_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --data) data=${2:?--data needs a directory}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --models) models=${2:?--models needs a directory}; shift ;;
    --buckets) buckets=${2:?--buckets needs a list}; shift ;;
    --threads) threads=${2:?--threads needs a number}; shift ;;
    --minutes) minutes=${2:?--minutes needs a number} minutes_given=1; shift ;;
    --steps) steps=${2:?--steps needs a number}; shift ;;
    --limit) limit=${2:?--limit needs a number}; shift ;;
    --beam) beam=${2:?--beam needs a number}; shift ;;
    --seed) seed=${2:?--seed needs a number}; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; user_train_args=("$@"); break ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
  shift
done

require_lava
ensure_corpus "$data"
if [ "$quick" = 1 ]; then
  mode=quick
  : "${minutes:=1}" "${limit:=1000}" "${beam:=2}"
  read -ra train_args <<<"$(quick_train_args)"
else
  mode=full
  : "${minutes:=0}" "${limit:=0}" "${beam:=10}"
  read -ra train_args <<<"$(full_train_args)"
fi
# --steps: a step budget instead of a time budget, so that the models (and the table) do not depend on the load.
if [ -n "$steps" ]; then
  train_args+=(--max-steps "$steps")
  [ "$minutes_given" = 1 ] || minutes=0
fi
with_overrides train_args "${user_train_args[@]}"
out=${out:-$REPO/runs/nmt-length-$mode}
models=${models:-$REPO/runs/nmt-table1-$mode/models}
mkdir -p "$out/models" "$out/logs"
pin_lava "$out"
corpus=$data
if [ "$quick" = 1 ]; then
  corpus=$out/corpus
  quick_corpus_view "$data" "$corpus" 500
fi
log "$mode run, output in $out"

for attn in $VARIANTS; do
  prefix=$out/logs/$attn model=$models/$attn.safetensors
  t0=$SECONDS
  if [ -f "$model" ]; then
    how="reused $model"
  else
    model=$out/models/$attn.safetensors
    train_variant "$attn" "$corpus" "$model" "$prefix" "$minutes" "$threads" "$seed" 0 "${train_args[@]}"
    how="trained $(fmt_duration $((SECONDS - t0))) ($(json_get "$(last_line_with "$prefix.train.jsonl" \
      '"event":"done"')" steps) steps)"
  fi
  t1=$SECONDS
  eval_variant "$model" "$corpus" "$prefix" "$limit" "$beam" "$threads" --length-buckets "$buckets"
  log "$(printf '%-9s' "$attn") $how, decoded $(fmt_duration $((SECONDS - t1))):" \
    "bleu $(fmt_num "$(json_get "$(eval_row "$prefix.eval.jsonl")" bleu)" %.2f)  [elapsed $(elapsed)]"
done

# One row per bucket: the bucket lines come in the same order for every model, over the same sentences.
read -r first _ <<<"$VARIANTS"
mapfile -t first_buckets < <(grep -F '"event":"bleu_bucket"' "$out/logs/$first.eval.jsonl")
{
  printf '| Source length | Sentences |'
  # shellcheck disable=SC2016  # the backquotes are markdown
  for attn in $VARIANTS; do printf ' BLEU `%s` |' "$attn"; done
  printf '\n|---|--:|'
  for attn in $VARIANTS; do printf -- '--:|'; done
  printf '\n'
  for i in "${!first_buckets[@]}"; do
    b=${first_buckets[$i]}
    lo=$(json_get "$b" min_len) hi=$(json_get "$b" max_len)
    lo=$((lo < 1 ? 1 : lo))
    if [ "$hi" = null ]; then range="$lo+"; else range="$lo–$hi"; fi
    printf '| %s | %s |' "$range" "$(json_get "$b" sentences)"
    for attn in $VARIANTS; do
      line=$(grep -F '"event":"bleu_bucket"' "$out/logs/$attn.eval.jsonl" | sed -n "$((i + 1))p")
      [ "$(json_get "$line" sentences)" = "$(json_get "$b" sentences)" ] ||
        die "bucket $range holds different sentences for $attn and $first (different test sets?)"
      printf ' %s |' "$(fmt_num "$(json_get "$line" bleu)" %.2f)"
    done
    printf '\n'
  done
  total=0
  for b in "${first_buckets[@]}"; do total=$((total + $(json_get "$b" sentences))); done
  printf '| all | %s |' "$total"
  for attn in $VARIANTS; do printf ' %s |' "$(fmt_num "$(json_get "$(eval_row "$out/logs/$attn.eval.jsonl")" bleu)" %.2f)"; done
  printf '\n\n'
  echo "Corpus BLEU (multi-bleu formula) of beam-$beam decoding on the test split of $data" \
    "($([ "$limit" = 0 ] && echo "all" || echo "the first $limit") sentences, corpus order), by source length in tokens." \
    "Mode $mode; models from $models where present, else $out/models."
} >"$out/table.md"
cat "$out/table.md"
log "done in $(elapsed); table in $out/table.md"
