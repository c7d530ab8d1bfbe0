#!/usr/bin/env bash
# The paper's Table 1 (translation half) on the Debian gettext German-English corpus: trains every attention variant
# from every seed, evaluates each on test (exact PPL, ELBO, KL, KL gap, prior entropy, token accuracy, beam-search
# BLEU) and prints a markdown table with mean ± sd over seeds and the paper's figures beside them, also written to
# OUT/table.md. See usage() for the options.
set -euo pipefail
SCRIPT=nmt-table1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  cat <<EOF
usage: experiments/nmt-table1.sh [--quick] [--out DIR] [--threads N] [--jobs N] [--seed S] [--data DIR]
                                 [--minutes M | --steps N] [--variants "V1 V2 ..."] [--limit N] [--beam B]
                                 [--reuse] [-- TRAIN ARGS]

Trains every --attn variant ($ALL_VARIANTS)
on DIR (default data/gettext-de-en, built with lava data gettext if missing) from every seed, evaluates each on the
test split with --bleu and prints the paper's Table 1 layout as markdown (also OUT/table.md). Models, JSON logs,
progress logs, the settings and a copy of the lava binary used stay in OUT (default runs/nmt-table1-quick or
runs/nmt-table1-full).

  --quick        about 15 minutes on 2 idle cores: emb 64, hidden 128, vocabulary 4000, pairs up to 30 tokens,
                 batch 16, lr 3e-3, no dropout, 1 minute of training per variant, validation on the first 500
                 valid pairs, test on the first 500 test sentences (corpus order) with beam 2
  (default)      the paper's appendix settings (2-layer LSTMs, 512/768, batch 6, Adam 3e-4, 30 epochs), beam 10,
                 the whole test set: days of CPU time per variant; use --minutes or --steps to bound each variant
  --out DIR      output folder
  --threads N    OpenMP threads per lava run (default: all cores; results do not depend on it)
  --jobs N       runs at a time (default 1)
  --seed S       seeds: 1, "1 2 3", 1,2,3 or 1-3 (default 1); the table gives mean ± sd over them
  --minutes M    training time per run in minutes (quick: 1; full: 0 = no limit)
  --steps N      a budget of N updates per run instead (then no time limit unless --minutes is also given):
                 the models and the table no longer depend on the machine's load
  --variants L   only these variants, in this order (space separated)
  --limit N      test sentences to evaluate (0 = all; quick: 500)
  --beam B       beam size for BLEU (quick: 2; full: 10)
  --reuse        keep models already trained in OUT (a run whose train log has its "done" line)
  -- ARGS        extra lava train options for every run; each replaces the default of the same name
                 (give the time budget with --minutes, not --max-minutes)
EOF
}

SCRIPT_OPTIONS="data= minutes= steps= variants= limit= beam= reuse"
parse_args "$@"
data=${OPT_data:-$REPO/data/gettext-de-en} variants=${OPT_variants:-$ALL_VARIANTS} steps=${OPT_steps:-}
minutes=${OPT_minutes:-} limit=${OPT_limit:-} beam=${OPT_beam:-} reuse=${OPT_reuse:-0}
seeds=${SEEDS:-1} JOBS=${JOBS:-1}
check_variants "$variants" "$ALL_VARIANTS"

require_lava
ensure_corpus "$data"
if [ "$QUICK" = 1 ]; then
  mode=quick
  : "${minutes:=1}" "${limit:=500}" "${beam:=2}"
  read -ra train_args <<<"$(quick_train_args)"
else
  mode=full
  : "${minutes:=0}" "${limit:=0}" "${beam:=10}"
  read -ra train_args <<<"$(full_train_args)"
fi
out=${OUT:-$REPO/runs/nmt-table1-$mode}
mkdir -p "$out/models" "$out/logs"
pin_lava "$out"
corpus=$data
if [ "$QUICK" = 1 ]; then
  corpus=$out/corpus
  quick_corpus_view "$data" "$corpus" 500
fi
# --steps: a step budget instead of a time budget, so that the models (and the table) do not depend on the load.
if [ -n "$steps" ]; then
  train_args+=(--max-steps "$steps")
  [ -n "${OPT_minutes:-}" ] || minutes=0
fi
with_overrides train_args "${EXTRA_ARGS[@]}"
{
  echo "mode: $mode"
  echo "data: $data (training and evaluation read $corpus)"
  echo "lava train options: ${train_args[*]} --max-minutes $minutes --seed SEED (seeds: $seeds)"
  echo "lava eval options: --split test --limit $limit --bleu --beam $beam"
  echo "threads: ${THREADS:-all}, jobs: $JOBS, OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
} >"$out/settings.txt"
log "$mode run, seeds $seeds, $JOBS at a time, output in $out"

