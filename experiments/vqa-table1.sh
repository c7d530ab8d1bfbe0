#!/usr/bin/env bash
# The paper's Table 1 (VQA half: NLL and answer accuracy) on the Fashion-MNIST scenes of `lava data scenes`: trains
# every attention variant, evaluates it on the test split and prints a markdown table in the paper's row layout with
# the ELBO, the KL gap (log p − ELBO; for var-* it equals KL(q ‖ exact posterior)), the prior's entropy, how often
# the prior's and the exact posterior's argmax is the annotated region (single-region questions; chance 1/9) and the
# training time added. Also written to OUT/table.md.
#
#   experiments/vqa-table1.sh [--quick]
#
# --quick: 10k/1k/2k scenes (50k/5k/10k questions), 4 epochs per variant, cut at 4 minutes on a busy machine (then
#          the epochs column shows a fraction and the figures depend on the load); about 15 minutes on 2 cores.
# (full):  50k/5k/10k scenes (250k/25k/50k questions), up to 30 epochs with early stopping (patience 4); hours.
# Variants train JOBS at a time with THREADS OpenMP threads each (default 2 x 1: on these small matrices two
# single-thread runs get about twice the work done of one two-thread run), so "train time" is wall time on a
# shared machine. OUT = runs/vqa-table1-quick or runs/vqa-table1: data/, models/, logs/, table.md, a copy of the
# lava binary, and plots/<variant>/ (learning curves and validation questions; test/ the test questions).
# Environment: LAVA (default build/lava), JOBS (2), THREADS (1), VARIANTS (default: the eight below).
# A variant whose model and test evaluation already exist in OUT is not trained again (delete them to redo it).
set -euo pipefail
# shellcheck disable=SC2034  # used by lib.sh's messages
SCRIPT=vqa-table1
# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # LAVA, OMP_WAIT_POLICY=passive, pin_lava, json_get, fmt_num, ...

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: experiments/vqa-table1.sh [--quick]" >&2; exit 2 ;;
esac
JOBS=${JOBS:-2}
THREADS=${THREADS:-1}
VARIANTS=${VARIANTS:-"soft marginal hard-enum hard-sample var-enum var-sample var-gumbel var-rws"}

if ((quick)); then
  OUT=$REPO/runs/vqa-table1-quick
  SCENES=(--train 10000 --valid 1000 --test 2000)
  TRAIN=(--epochs 4 --max-minutes 4)
else
  OUT=$REPO/runs/vqa-table1
  SCENES=(--train 50000 --valid 5000 --test 10000)
  TRAIN=(--epochs 30 --patience 4)
fi
mkdir -p "$OUT/models" "$OUT/plots" "$OUT/logs"
pin_lava "$OUT"

if [[ ! -f $OUT/data/meta.tsv ]]; then
  log "building scenes in $OUT/data"
  "$LAVA" data scenes --out "$OUT/data" "${SCENES[@]}" --seed 1 >&2 || die "lava data scenes failed"
fi

# Trains and evaluates one variant (defaults of lava train --task vqa otherwise); a failure is reported and leaves
# the variant out of the table.
run_variant() {
  local v=$1 model=$OUT/models/$1.safetensors logs=$OUT/logs/$1 extra=()
  [[ $v == var-gumbel ]] && extra=(--temperature 0.1)  # the authors' va.sh; at 1 the relaxed z leaks the answer
  log "$v: training ($(elapsed))"
  if ! "$LAVA" train --task vqa --data "$OUT/data" --attn "$v" --save "$model" --plot "$OUT/plots/$v" \
      --threads "$THREADS" --seed 1 --format json "${TRAIN[@]}" "${extra[@]}" >"$logs.train.jsonl" \
      2>"$logs.train.log" ||
    ! "$LAVA" eval --task vqa --data "$OUT/data" --model "$model" --split test --plot "$OUT/plots/$v/test" \
      --threads "$THREADS" --format json -q >"$logs.eval.jsonl" 2>"$logs.eval.log"; then
    log "$v: FAILED (see $logs.train.log and $logs.eval.log)"
    rm -f "$logs.eval.jsonl"
    return 0
  fi
  log "$v: done ($(elapsed)): test accuracy $(json_get "$(eval_row "$logs.eval.jsonl")" accuracy)"
}

