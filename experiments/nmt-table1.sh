#!/usr/bin/env bash
# The paper's Table 1 (translation half) on the Debian gettext German-English corpus: trains every attention variant
# from every seed, evaluates each on test (exact PPL, ELBO, KL, KL gap, prior entropy, token accuracy, beam-search
# BLEU) and prints a markdown table with mean ± sd over seeds and the paper's figures beside them, also written to
# OUT/table.md. See usage() for the options.
set -euo pipefail
SCRIPT=nmt-table1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Table 1's rows in the paper's order, then Table 3's inference alternatives; `none` (no attention) on request.
TABLE1_VARIANTS="soft marginal hard-enum hard-sample var-dirichlet var-enum var-sample var-gumbel var-rws"
KNOWN_VARIANTS="none $TABLE1_VARIANTS"
# The rows the paper's claims rest on get several seeds in the converged mode.
MAIN_VARIANTS="soft marginal var-enum"

usage() {
  cat <<EOF
usage: experiments/nmt-table1.sh [--quick | --paper] [--out DIR] [--threads N] [--jobs N] [--seed S] [--main-seed S]
                                 [--data DIR] [--minutes M | --steps N] [--variants "V1 V2 ..."] [--limit N]
                                 [--beam B] [--reuse] [-- TRAIN ARGS]

Trains every --attn variant ($TABLE1_VARIANTS;
also: none) on DIR (default data/gettext-de-en, built with lava data gettext if missing) from every seed, evaluates
each on the test split with --bleu and prints the paper's Table 1 layout as markdown, with mean ± sd over seeds and
the paper's figure beside each row, and a table of where and why each run stopped (OUT/table.md; one JSON line per
run in OUT/table.jsonl). Models, JSON logs, progress logs, the settings and a copy of the lava binary used stay in
OUT (default runs/nmt-table1-MODE).

  (default)      converged: every run trains until the validation bound stops improving (learning rate halved at
                 each epoch end from epoch 2 on without a better bound, stop after 2 in a row, at most 30 epochs),
                 on every ${CONVERGED_TRAIN_EVERY}th training pair up to 20 tokens, vocabulary 4000, emb 64, hidden 128,
                 attention and inference network 64, batch 32, lr 3e-3, dropout 0.2, init ±0.3; validation on the
                 whole valid split; test on the whole test set with beam 10. Seeds 1-3 for
                 $MAIN_VARIANTS, seed 1 for the rest. Budgets are epochs and patience, never minutes,
                 so the table does not depend on the machine's load. Resumable: always --reuse
  --quick        a smoke test of about 15 minutes on 2 idle cores: emb 64, hidden 128, vocabulary 4000, pairs up to
                 30 tokens, batch 16, lr 3e-3, no dropout, 1 minute of training per variant, validation on the first
                 500 valid pairs, test on the first 500 test sentences with beam 2; nothing in it is converged
  --paper        the paper's appendix settings (2-layer LSTMs, 512/768, batch 6, Adam 3e-4, 30 epochs), beam 10,
                 the whole test set: days of CPU time per variant; use --minutes or --steps to bound each variant
  --out DIR      output folder
  --threads N    OpenMP threads per lava run (default: all cores; results do not depend on it)
  --jobs N       runs at a time (default 1)
  --seed S       seeds: 1, "1 2 3", 1,2,3 or 1-3 (default 1); the table gives mean ± sd over them
  --main-seed S  seeds for $MAIN_VARIANTS (default: converged 1-3, otherwise --seed)
  --minutes M    training time per run in minutes (quick: 1; otherwise 0 = no limit)
  --steps N      a budget of N updates per run instead (then no time limit unless --minutes is also given):
                 the models and the table no longer depend on the machine's load
  --variants L   only these variants, in this order (space separated)
  --limit N      test sentences to evaluate (0 = all; quick: 500)
  --beam B       beam size for BLEU (quick: 2; otherwise 10)
  --table-only   train nothing: the tables from the runs finished so far (a missing figure reads "–")
  --reuse        keep models already trained in OUT (a run whose train log has its "done" line), continue stopped
                 runs from their resume state, and keep evaluations newer than their model (converged: always)
  -- ARGS        extra lava train options for every run; each replaces the default of the same name
                 (give the time budget with --minutes, not --max-minutes)
