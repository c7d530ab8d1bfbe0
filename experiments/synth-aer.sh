#!/usr/bin/env bash
# Alignment error rate on the synthetic task (lava data synth): trains soft attention, the exact marginal
# likelihood, enumerated variational attention (with and without the warm start) and the sparse latent alignments
# (sparsemax or 1.5-entmax p, or q) for the same number of updates per seed, scores the argmax alignments of the
# prior, the exact posterior and q against the gold links of the test split, and prints markdown tables, per run and
# mean ± sd over the seeds (also OUT/table.md). See usage() for the options.
set -euo pipefail
# shellcheck disable=SC2034  # used by lib.sh's messages
SCRIPT=synth-aer
# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  cat <<EOF
usage: experiments/synth-aer.sh [--quick] [--out DIR] [--threads N] [--jobs N] [--seed S] [--steps N]
                                [--warm-start N] [--score mlp|general|dot] [--only "LABELS"] [--reuse] [-- TRAIN ARGS]

Generates the synthetic translation task (lava data synth, default options) into OUT/data, trains
  soft               soft attention
  marginal           the exact marginal likelihood, enumerated
  var-enum+warm      var-enum after --warm-start N updates (p and f on the exact marginal, q on the ELBO)
  var-enum           var-enum from the first update
  sparse-marginal    p = sparsemax of the scores, the exact marginal over its support
  sparse-marginal-1.5  the same with p = 1.5-entmax (--alpha 1.5)
  var-sparse         q = sparsemax, softmax prior, the exact ELBO over q's support
  var-sparse-1.5     the same with q = 1.5-entmax (--alpha 1.5)
for --steps updates each and every seed, then prints the test perplexity, the mean support size per target word
(sparse variants: of p, or of q for var-sparse) and the alignment error rate of the argmax alignments of the prior,
the exact posterior and q on the test split (lava eval --gold-align) as markdown tables (OUT/table.md): one row a
run, then mean ± sd over the seeds.
One link per target word makes 0.0010 the lowest AER possible on the default task.

  --out DIR        work directory (default runs/synth-aer, --quick: runs/synth-aer-quick)
  --threads N      OpenMP threads per run (results do not depend on it)
  --jobs N         runs at a time (default 1)
  --seed S         training seeds: 1, "1 2 3", 1,2,3 or 1-3 (default 1-3; --quick: 1)
  --steps N        updates per run (default 3125 = 5 epochs; --quick: 2000)
  --warm-start N   warm-start updates of var-enum+warm (default 1875; --quick: 1500)
  --score S        prior scorer (default dot)
  --only LABELS    run only these labels, e.g. "soft marginal" (the table shows the runs found in OUT)
  --reuse          keep models of an earlier run in OUT that finished (same settings are not checked)
  -- ARGS          extra lava train options (each replaces the default of the same name), e.g.
                   -- --encoder embedding (a context-free memory; see experiments/results/paper-tables/README.md)
EOF
}

SCRIPT_OPTIONS="steps= warm-start= score= only= reuse"
parse_args "$@"
steps=${OPT_steps:-} warm=${OPT_warm_start:-} score=${OPT_score:-dot} reuse=${OPT_reuse:-0} JOBS=${JOBS:-1}
if [ "$QUICK" = 1 ]; then
  mode=quick
  seeds=${SEEDS:-1}
  : "${steps:=2000}" "${warm:=1500}"
else
  mode=full
  seeds=${SEEDS:-1 2 3}
  : "${steps:=3125}" "${warm:=1875}"
fi
[ "$warm" -lt "$steps" ] || die "--warm-start ($warm) must be below --steps ($steps) for var-enum to train on the ELBO"
out=${OUT:-$REPO/runs/synth-aer$([ "$QUICK" = 1 ] && echo -quick)}
mkdir -p "$out/models" "$out/logs"
pin_lava "$out"
"$LAVA" train --help 2>/dev/null | grep -q -- --warm-start || die "$LAVA has no lava train --warm-start; rebuild it"

# The model sizes of the alignment runs on the synthetic task (experiments/results/paper-tables/README.md).
train_args=(--emb-size 64 --hidden-size 128 --attn-size 64 --inf-hidden 64 --score "$score" --max-steps "$steps")
with_overrides train_args "${EXTRA_ARGS[@]}"

data=$out/data
if [ ! -f "$data/test.align" ]; then
  run_lava "$out/logs/data.out" "$out/logs/data.log" data synth --out "$data"
fi
log "$mode run, seeds $seeds, $steps updates each, output in $out"

