#!/usr/bin/env bash
# The paper's Tables 1, 2 and 3 (Deng et al. 2018) in one command: the converged translation and VQA tables
# (experiments/nmt-table1.sh and experiments/vqa-table1.sh), exact against K-max attention from the same models
# (Table 2, with PPL against K = 1..10 as a picture), the inference alternatives and the prior entropies (Table 3),
# and one learning-curve picture per task. Everything lands in OUT (default runs/paper-tables): tables.md,
# tables.jsonl, commands.txt, the models, logs and pictures. Resumable: run it again, today or another day, and
# finished runs and evaluations are reused, stopped runs continue from their resume state.
set -euo pipefail
SCRIPT=paper-tables
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Table 2's rows: the enumerated and sampled categorical models, whose prior K-max can truncate.
KMAX_VARIANTS="marginal hard-enum hard-sample var-enum var-sample"
KMAX_K=5
# Table 3 (left): the inference alternatives for variational attention, with var-enum for reference.
INFERENCE_VARIANTS="var-enum var-sample var-rws var-gumbel"
# Table 3 (right): prior entropies.
ENTROPY_VARIANTS="soft marginal hard-enum hard-sample var-dirichlet var-enum var-sample"

usage() {
  cat <<EOF
usage: experiments/paper-tables.sh [--quick] [--out DIR] [--jobs N] [--threads N] [--tables-only] [--no-vqa]

Runs experiments/nmt-table1.sh and experiments/vqa-table1.sh in their converged (default) modes into OUT/nmt and
OUT/vqa, then evaluates Table 2 (exact and K-max with K = $KMAX_K: PPL and BLEU, beam 10, whole test set, for
$KMAX_VARIANTS; and PPL for K = 1..10 as OUT/kmax.svg) and Table 3 (the inference alternatives $INFERENCE_VARIANTS;
the prior entropy of every row for both tasks), and draws the learning curves of every row (OUT/nmt-curves.svg,
OUT/vqa-curves-MIX.svg for both question mixes). OUT/tables.md has every table, OUT/tables.jsonl one JSON line per run and evaluation,
OUT/commands.txt every lava command line run. About 8 hours on 2 idle cores; everything is reused on a rerun.

  --quick        a smoke test of every step in a few minutes (200 updates a run, 100 test sentences, beam 2):
                 nothing in it is converged
  --out DIR      output folder (default runs/paper-tables; runs/paper-tables-quick with --quick)
  --jobs N       runs at a time (default 2)
  --threads N    OpenMP threads per run (default 1; results do not depend on it)
  --seed S       refused: the seeds are the tables' own (3 for soft, marginal and var-enum, 1 for the rest)
  --tables-only  train and evaluate nothing: the tables and pictures from what is finished (missing figures "–")
  --no-vqa       the translation tables only
EOF
}