# run_one VARIANT SEED: trains and evaluates one model into OUT/models and OUT/logs (named VARIANT-sSEED).
run_one() {
  local attn=$1 seed=$2 t0=$SECONDS
  local prefix=$out/logs/$attn-s$seed model=$out/models/$attn-s$seed.safetensors
  train_variant "$attn" "$corpus" "$model" "$prefix" "$minutes" "$THREADS" "$seed" "$reuse" "${train_args[@]}"
  local t1=$SECONDS
  eval_variant "$model" "$corpus" "$prefix" "$limit" "$beam" "$THREADS"
  local row
  row=$(eval_row "$prefix.eval.jsonl")
  log "$(printf '%-11s' "$attn") seed $seed: train $(fmt_duration $((t1 - t0)))" \
    "($(json_get "$(last_line_with "$prefix.train.jsonl" '"event":"done"')" steps) steps)," \
    "eval $(fmt_duration $((SECONDS - t1))): ppl $(fmt_num "$(json_get "$row" ppl)" %.2f)" \
    "bleu $(fmt_num "$(json_get "$row" bleu)" %.2f)  [elapsed $(elapsed)]"
}
for attn in $variants; do
  for seed in $seeds; do pool_run run_one "$attn" "$seed"; done
done
pool_wait || die "a run failed (see the messages above)"

# figure ATTN KEY [train]: KEY of every seed's eval row (or of its training "done" line), one per line.
figure() {
  local seed
  for seed in $seeds; do
    if [ "${3:-}" = train ]; then
      json_get "$(last_line_with "$out/logs/$1-s$seed.train.jsonl" '"event":"done"')" "$2"
    else
      json_get "$(eval_row "$out/logs/$1-s$seed.eval.jsonl")" "$2"
    fi
    echo
  done
}
# cell ATTN KEY FORMAT [train]: mean ± sd of KEY over the seeds.
cell() {
  local values
  mapfile -t values < <(figure "$1" "$2" "${4:-}")
  mean_sd "$3" "${values[@]}"
}

# The table: the paper's Table 1 rows and columns (Model, Objective, E, PPL, BLEU), then the figures LAVA adds.
{
  echo "| Model | Objective | E | \`--attn\` | PPL | paper PPL | BLEU | paper BLEU | ELBO | KL | KL gap |" \
    "Prior entropy | Token acc. | Train time | Steps |"
  echo "|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
  for attn in $variants; do
    nan=""
    for seed in $seeds; do
      [ "$(json_get "$(last_line_with "$out/logs/$attn-s$seed.train.jsonl" '"event":"done"')" nan)" = true ] &&
        nan+=" (NaN in training, seed $seed)"
    done
    echo "| $(paper_row "$attn")$nan | \`$attn\` | $(cell "$attn" ppl %.2f) | $(paper_figure nmt "$attn" ppl) |" \
      "$(cell "$attn" bleu %.2f) | $(paper_figure nmt "$attn" bleu) | $(cell "$attn" elbo %.3f) |" \
      "$(cell "$attn" kl %.3f) | $(cell "$attn" kl_gap %.4f) | $(cell "$attn" entropy %.2f) |" \
      "$(cell "$attn" accuracy %.3f) | $(fmt_duration "$(cell "$attn" seconds %.0f train | cut -d' ' -f1)") |" \
      "$(cell "$attn" steps %.0f train) |"
  done
  echo
  read -r first _ <<<"$variants"
  read -r first_seed _ <<<"$seeds"
  tokens=$(json_get "$(eval_row "$out/logs/$first-s$first_seed.eval.jsonl")" tokens)
  sentences=$([ "$limit" = 0 ] && echo "all" || echo "the first $limit")
  echo "Test split of $data: $sentences sentences ($tokens target tokens, </s> included as scored by lava eval)," \
    "beam $beam; seeds $seeds (mean ± sd where there are several). PPL is the exact marginal under the prior;" \
    "ELBO, KL = KL(q‖p) and KL gap = log p − ELBO are nats per target token (variants without q: ELBO at q = p)." \
    "The paper's figures are IWSLT14 with BPE at the paper's model size (paper-notes §2): compare orderings," \
    "not values. Train time (mean over seeds) includes the final validation. Mode $mode; settings in" \
    "$out/settings.txt."
} >"$out/table.md"
cat "$out/table.md"
log "done in $(elapsed); table in $out/table.md"