# RUNS: "label attn extra-option extra-value" (the warm start and the sparse variants' alpha are the per-run options).
runs=("soft soft" "marginal marginal" "var-enum+warm var-enum --warm-start $warm" "var-enum var-enum"
  "sparse-marginal sparse-marginal" "sparse-marginal-1.5 sparse-marginal --alpha 1.5"
  "var-sparse var-sparse" "var-sparse-1.5 var-sparse --alpha 1.5")
# run_one LABEL ATTN SEED [EXTRA...]: trains and evaluates one run into OUT/models and OUT/logs.
run_one() {
  local label=$1 attn=$2 seed=$3 t0=$SECONDS
  shift 3
  local prefix=$out/logs/$label-seed$seed model=$out/models/$label-seed$seed.safetensors
  train_variant "$attn" "$data" "$model" "$prefix" 0 "$THREADS" "$seed" "$reuse" "${train_args[@]}" "$@"
  local eval_args=(eval --model "$model" --data "$data" --split test --gold-align "$data/test.align" --format json)
  [ -n "$THREADS" ] && eval_args+=(--threads "$THREADS")
  run_lava "$prefix.eval.jsonl" "$prefix.eval.log" "${eval_args[@]}"
  [ -n "$(eval_row "$prefix.eval.jsonl")" ] || die "lava eval printed no result row (see $prefix.eval.jsonl)"
  log "$(printf '%-13s' "$label-seed$seed") $(fmt_duration $((SECONDS - t0)))  [elapsed $(elapsed)]"
}
for seed in $seeds; do
  for run in "${runs[@]}"; do
    read -r label attn extra <<<"$run"
    if [ -n "${OPT_only:-}" ] && [[ " $OPT_only " != *" $label "* ]]; then continue; fi
    read -ra extra <<<"${extra:-}"
    pool_run run_one "$label" "$attn" "$seed" "${extra[@]}"
  done
done
pool_wait || die "a run failed (see the messages above)"

rows=() summary=()
for run in "${runs[@]}"; do
  read -r label _ <<<"$run"
  prefix=$out/logs/$label-seed
  found=()
  for seed in $seeds; do
    row=$(eval_row "$prefix$seed.eval.jsonl")
    [ -n "$row" ] || continue
    found+=("$seed")
    done_line=$(last_line_with "$prefix$seed.train.jsonl" '"event":"done"')
    rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' "$label" "$seed" \
      "$(json_get "$done_line" steps)" "$(fmt_duration "$(json_get "$done_line" seconds)")" \
      "$(fmt_num "$(json_get "$done_line" valid_ppl)" %.3f)" "$(fmt_num "$(json_get "$row" ppl)" %.3f)" \
      "$(fmt_num "$(json_get "$row" support)" %.2f)" "$(fmt_num "$(json_get "$row" aer_prior)" %.4f)" \
      "$(fmt_num "$(json_get "$row" aer_posterior)" %.4f)" "$(fmt_num "$(json_get "$row" aer_q)" %.4f)")")
  done
  ((${#found[@]})) || continue
  cell() { seed_cell "$1" "$prefix" eval.jsonl "$2" "${found[@]}"; }
  summary+=("$(printf '| %s | %s | %s | %s | %s | %s | %s |' "$label" "${#found[@]}" "$(cell %.3f ppl)" \
    "$(cell %.2f support)" "$(cell %.4f aer_prior)" "$(cell %.4f aer_posterior)" "$(cell %.4f aer_q)")")
done

{
  echo "| variant | seed | updates | train time | valid ppl | test ppl | support | prior AER | posterior AER | q AER |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "| variant | seeds | test ppl | support | prior AER | posterior AER | q AER |"
  echo "|---|--:|--:|--:|--:|--:|--:|"
  printf '%s\n' "${summary[@]}"
  echo
  echo "Test split of lava data synth (500 sentences; 0.0010 is the lowest AER possible); mean ± sd (sample) over the" \
    "seeds. Each run: lava train --task nmt ${train_args[*]} --seed SEED; var-enum+warm adds --warm-start $warm," \
    "the -1.5 rows --alpha 1.5. AER of the argmax alignment of the prior p(z_j | x, y_<j), the exact posterior" \
    "p(z_j | x, y) and q (lava eval --gold-align); support: the mean number of source positions with non-zero" \
    "probability per target word, of p (sparse-marginal) or q (var-sparse), test split." \
    "Mode $mode; train time depends on the machine and its load."
} >"$out/table.md"
cat "$out/table.md"
log "done in $(elapsed); table in $out/table.md"