SCRIPT_OPTIONS="tables-only no-vqa"
parse_args "$@"
((${#EXTRA_ARGS[@]} == 0)) || usage_error "this script takes no extra lava train options"
[ -z "$SEEDS" ] || usage_error "the seeds are the tables' own (nmt-table1.sh and vqa-table1.sh); no --seed here"
JOBS=${JOBS:-2} THREADS=${THREADS:-1} tables_only=${OPT_tables_only:-0}
HERE=$REPO/experiments
if ((QUICK)); then
  out=${OUT:-$REPO/runs/paper-tables-quick}
  nmt_mode=(--quick --steps 200 --limit 100 --beam 2 --reuse --seed 1 --variants "soft marginal hard-enum hard-sample
    var-dirichlet var-enum var-sample var-gumbel var-rws")
  limit=100 beam=2
else
  out=${OUT:-$REPO/runs/paper-tables}
  nmt_mode=()
  limit=0 beam=10
fi
mkdir -p "$out"
pin_lava "$out"
export LAVA COMMANDS_LOG=$out/commands.txt
table_only=()
((tables_only)) && table_only=(--table-only)

# ---- Table 1 (and the runs of Table 3) ----
log "translation: nmt-table1.sh into $out/nmt"
"$HERE/nmt-table1.sh" --out "$out/nmt" --jobs "$JOBS" --threads "$THREADS" "${nmt_mode[@]}" "${table_only[@]}" \
  >"$out/nmt.table.log" 2>>"$out/nmt.log" || die "nmt-table1.sh failed (see $out/nmt.log)"
nmt=$out/nmt
corpus=$nmt/corpus
vqa=$out/vqa
VQA_MIXES="default vqa2"
if ((!${OPT_no_vqa:-0})); then
  log "VQA: vqa-table1.sh into $vqa"
  vqa_mode=()
  ((QUICK)) && vqa_mode=(--quick)
  if ((tables_only)); then
    "$HERE/vqa-table1.sh" --out "$vqa" "${vqa_mode[@]}" --table-only >"$out/vqa.table.log" 2>>"$out/vqa.log" ||
      log "warning: no VQA table yet in $vqa (see $out/vqa.log)"
  else
    "$HERE/vqa-table1.sh" --out "$vqa" --jobs "$JOBS" --threads "$THREADS" "${vqa_mode[@]}" >"$out/vqa.table.log" \
      2>>"$out/vqa.log" || die "vqa-table1.sh failed (see $out/vqa.log)"
  fi
fi
# seeds_of VARIANT: the seeds nmt-table1.sh trained it from (from its settings, so that this script never guesses).
seeds_of() { sed -n "s/^  --attn $1: seeds \([0-9 ]*\).*/\1/p" "$nmt/settings.txt"; }

# ---- Table 2: exact against K-max, from the same models ----
# kmax_eval MODEL PREFIX K BLEU: lava eval --kmax K of MODEL on the test split into PREFIX.kK.jsonl (with BLEU, beam
# $beam, when BLEU=1); kept when newer than the model.
kmax_eval() {
  local model=$1 file=$2.k$3$([ "$4" = 1 ] && echo .bleu).jsonl bleu=()
  [ -f "$model" ] || return 0
  [ "$file" -nt "$model" ] && [ -n "$(eval_row "$file")" ] && return 0
  [ "$4" = 1 ] && bleu=(--bleu --beam "$beam")
  run_lava "$file" "${file%.jsonl}.log" eval --model "$model" --data "$corpus" --split test --limit "$limit" \
    --kmax "$3" --threads "$THREADS" --format json "${bleu[@]}"
}
if ((!tables_only)); then
  log "Table 2: K-max evaluations"
  for attn in $KMAX_VARIANTS; do
    for seed in $(seeds_of "$attn"); do
      prefix=$nmt/logs/$attn-s$seed model=$nmt/models/$attn-s$seed.safetensors
      pool_run kmax_eval "$model" "$prefix" "$KMAX_K" 1
      if [ "$seed" = "$(seeds_of "$attn" | cut -d' ' -f1)" ]; then
        for k in 1 2 3 4 6 7 8 9 10; do pool_run kmax_eval "$model" "$prefix" "$k" 0; done
      fi
    done
  done
  pool_wait || die "a K-max evaluation failed (see the messages above)"
fi

# cell ATTN KEY FORMAT FILE_SUFFIX: mean ± sd of KEY over the seeds' rows in logs/ATTN-sSEED.FILE_SUFFIX.
# shellcheck disable=SC2046  # one word per seed
cell() { seed_cell "$3" "$nmt/logs/$1-s" "$4" "$2" $(seeds_of "$1"); }
# kmax_seeds ATTN: its seeds whose K-max evaluation (Table 2) is finished, so that both columns of a Table 2 row
# average the same models.
kmax_seeds() {
  local seed
  for seed in $(seeds_of "$1"); do
    [ -z "$(eval_row "$nmt/logs/$1-s$seed.k$KMAX_K.bleu.jsonl")" ] || printf '%s ' "$seed"
  done
}
# n_seeds ATTN: "finished/planned" seeds (a finished one has its test evaluation).
# shellcheck disable=SC2046  # one word per seed
n_seeds() { seeds_finished "$nmt/logs/$1-s" $(seeds_of "$1"); }
# vqa_cell MIX ATTN KEY: mean ± sd of KEY over the VQA runs' test rows (every seed vqa-table1.sh trained).
vqa_cell() {
  local f values=()
  for f in "$vqa/$1"/logs/"$2"-s*.eval.jsonl; do
    [ -f "$f" ] && values+=("$(json_get "$(eval_row "$f")" "$3")")
  done
  mean_sd %.2f "${values[@]}"
}

# ---- The pictures ----
curve_args=()
for attn in $(sed -n 's/^  --attn \([a-z-]*\):.*/\1/p' "$nmt/settings.txt"); do
  first=$(seeds_of "$attn" | cut -d' ' -f1)
  f=$nmt/logs/$attn-s$first.train.jsonl
  [ -s "$f" ] && curve_args+=("$attn=$f")
done
for mix in $VQA_MIXES; do
  vqa_curves=()
  for f in "$vqa/$mix"/logs/*-s1.train.jsonl; do
    [ -s "$f" ] && vqa_curves+=("$(basename "${f%-s1.train.jsonl}")=$f")
  done
  if ((${#vqa_curves[@]})); then
    "$LAVA" plot --out "$out/vqa-curves-$mix.svg" --y valid_nll --where event=epoch --x-label epoch \
      --y-label "validation NLL per question" --title "VQA ($mix mix): validation NLL per epoch, every row (seed 1)" \
      "${vqa_curves[@]}" 2>>"$out/vqa.log" || log "warning: no VQA learning curves yet ($mix)"
  fi
done
# PPL above 100 is left out of the picture (and counted in its y label): var-dirichlet's sampled bound before its q
# has trained is astronomically large (1e224 at epoch 1 here) and would flatten every other curve.
if ((${#curve_args[@]})); then
  "$LAVA" plot --out "$out/nmt-curves.svg" --y valid_ppl --where event=epoch --x-label epoch --y-max 100 \
    --y-label "validation PPL (exact; var-dirichlet: sampled)" \
    --title "Translation: validation PPL per epoch, every row (seed 1)" "${curve_args[@]}" 2>>"$out/nmt.log" ||
    log "warning: no learning curves yet"
fi
kmax_args=()
for attn in $KMAX_VARIANTS; do
  first=$(seeds_of "$attn" | cut -d' ' -f1)
  rows=$out/kmax-$attn.jsonl
  for k in 1 2 3 4 5 6 7 8 9 10; do
    suffix=k$k.jsonl
    [ "$k" = "$KMAX_K" ] && suffix=k$k.bleu.jsonl
    eval_row "$nmt/logs/$attn-s$first.$suffix"
  done >"$rows"
  [ -s "$rows" ] && kmax_args+=("$attn=$rows")
done
if ((${#kmax_args[@]})); then
  "$LAVA" plot --out "$out/kmax.svg" --x kmax --y ppl --x-label "K (K-max attention under the prior)" \
    --y-label "test PPL" --title "Translation: test PPL against K (seed 1), the paper's Table 2 right" \
    "${kmax_args[@]}" 2>>"$out/nmt.log" || log "warning: no K-max evaluations yet"
fi

# compute_table: what the runs cost, from their own records. Training: the "seconds" of every finished run's "done"
# line (over all its sessions, validations included); evaluation: the wall seconds run_lava logged for each eval
# (commands.txt.times; evaluations from before that log existed are counted as missing). Each run uses --threads
# threads, --jobs at a time, so a whole run's wall time is about the sum over --jobs.
compute_table() {
  local task files
  echo "| task | finished training runs | updates | training (run-hours) | evaluations timed | evaluation (run-hours) |"
  echo "|---|--:|--:|--:|--:|--:|"
  for task in nmt vqa; do
    if [ "$task" = nmt ]; then files=("$nmt"/logs/*.train.jsonl); else files=("$vqa"/*/logs/*.train.jsonl); fi
    local runs=0 steps=0 seconds=() line
    for f in "${files[@]}"; do
      [ -f "$f" ] || continue
      line=$(finished_done_line "$f")
      [ -n "$line" ] || continue
      runs=$((runs + 1))
      steps=$((steps + $(json_get "$line" steps)))
      seconds+=("$(json_get "$line" seconds)")
    done
    local secs
    secs=$(printf '%s\n' "${seconds[@]}" | awk '{ s += $1 } END { print s + 0 }')
    local evals="0 0"
    [ -f "$out/commands.txt.times" ] && evals=$(awk -F '\t' -v dir="/$task/" \
      '$3 == "eval" && $2 == 0 && index($4, dir) { n++; s += $1 } END { printf "%d %.1f", n, s }' \
      "$out/commands.txt.times")
    read -r n_eval s_eval <<<"$evals"
    printf '| %s | %d | %d | %.2f | %d | %.2f |\n' "$task" "$runs" "$steps" \
      "$(awk -v s="$secs" 'BEGIN { print s / 3600 }')" "$n_eval" "$(awk -v s="$s_eval" 'BEGIN { print s / 3600 }')"
  done
  echo
  echo "Run-hours: each run's own wall time at --threads $THREADS; with --jobs $JOBS at a time the whole takes about" \
    "their sum over $JOBS. Times depend on the machine's load (a run sharing its core with another process reports" \
    "the slower time), the figures above do not."
}

# ---- The tables ----
{
  echo "# The paper's tables, reproduced"
  echo
  echo "Made by \`experiments/paper-tables.sh$( ((QUICK)) && echo " --quick")\` on $(date -u '+%Y-%m-%d') ($(uname -m)," \
    "$(nproc) cores). Every lava command run is in commands.txt; each task's settings in nmt/settings.txt and"\
    "vqa/settings.txt."
  echo
  echo "## Table 1: translation (gettext German-English)"
  echo
  cat "$nmt/table.md"
  echo
  echo "## Table 2: exact against K-max attention (K = $KMAX_K), the same models"
  echo
  echo "| Model | E | \`--attn\` | PPL exact | PPL K-max | paper exact / K-max | BLEU exact | BLEU K-max |" \
    "paper exact / K-max | seeds |"
  echo "|---|---|---|--:|--:|--:|--:|--:|--:|--:|"
  for attn in $KMAX_VARIANTS; do
    row=$(paper_row "$attn")
    read -ra k_seeds <<<"$(kmax_seeds "$attn")"
    p=$nmt/logs/$attn-s k=k$KMAX_K.bleu.jsonl
    echo "| ${row%% | *} | ${row##* | } | \`$attn\` | $(seed_cell %.2f "$p" eval.jsonl ppl "${k_seeds[@]}") |" \
      "$(seed_cell %.2f "$p" "$k" ppl "${k_seeds[@]}") |" \
      "$(paper_figure nmt "$attn" ppl) / $(paper_figure nmt "$attn" ppl_kmax) |" \
      "$(seed_cell %.2f "$p" eval.jsonl bleu "${k_seeds[@]}") | $(seed_cell %.2f "$p" "$k" bleu "${k_seeds[@]}") |" \
      "$(paper_figure nmt "$attn" bleu) / $(paper_figure nmt "$attn" bleu_kmax) |" \
      "${#k_seeds[@]}/$(seeds_of "$attn" | wc -w) |"
  done
  echo
  echo "K-max keeps the prior's K largest positions and renormalises (src/method.md §4.3); BLEU is beam $beam on" \
    "$([ "$limit" = 0 ] && echo "the whole test set" || echo "the first $limit test sentences"). PPL against K" \
    "= 1..10 (seed 1): kmax.svg. Seeds: those with a K-max evaluation, of those planned; both columns of a row" \
    "average the same models."
  echo
  echo "## Table 3: inference alternatives and prior entropy"
  echo
  echo "| Model | \`--attn\` | PPL | paper PPL | BLEU | paper BLEU | KL(q‖p) | seeds |"
  echo "|---|---|--:|--:|--:|--:|--:|--:|"
  for attn in $INFERENCE_VARIANTS; do
    row=$(paper_row "$attn")
    echo "| ${row%% | *} | \`$attn\` | $(cell "$attn" ppl %.2f eval.jsonl) | $(paper_figure nmt "$attn" ppl) |" \
      "$(cell "$attn" bleu %.2f eval.jsonl) | $(paper_figure nmt "$attn" bleu) | $(cell "$attn" kl %.3f eval.jsonl) |" \
      "$(n_seeds "$attn") |"
  done
  echo
  echo "var-rws draws K = 5 samples from q, var-gumbel relaxes at τ = 0.1 (src/method.md §2)."
  echo
  echo "| Model | \`--attn\` | translation: prior entropy | paper | VQA, default mix | VQA, vqa2 mix | paper |"
  echo "|---|---|--:|--:|--:|--:|--:|"
  for attn in $ENTROPY_VARIANTS; do
    row=$(paper_row "$attn")
    echo "| ${row%% | *} | \`$attn\` | $(cell "$attn" entropy %.2f eval.jsonl) | $(paper_figure nmt "$attn" entropy) |" \
      "$(vqa_cell default "$attn" entropy) | $(vqa_cell vqa2 "$attn" entropy) | $(paper_figure vqa "$attn" entropy) |"
  done
  echo
  echo "Prior entropy: the mean entropy of p(z | x, y<j) over test target tokens (translation) and of p(z | x, q)" \
    "over test questions (VQA), in nats; VQA has 9 regions (log 9 = 2.20), the paper's VQA up to 100 (log 100 = 4.61)."
  if [ -f "$vqa/table.md" ]; then
    echo
    echo "## Table 1: VQA (scenes of Fashion-MNIST items)"
    echo
    cat "$vqa/table.md"
  fi
  echo
  echo "## Compute"
  echo
  compute_table
} >"$out/tables.md"

# One JSON line per run (Table 1's rows) and per K-max evaluation.
{
  cat "$nmt/table.jsonl"
  [ ! -f "$vqa/table.jsonl" ] || cat "$vqa/table.jsonl"
  for f in "$nmt"/logs/*.k*.jsonl; do
    [ -f "$f" ] || continue
    base=$(basename "$f")
    row=$(eval_row "$f")
    [ -n "$row" ] && printf '{"task":"nmt","table":2,"model":"%s",%s\n' "${base%%.k*}" "${row#\{}"
  done
} >"$out/tables.jsonl"
cat "$out/tables.md"
log "done in $(elapsed); tables in $out/tables.md"