running=0
for v in $VARIANTS; do
  if [[ -f $OUT/models/$v.safetensors && -n $(eval_row "$OUT/logs/$v.eval.jsonl") ]]; then continue; fi
  run_variant "$v" &
  if ((++running >= JOBS)); then
    wait -n || true
    ((running--)) || true
  fi
done
wait

# The paper's row names (Table 1), and the two inference alternatives of its Table 3.
row_name() {
  case $1 in
    soft) echo "Soft Attention | log p(y\|E[z]) | –" ;;
    marginal) echo "Marginal Likelihood | log E[p] | Enum" ;;
    hard-enum) echo "Hard Attention | E_p[log p] | Enum" ;;
    hard-sample) echo "Hard Attention | E_p[log p] | Sample" ;;
    var-enum) echo "Variational Attention | E_q[log p] − KL | Enum" ;;
    var-sample) echo "Variational Attention | E_q[log p] − KL | Sample" ;;
    var-gumbel) echo "Variational (Gumbel-softmax, τ = 0.1) | E_q[log p] − KL | Relaxed" ;;
    var-rws) echo "Variational (RWS, K = 5) | self-normalised IS | Sample" ;;
    *) echo "$1 | | " ;;
  esac
}

meta_figure() { awk -F'\t' -v k="$1" '$1 == k { printf "%.1f%%", 100 * $2 }' "$OUT/data/meta.tsv"; }

{
  echo "VQA-style Table 1 on Fashion-MNIST scenes: $(grep -vc '^#' "$OUT/data/test.questions.tsv") test questions" \
    "($( ((quick)) && echo "--quick" || echo "full") run)."
  echo "NLL: the exact marginal −log Σ_i p(z=i) f_i(y) per question (direct for soft). Acc: answer accuracy (%); the"
  echo "paper's VQA Eval column is the VQA score, which needs several annotators' answers that scenes do not have."
  echo "−ELBO: q = p for the variants without q (the Jensen bound). Region acc: share of single-region questions"
  echo "whose argmax is the annotated region (chance 0.111)."
  echo
  echo "| Model | Objective | E | NLL | Acc | −ELBO | KL gap | H(prior) | region acc prior | region acc posterior |" \
    "epochs | train time |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for v in $VARIANTS; do
    e=$(eval_row "$OUT/logs/$v.eval.jsonl")
    [[ -n $e ]] || { echo "| $(row_name "$v") | failed | | | | | | | | |"; continue; }
    t=$(last_line_with "$OUT/logs/$v.train.jsonl" '"event":"done"')
    last=$(last_line_with "$OUT/logs/$v.train.jsonl" '"event":"epoch"')
    elbo=$(json_get "$e" elbo)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(row_name "$v")" \
      "$(fmt_num "$(json_get "$e" nll)" %.3f)" \
      "$(awk -v a="$(json_get "$e" accuracy)" 'BEGIN { printf "%.2f", 100 * a }')" \
      "$(case $elbo in null | "") echo –;; *) awk -v x="$elbo" 'BEGIN { printf "%.3f", -x }';; esac)" \
      "$(fmt_num "$(json_get "$e" kl_gap)" %.4f)" "$(fmt_num "$(json_get "$e" entropy)" %.2f)" \
      "$(fmt_num "$(json_get "$e" region_acc_prior)" %.3f)" "$(fmt_num "$(json_get "$e" region_acc_posterior)" %.3f)" \
      "$(fmt_num "$(json_get "$last" epoch)" %.2f)" "$(fmt_duration "$(json_get "$t" seconds)")"
  done
  echo
  echo "Answer-only baselines on the test split (meta.tsv): majority answer $(meta_figure test_majority_accuracy)," \
    "question-only oracle $(meta_figure test_question_only_oracle)."
} | tee "$OUT/table.md"
