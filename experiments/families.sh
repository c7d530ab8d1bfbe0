#!/usr/bin/env bash
# The wider family next to soft and variational attention (Dirichlet, Gaussian-context, Bayesian and structured
# attention): trains var-dirichlet, gauss-ctx, bam-weibull, bam-lognormal, structured and sigmoid next to
# soft and var-enum on both tasks — translation and VQA — from several seeds, evaluates each on the test split and
# prints one markdown table (mean over the seeds that finished; a seed whose loss turned NaN counts as failed).
#
#   experiments/families.sh [--quick] [--out DIR] [--threads N] [--jobs N] [--seed S] [--variants "V1 ..."]
#
# Columns: NLL per token and how it is obtained (exact: enumerated marginal; direct: a deterministic attention;
# sampled: the importance-weighted estimate log 1/K Σ_k f(x,z_k) p(z_k)/q(z_k), K = 10 draws from q, a stochastic
# lower bound), −ELBO (KL weight 1, whatever weight training used), KL(q‖p), KL gap = log p − ELBO, the NLL of the
# deterministic predictor at the mean attention (the sampled variants; decoding and accuracy use it), and token or
# answer accuracy.
# --quick: translation on `lava data synth` (10k pairs, small model), VQA on 5k Fashion-MNIST scenes, seeds 1 and 2,
#          each run capped at 45 seconds of training (so the figures depend on the machine's load); about 15
#          minutes on 2 cores.
# (full):  translation on the gettext corpus (experiments/lib.sh quick model, 20 minutes per run), VQA on 20k scenes
#          (10 epochs), seeds 1 2 3; hours.
# Runs go --jobs at a time with --threads threads each (default 2 x 1). --out (default runs/families-quick or
# runs/families): data/, models/, logs/, table.md and the lava binary used. --seed: a list ("1 2", 1-3). A run whose
# test evaluation exists in OUT is not repeated (delete it to redo it).
set -euo pipefail
# shellcheck disable=SC2034  # used by lib.sh's messages
SCRIPT=families
# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # LAVA, OMP_WAIT_POLICY=passive, pin_lava, json_get, fmt_num, ...

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
ALL_FAMILY="soft var-enum var-dirichlet gauss-ctx bam-weibull bam-lognormal structured sigmoid"
SCRIPT_OPTIONS="variants="
parse_args "$@"
((${#EXTRA_ARGS[@]} == 0)) || usage_error "this script takes no extra lava train options"
quick=$QUICK JOBS=${JOBS:-2} THREADS=${THREADS:-1} VARIANTS=${OPT_variants:-$ALL_FAMILY}
check_variants "$VARIANTS" "$ALL_FAMILY"

if ((quick)); then
  OUT=${OUT:-$REPO/runs/families-quick}
  SEEDS=${SEEDS:-1 2}
  NMT_DATA=$OUT/data/synth
  NMT_ARGS="--emb-size 64 --hidden-size 128 --attn-size 64 --inf-hidden 64 --epochs 20 --max-minutes 0.75"
  SCENES=(--train 5000 --valid 500 --test 1000)
  VQA_ARGS="--epochs 20 --max-minutes 0.75"
else
  OUT=${OUT:-$REPO/runs/families}
  SEEDS=${SEEDS:-1 2 3}
  NMT_DATA=$REPO/data/gettext-de-en
  NMT_ARGS="$(quick_train_args) --epochs 20 --max-minutes 20"
  SCENES=(--train 20000 --valid 2000 --test 4000)
  VQA_ARGS="--epochs 10"
fi
mkdir -p "$OUT/models" "$OUT/logs" "$OUT/data"
pin_lava "$OUT"

if ((quick)); then
  [[ -f $NMT_DATA/train.de ]] || "$LAVA" data synth --out "$NMT_DATA" --train 10000 --valid 300 --test 500 \
    --seed 1 -q >&2 || die "lava data synth failed"
else
  ensure_corpus "$NMT_DATA"
fi
if [[ ! -f $OUT/data/scenes/meta.tsv ]]; then
  log "building scenes in $OUT/data/scenes"
  "$LAVA" data scenes --out "$OUT/data/scenes" "${SCENES[@]}" --seed 1 >&2 || die "lava data scenes failed"
fi

# run TASK VARIANT SEED: trains and evaluates one model; a failure (or a NaN stop) leaves no eval file.
run() {
  local task=$1 v=$2 seed=$3 name=$1-$2-s$3 data args
  local model=$OUT/models/$name.safetensors logs=$OUT/logs/$name
  if [[ $task == nmt ]]; then data=$NMT_DATA args=$NMT_ARGS; else data=$OUT/data/scenes args=$VQA_ARGS; fi
  # shellcheck disable=SC2086  # the argument strings are word lists
  if ! "$LAVA" train --task "$task" --data "$data" --attn "$v" --save "$model" --seed "$seed" \
      --threads "$THREADS" --format json $args >"$logs.train.jsonl" 2>"$logs.train.log" ||
    ! "$LAVA" eval --task "$task" --data "$data" --model "$model" --split test --threads "$THREADS" \
      --format json -q >"$logs.eval.jsonl" 2>"$logs.eval.log"; then
    log "$name: FAILED (see $logs.train.log)"
    rm -f "$logs.eval.jsonl"
    return 0
  fi
  log "$name: done ($(elapsed)): nll $(json_get "$(eval_row "$logs.eval.jsonl")" nll)"
}

for task in nmt vqa; do
  for v in $VARIANTS; do
    for seed in $SEEDS; do
      [[ -n $(eval_row "$OUT/logs/$task-$v-s$seed.eval.jsonl") ]] && continue
      pool_run run "$task" "$v" "$seed"
    done
  done
done
pool_wait || true  # a failed run is reported by run() and counted in the table's "seeds ok"

# mean KEY TASK VARIANT: the mean of KEY over the seeds whose evaluation exists (– when none has it).
mean() {
  local key=$1 task=$2 v=$3 seed vals=""
  for seed in $SEEDS; do
    vals+="$(json_get "$(eval_row "$OUT/logs/$task-$v-s$seed.eval.jsonl")" "$key") "
  done
  awk -v s="$vals" 'BEGIN { n = split(s, a, " "); k = 0; t = 0
    for (i = 1; i <= n; i++) if (a[i] != "" && a[i] != "null") { t += a[i]; k++ }
    if (k) printf "%.6g", t / k }'
}

# shellcheck disable=SC2086  # SEEDS is a list
seeds_ok() { seeds_finished "$OUT/logs/$1-$2-s" $SEEDS; }

negate() { case $1 in "" | null) printf '–' ;; *) awk -v x="$1" 'BEGIN { printf "%.3f", -x }' ;; esac; }