EOF
}

SCRIPT_OPTIONS="data= minutes= steps= variants= limit= beam= reuse paper main-seed= table-only"
parse_args "$@"
data=${OPT_data:-$REPO/data/gettext-de-en} steps=${OPT_steps:-}
minutes=${OPT_minutes:-} limit=${OPT_limit:-} beam=${OPT_beam:-} reuse=${OPT_reuse:-0}
JOBS=${JOBS:-1}
[ "$QUICK" = 1 ] && [ "${OPT_paper:-0}" = 1 ] && usage_error "--quick and --paper exclude each other"
if [ -n "${OPT_main_seed:-}" ]; then
  main_seeds=$(expand_seeds "$OPT_main_seed") ||
    usage_error "--main-seed needs seeds such as 1, \"1 2 3\" or 1-3, not '$OPT_main_seed'"
fi
if [ "$QUICK" = 1 ]; then
  mode=quick
elif [ "${OPT_paper:-0}" = 1 ]; then
  mode=paper
else
  mode=converged
fi
if [ "$mode" = quick ]; then
  variants=${OPT_variants:-none $TABLE1_VARIANTS}
else
  variants=${OPT_variants:-$TABLE1_VARIANTS}
fi
check_variants "$variants" "$KNOWN_VARIANTS"
seeds=${SEEDS:-1}
if [ -z "${main_seeds:-}" ]; then
  if [ "$mode" = converged ] && [ -z "$SEEDS" ]; then main_seeds="1 2 3"; else main_seeds=$seeds; fi
fi
# seeds_of VARIANT: the seeds its row is trained from.
seeds_of() { if [[ " $MAIN_VARIANTS " == *" $1 "* ]]; then echo "$main_seeds"; else echo "$seeds"; fi; }

# --table-only reads files and runs nothing, so it leaves the pinned binary and the corpus view alone: another
# invocation may be training into the same folder with them.
table_only=${OPT_table_only:-0}
if ((!table_only)); then
  require_lava
  ensure_corpus "$data"
fi
case $mode in
  quick)
    : "${minutes:=1}" "${limit:=500}" "${beam:=2}"
    read -ra train_args <<<"$(quick_train_args)" ;;
  paper)
    : "${minutes:=0}" "${limit:=0}" "${beam:=10}"
    read -ra train_args <<<"$(full_train_args)" ;;
  converged)
    : "${minutes:=0}" "${limit:=0}" "${beam:=10}"
    reuse=1
    read -ra train_args <<<"$(converged_train_args)" ;;
esac
out=${OUT:-$REPO/runs/nmt-table1-$mode}
mkdir -p "$out/models" "$out/logs"
((table_only)) || pin_lava "$out"
corpus=$data
case $mode in
  quick) corpus=$out/corpus; ((table_only)) || quick_corpus_view "$data" "$corpus" 500 ;;
  converged)
    corpus=$out/corpus
    ((table_only)) || quick_corpus_view "$data" "$corpus" "$CONVERGED_VALID_PAIRS" "$CONVERGED_TRAIN_EVERY" ;;
esac
# --steps: a step budget instead of a time budget, so that the models (and the table) do not depend on the load.
if [ -n "$steps" ]; then
  train_args+=(--max-steps "$steps")
  [ -n "${OPT_minutes:-}" ] || minutes=0
