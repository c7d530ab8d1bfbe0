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
usage: experiments/nmt-length.sh [--quick] [--out DIR] [--threads N] [--jobs N] [--seed S] [--data DIR]
                                 [--models DIR] [--buckets B1,B2,...] [--minutes M | --steps N] [--limit N]
                                 [--beam B] [-- TRAIN ARGS]

Decodes the test split of DIR (default data/gettext-de-en) with the models for --attn $VARIANTS and
prints corpus BLEU per source-length bucket (lava eval --length-buckets) as a markdown table (also OUT/table.md;
default OUT runs/nmt-length-quick or runs/nmt-length-full).

  --models DIR   take MODEL files DIR/ATTN-sSEED.safetensors from here when present (default: the models folder of
                 runs/nmt-table1-quick or runs/nmt-table1-full); missing ones are trained into OUT/models with
                 nmt-table1.sh's settings for the same mode
  --buckets B    inclusive upper ends of the source-length buckets (default 5,10,20: 1-5, 6-10, 11-20, 21+)
  --quick        nmt-table1.sh --quick's model settings; test on the first 1000 sentences, beam 2
  (default)      the paper's settings; the whole test set, beam 10
  --minutes M    training time per variant when one must be trained (quick: 1; full: 0 = no limit)
  --steps N      a budget of N updates instead (no time limit unless --minutes is also given)
  --limit N      test sentences (0 = all), --beam B beam size, --threads N OpenMP threads, --seed S seed,
                 --jobs N models decoded at a time (default 1)
  -- ARGS        extra lava train options for variants trained here (each replaces the default of the same name)
EOF
}

SCRIPT_OPTIONS="data= models= buckets= minutes= steps= limit= beam="
parse_args "$@"
quick=$QUICK data=${OPT_data:-$REPO/data/gettext-de-en} models=${OPT_models:-} buckets=${OPT_buckets:-5,10,20}
threads=$THREADS minutes=${OPT_minutes:-} limit=${OPT_limit:-} beam=${OPT_beam:-} seed=${SEEDS:-1}
steps=${OPT_steps:-} JOBS=${JOBS:-1}
[[ $seed != *" "* ]] || usage_error "--seed takes one seed here"

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
  [ -n "${OPT_minutes:-}" ] || minutes=0
fi
with_overrides train_args "${EXTRA_ARGS[@]}"
out=${OUT:-$REPO/runs/nmt-length-$mode}
models=${models:-$REPO/runs/nmt-table1-$mode/models}
mkdir -p "$out/models" "$out/logs"
pin_lava "$out"
corpus=$data
if [ "$quick" = 1 ]; then
  corpus=$out/corpus
  quick_corpus_view "$data" "$corpus" 500
fi
log "$mode run, output in $out"

# decode_one VARIANT: reuses or trains the model, then decodes the test split by length bucket.
decode_one() {
  local attn=$1 prefix=$out/logs/$1 model=$models/$1-s$seed.safetensors how t0=$SECONDS
  if [ -f "$model" ]; then
    how="reused $model"
  else
    model=$out/models/$attn-s$seed.safetensors
    train_variant "$attn" "$corpus" "$model" "$prefix" "$minutes" "$threads" "$seed" 0 "${train_args[@]}"
    how="trained $(fmt_duration $((SECONDS - t0))) ($(json_get "$(last_line_with "$prefix.train.jsonl" \
      '"event":"done"')" steps) steps)"
  fi
  local t1=$SECONDS
  eval_variant "$model" "$corpus" "$prefix" "$limit" "$beam" "$threads" --length-buckets "$buckets"
  log "$(printf '%-9s' "$attn") $how, decoded $(fmt_duration $((SECONDS - t1))):" \
    "bleu $(fmt_num "$(json_get "$(eval_row "$prefix.eval.jsonl")" bleu)" %.2f)  [elapsed $(elapsed)]"
}
for attn in $VARIANTS; do pool_run decode_one "$attn"; done
pool_wait || die "a run failed (see the messages above)"

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
