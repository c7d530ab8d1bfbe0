#!/usr/bin/env bash
# Show, Attend and Tell on the Fashion-MNIST scenes: trains the captioner with every attention variant from
# every seed, evaluates it on the test split and prints a markdown table: the exact per-word NLL (enumerated over the
# 9 regions; direct for soft) beside the training bound, BLEU-1 and BLEU-4 of beam-decoded captions against the
# references, and how often the attention's argmax at an item word is that item's region (chance 1/9); mean ± sd over
# seeds. Rows are named as in Xu et al. (2015) where the paper has them. Also written to OUT/table.md.
set -euo pipefail
# shellcheck disable=SC2034  # used by lib.sh's messages
SCRIPT=caption-table
# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CAPTION_VARIANTS="soft sat-hard marginal hard-enum hard-sample var-enum var-sample"

usage() {
  cat <<EOF
usage: experiments/caption-table.sh [--quick] [--out DIR] [--threads N] [--jobs N] [--seed S] [--variants "V1 ..."]

  --quick      2k/200/200 scenes (about 7k/700/700 reference captions), 8 epochs per run, cut at 4 minutes on a
               busy machine; about 15 minutes for one seed on 2 cores
  (default)    20k/2k/2k scenes, up to 30 epochs with early stopping (patience 4); about an hour per seed
  --out DIR    output folder (default runs/caption-table-quick or runs/caption-table): data/, models/, logs/,
               table.md and a copy of the lava binary
  --threads N  OpenMP threads per run (default 1; results do not depend on it)
  --jobs N     runs at a time (default 2)
  --seed S     seeds: 1, "1 2 3", 1,2,3 or 1-3 (default 1 2)
  --variants L the variants (default: $CAPTION_VARIANTS)
A run whose model and test evaluation already exist in OUT is not trained again (delete them to redo it).
EOF
}