fi
with_overrides train_args "${EXTRA_ARGS[@]}"
# Updates an epoch, for the relaxed row's warm start (two epochs): training pairs within --max-len over the batch.
updates_per_epoch() {
  local max_len=20 batch=32 i
  for ((i = 0; i + 1 < ${#train_args[@]}; i++)); do
    case ${train_args[i]} in --max-len) max_len=${train_args[i + 1]} ;; --batch-size) batch=${train_args[i + 1]} ;; esac
  done
  paste -d '\t' "$corpus/train.de" "$corpus/train.en" | awk -F '\t' -v m="$max_len" -v b="$batch" '
    { if (split($1, s, " ") <= m && split($2, t, " ") <= m) n++ } END { printf "%d", (n + b - 1) / b }'
}
per_epoch=0
((table_only)) || per_epoch=$(updates_per_epoch)
# settings.txt describes the run that trains (paper-tables.sh reads its seeds): --table-only keeps the one there.
[[ $table_only == 1 && -f $out/settings.txt ]] || {
  echo "mode: $mode"
  echo "data: $data (training and evaluation read $corpus)"
  echo "lava train options: ${train_args[*]} --max-minutes $minutes --seed SEED"
  for attn in $variants; do
    extra=$(variant_train_args "$attn" "$per_epoch")
    echo "  --attn $attn: seeds $(seeds_of "$attn")${extra:+, plus $extra}"
  done
  echo "lava eval options: --split test --limit $limit --bleu --beam $beam"
  echo "threads: ${THREADS:-all}, jobs: $JOBS, OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
} >"$out/settings.txt"
((table_only)) || log "$mode run, $JOBS at a time, output in $out (settings in $out/settings.txt)"

# run_one VARIANT SEED: trains and evaluates one model into OUT/models and OUT/logs (named VARIANT-sSEED). With
# --reuse, an evaluation newer than its model is kept.
run_one() {
  local attn=$1 seed=$2 t0=$SECONDS
  local prefix=$out/logs/$attn-s$seed model=$out/models/$attn-s$seed.safetensors extra
  read -ra extra <<<"$(variant_train_args "$attn" "$per_epoch")"
  train_variant "$attn" "$corpus" "$model" "$prefix" "$minutes" "$THREADS" "$seed" "$reuse" "${train_args[@]}" \
    "${extra[@]}"
  local t1=$SECONDS
  if ! { [ "$reuse" = 1 ] && [ "$prefix.eval.jsonl" -nt "$model" ] && [ -n "$(eval_row "$prefix.eval.jsonl")" ]; }; then
    eval_variant "$model" "$corpus" "$prefix" "$limit" "$beam" "$THREADS"
  fi
  local row done_line
  row=$(eval_row "$prefix.eval.jsonl")
  done_line=$(last_line_with "$prefix.train.jsonl" '"event":"done"')
  log "$(printf '%-13s' "$attn") seed $seed: train $(fmt_duration $((t1 - t0)))" \
    "($(json_get "$done_line" steps) steps, stopped by $(json_get "$done_line" stop))," \
    "eval $(fmt_duration $((SECONDS - t1))): ppl $(fmt_num "$(json_get "$row" ppl)" %.2f)" \
    "bleu $(fmt_num "$(json_get "$row" bleu)" %.2f)  [elapsed $(elapsed)]"
}
# Seed-major: every row gets its first seed before any row gets its second, so a table stopped half way is whole;
# within a seed the rows the paper's claims rest on go first.
all_seeds=$(for attn in $variants; do seeds_of "$attn"; done | tr ' ' '\n' | awk 'NF && !seen[$1]++')
((table_only)) && all_seeds=""
run_order=$(for attn in $variants; do [[ " $MAIN_VARIANTS " == *" $attn "* ]] && echo "$attn"; done
  for attn in $variants; do [[ " $MAIN_VARIANTS " == *" $attn "* ]] || echo "$attn"; done)
for seed in $all_seeds; do
  for attn in $run_order; do
    [[ " $(seeds_of "$attn") " == *" $seed "* ]] && pool_run run_one "$attn" "$seed"
  done
done
pool_wait || die "a run failed (see the messages above)"

# cell ATTN KEY FORMAT [train]: mean ± sd of KEY over the seeds' test rows (or their training "done" lines).
# shellcheck disable=SC2046  # one word per seed
cell() {
  seed_cell "$3" "$out/logs/$1-s" "$([ "${4:-}" = train ] && echo train || echo eval).jsonl" "$2" $(seeds_of "$1")
}

# The table: the paper's Table 1 rows and columns (Model, Objective, E, PPL, BLEU), then the figures LAVA adds.
{
  echo "| Model | Objective | E | \`--attn\` | PPL | paper PPL | BLEU | paper BLEU | ELBO | KL | KL gap |" \
    "Prior entropy | Token acc. | Train time | Steps |"
  echo "|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
  for attn in $variants; do
    nan=""
    for seed in $(seeds_of "$attn"); do
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
  echo "Where and why each run stopped (patience: 2 epoch ends in a row without a better validation bound; epochs:"
  echo "the whole --epochs budget; max-steps / max-minutes: a budget of updates or minutes, so not converged; a run"
  echo "not finished shows its last validation):"
  echo
  echo "| \`--attn\` | seed | epochs | updates | stopped by | best epoch | best valid PPL | train time |"
  echo "|---|--:|--:|--:|---|--:|--:|--:|"
  for attn in $variants; do
    for seed in $(seeds_of "$attn"); do
      f=$out/logs/$attn-s$seed.train.jsonl
      d=$(last_line_with "$f" '"event":"done"')
      stop=$(json_get "$d" stop)
      if [ -z "$d" ]; then  # not finished: how far it got (its last validation), or not started
        d=$(last_line_with "$f" '"event":"epoch"')
        stop=$([ -n "$d" ] && echo "not finished" || echo "not started")
      fi
      echo "| \`$attn\` | $seed | $(json_get "$d" epoch)$(json_get "$d" epochs) | $(json_get "$d" steps) | $stop |" \
        "$(fmt_num "$(json_get "$d" best_epoch)" %.4g) | $(fmt_num "$(json_get "$d" valid_ppl)" %.2f) |" \
        "$(fmt_duration "$(json_get "$d" seconds)") |"
    done
  done
  echo
  read -r first _ <<<"$variants"
  first_seed=$(seeds_of "$first" | cut -d' ' -f1)
  tokens=$(json_get "$(eval_row "$out/logs/$first-s$first_seed.eval.jsonl")" tokens)
  sentences=$([ "$limit" = 0 ] && echo "all" || echo "the first $limit")
  echo "Test split of $data: $sentences sentences ($tokens target tokens, </s> included as scored by lava eval)," \
    "beam $beam; mean ± sd over the seeds in the runs table. PPL is the exact marginal under the prior;" \
    "ELBO, KL = KL(q‖p) and KL gap = log p − ELBO are nats per target token (variants without q: ELBO at q = p)." \
    "The paper's figures are IWSLT14 with BPE at the paper's model size (src/method.md §6): compare orderings," \
    "not values. Train time (mean over seeds) includes the validations. Mode $mode; settings in" \
    "$out/settings.txt."
} >"$out/table.md"
# One JSON line per run: its test figures (lava eval's row), and where and why it stopped.
for attn in $variants; do
  for seed in $(seeds_of "$attn"); do
    d=$(last_line_with "$out/logs/$attn-s$seed.train.jsonl" '"event":"done"')
    printf '{"task":"nmt","mode":"%s","seed":%s,"epochs":%s,"steps":%s,"stop":"%s","best_epoch":%s,"train_seconds":%s,%s
'       "$mode" "$seed" "$(json_get "$d" epochs)" "$(json_get "$d" steps)" "$(json_get "$d" stop)"       "$(json_get "$d" best_epoch)" "$(json_get "$d" seconds)" "$(eval_row "$out/logs/$attn-s$seed.eval.jsonl" | sed 's/^{//')"
  done
done >"$out/table.jsonl"
cat "$out/table.md"
log "done in $(elapsed); table in $out/table.md"