{
  echo "The attention family on both tasks ($( ((quick)) && echo "--quick" || echo "full") run; seeds: $SEEDS; means over" \
    "the seeds that finished). Translation: $( ((quick)) && echo "lava data synth" || echo "gettext de-en"), per" \
    "target token; VQA: Fashion-MNIST scenes, per question."
  echo
  echo "| task | variant | likelihood | NLL | −ELBO | KL | KL gap | NLL mean attn | accuracy | seeds ok |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for task in nmt vqa; do
    for v in $VARIANTS; do
      kind=""
      for seed in $SEEDS; do
        [[ -n $kind ]] || kind=$(json_get "$(eval_row "$OUT/logs/$task-$v-s$seed.eval.jsonl")" likelihood)
      done
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$task" "$v" "${kind:-–}" \
        "$(fmt_num "$(mean nll "$task" "$v")" %.3f)" "$(negate "$(mean elbo "$task" "$v")")" \
        "$(fmt_num "$(mean kl "$task" "$v")" %.3f)" "$(fmt_num "$(mean kl_gap "$task" "$v")" %.4f)" \
        "$(fmt_num "$(mean nll_mean_attn "$task" "$v")" %.3f)" "$(fmt_num "$(mean accuracy "$task" "$v")" %.4f)" \
        "$(seeds_ok "$task" "$v")"
    done
  done
} | tee "$OUT/table.md"