SCRIPT_OPTIONS="variants="
parse_args "$@"
((${#EXTRA_ARGS[@]} == 0)) || usage_error "this script takes no extra lava train options"
variants=${OPT_variants:-$CAPTION_VARIANTS} seeds=${SEEDS:-1 2} JOBS=${JOBS:-2} THREADS=${THREADS:-1}
for v in $variants; do
  [[ " $CAPTION_VARIANTS " == *" $v "* ]] || usage_error "unknown variant '$v' (choose from: $CAPTION_VARIANTS)"
done

if ((QUICK)); then
  out=${OUT:-$REPO/runs/caption-table-quick}
  SCENES=(--train 2000 --valid 200 --test 200)
  TRAIN=(--epochs 8 --max-minutes 4)
else
  out=${OUT:-$REPO/runs/caption-table}
  SCENES=(--train 20000 --valid 2000 --test 2000)
  TRAIN=(--epochs 30 --patience 4)
fi
mkdir -p "$out/models" "$out/logs"
pin_lava "$out"

if [[ ! -f $out/data/meta.tsv ]]; then
  log "building scenes in $out/data"
  "$LAVA" data scenes --out "$out/data" "${SCENES[@]}" --seed 1 >&2 || die "lava data scenes failed"
fi

# run_one VARIANT SEED: trains and evaluates one model (defaults of lava train --task caption otherwise).
run_one() {
  local v=$1 seed=$2 name=$1-s$2
  local model=$out/models/$name.safetensors logs=$out/logs/$name
  if [[ -f $model && -n $(eval_row "$logs.eval.jsonl") ]]; then return 0; fi
  log "$name: training ($(elapsed))"
  if ! "$LAVA" train --task caption --data "$out/data" --attn "$v" --save "$model" --threads "$THREADS" \
      --seed "$seed" --format json "${TRAIN[@]}" >"$logs.train.jsonl" 2>"$logs.train.log" ||
    ! "$LAVA" eval --task caption --data "$out/data" --model "$model" --split test --threads "$THREADS" \
      --format json -q >"$logs.eval.jsonl" 2>"$logs.eval.log"; then
    log "$name: FAILED (see $logs.train.log and $logs.eval.log)"
    rm -f "$logs.eval.jsonl"
    return 0
  fi
  log "$name: done ($(elapsed)): test nll $(json_get "$(eval_row "$logs.eval.jsonl")" nll)"
}
for v in $variants; do
  for seed in $seeds; do pool_run run_one "$v" "$seed"; done
done
pool_wait || die "a run failed (see the messages above)"

# cell VARIANT KEY FORMAT: mean ± sd over the seeds of KEY in the eval rows.
# shellcheck disable=SC2086  # one word per seed
cell() { seed_cell "$3" "$out/logs/$1-s" eval.jsonl "$2" $seeds; }
# train_cell VARIANT KEY EVENT FORMAT: the same for the last training line of EVENT.
train_cell() {
  local seed values=()
  for seed in $seeds; do
    values+=("$(json_get "$(last_line_with "$out/logs/$1-s$seed.train.jsonl" "\"event\":\"$3\"")" "$2")")
  done
  mean_sd "$4" "${values[@]}"
}
# nan_runs VARIANT: how many seeds' training stopped on a NaN.
nan_runs() {
  local seed n=0
  for seed in $seeds; do
    if grep -q '"nan":true' "$out/logs/$1-s$seed.train.jsonl" 2>/dev/null; then n=$((n + 1)); fi
  done
  echo "$n"
}
finished() {
  local seed ok=0 all=0
  for seed in $seeds; do
    all=$((all + 1))
    if [[ -n $(eval_row "$out/logs/$1-s$seed.eval.jsonl") ]]; then ok=$((ok + 1)); fi
  done
  echo "$ok/$all"
}
paper_row() {
  case $1 in
    soft) echo "Soft-Attention (Xu et al. 2015) | soft" ;;
    sat-hard) echo "Hard-Attention (Xu et al. 2015) | sat-hard" ;;
    marginal) echo "Exact marginal (LAVA) | marginal" ;;
    hard-enum) echo "Hard attention, enumerated Jensen bound (LAVA) | hard-enum" ;;
    hard-sample) echo "Hard attention, REINFORCE with the soft baseline (LAVA) | hard-sample" ;;
    var-enum) echo "Variational attention, enumerated (LAVA) | var-enum" ;;
    var-sample) echo "Variational attention, REINFORCE (LAVA) | var-sample" ;;
  esac
}

{
  echo "Captioning on Fashion-MNIST scenes: $(grep -vc '^#' "$out/data/test.captions.tsv") test scenes" \
    "($( ((QUICK)) && echo "--quick" || echo "full") run; seeds $seeds, mean ± sd)."
  echo "NLL: exact −log p(y|a) per word, Σ_t log Σ_i α_ti f(y_t|i) enumerated over the 9 regions (direct for soft)."
  echo "−bound: the training bound per word (Jensen for hard-* and sat-hard, ELBO for var-*). BLEU: beam 5 against all"
  echo "references. Attn acc: share of reference item words whose attention argmax is the item's region (chance 0.111)."
  echo
  echo "| Model | --attn | NLL | −bound | BLEU-1 | BLEU-4 | attn acc | epochs | train time | NaN runs | seeds ok |"
  echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
  for v in $variants; do
    echo "| $(paper_row "$v") | $(cell "$v" nll %.4f) | $(cell "$v" bound %.4f) | $(cell "$v" bleu1 %.1f) |" \
      "$(cell "$v" bleu4 %.1f) | $(cell "$v" attn_acc %.3f) | $(train_cell "$v" epoch epoch %.2f) |" \
      "$(fmt_duration "$(train_cell "$v" seconds done %.0f | cut -d' ' -f1)") | $(nan_runs "$v") | $(finished "$v") |"
  done
} | tee "$out/table.md"
