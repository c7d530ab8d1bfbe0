#!/usr/bin/env bash
# The paper's Table 1 (VQA half: NLL and answer accuracy) on the Fashion-MNIST scenes of `lava data scenes`, for
# each question mix (--mix default: every question family equally likely; vqa2: VQA 2.0's 38/12/50 % yes/no,
# number, other). Trains every attention variant from every seed until the validation bound stops improving
# (converged mode, the default), evaluates it on the test split and prints the table three ways: over all
# questions, over the single-region questions (the types one region answers) and by question type, each variant
# with the paper's figure beside it; mean ± sd over seeds; where and why each run stopped. Written to OUT/table.md
# and OUT/table.jsonl. Resumable: a finished run is reused, a stopped one continues from its resume state. See
# usage() for the options.
set -euo pipefail
# shellcheck disable=SC2034  # used by lib.sh's messages
SCRIPT=vqa-table1
# shellcheck source=experiments/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # LAVA, OMP_WAIT_POLICY=passive, pin_lava, json_get, mean_sd, ...

VQA_VARIANTS="soft marginal hard-enum hard-sample var-enum var-sample var-gumbel var-rws"
TABLE_VARIANTS="soft marginal hard-enum hard-sample var-enum var-sample"  # the paper's VQA rows (no relaxed row)
MAIN_VARIANTS="soft marginal var-enum"  # the rows the paper's claims rest on: every seed; the others the first
MIXES="default vqa2"

usage() {
  cat <<EOF
usage: experiments/vqa-table1.sh [--quick | --paper] [--out DIR] [--threads N] [--jobs N] [--seed S]
                                 [--variants "V1 ..."] [--mix "M1 ..."] [--table-only]

  (default)    converged: 20k/2k/4k scenes (100k/10k/20k questions) per mix, each run trained until the
               validation bound stalls: --epochs 30 --start-decay-at 2 --lr-decay 0.5 --patience 3 (the learning
               rate halves at every stalled epoch from epoch 2; three stalled epochs in a row stop the run);
               seeds 1 2 3 for $MAIN_VARIANTS, seed 1 for the others. Measured: about 20 s
               of CPU an epoch on one core (README, VQA section); both mixes, 24 runs, fit in about 2 hours on
               2 one-thread jobs of an idle 2-core machine
  --quick      the smoke test: 5k/500/1k scenes per mix, 3 epochs per run, seed 1; a few minutes. Its figures
               are not converged and say nothing about the paper
  --paper      50k/5k/10k scenes (250k/25k/50k questions) per mix, up to 50 epochs (the paper's count) with
               --patience 4; seeds as in the default; many hours
  --out DIR    output folder (default runs/vqa-table1, runs/vqa-table1-quick or runs/vqa-table1-paper):
               table.md, table.jsonl, a copy of the lava binary, and per mix MIX/data/, MIX/models/, MIX/logs/
               (NAME.train.jsonl, NAME.eval.jsonl and their stderr), MIX/plots/NAME/ (learning curves; test/)
  --threads N  OpenMP threads per run (default 1: on these small matrices two single-thread runs get about twice
               the work done of one two-thread run; results do not depend on it)
  --jobs N     runs at a time (default 2), so "train time" is wall time on a shared machine
  --seed S     seeds of $MAIN_VARIANTS: 1, "1 2 3", 1,2,3 or 1-3 (default 1-3, --quick 1); the other
               variants use the first of them. The tables give mean ± sd over seeds
  --variants L the variants (default: $TABLE_VARIANTS; also known: var-gumbel var-rws)
  --mix L      the question mixes, each its own data set and table (default: "$MIXES")
  --table-only train nothing: the tables from the runs finished so far (a missing figure reads "–"; a mix
               whose data was never built is left out)
Resuming: a run whose training log ends in a finished "done" line (stop: patience, epochs, max-steps or nan) and
whose test evaluation exists is reused; a run stopped by a signal (or killed) continues with lava train --resume
MODEL.resume. Delete a run's files under MIX/models and MIX/logs to redo it.
EOF
}

SCRIPT_OPTIONS="variants= mix= paper table-only"
parse_args "$@"
((${#EXTRA_ARGS[@]} == 0)) || usage_error "this script takes no extra lava train options"
PAPER=${OPT_paper:-0} TABLE_ONLY=${OPT_table_only:-0}
((QUICK && PAPER)) && usage_error "--quick and --paper exclude each other"
variants=${OPT_variants:-$TABLE_VARIANTS} mixes=${OPT_mix:-$MIXES} JOBS=${JOBS:-2} THREADS=${THREADS:-1}
check_variants "$variants" "$VQA_VARIANTS"
for m in $mixes; do [[ " $MIXES " == *" $m "* ]] || usage_error "--mix: unknown mix '$m' (known: $MIXES)"; done
[[ -n ${mixes// /} ]] || usage_error "--mix needs at least one mix"

if ((QUICK)); then
  mode=quick root=${OUT:-$REPO/runs/vqa-table1-quick} main_seeds=${SEEDS:-1}
  SCENES=(--train 5000 --valid 500 --test 1000)
  TRAIN=(--epochs 3)
elif ((PAPER)); then
  mode=paper root=${OUT:-$REPO/runs/vqa-table1-paper} main_seeds=${SEEDS:-1 2 3}
  SCENES=(--train 50000 --valid 5000 --test 10000)
  TRAIN=(--epochs 50 --start-decay-at 2 --lr-decay 0.5 --patience 4)
else
  mode=converged root=${OUT:-$REPO/runs/vqa-table1} main_seeds=${SEEDS:-1 2 3}
  SCENES=(--train 20000 --valid 2000 --test 4000)
  TRAIN=(--epochs 30 --start-decay-at 2 --lr-decay 0.5 --patience 3)
fi
# seeds_of VARIANT: every seed for the main rows, the first for the others.
seeds_of() { if [[ " $MAIN_VARIANTS " == *" $1 "* ]]; then echo "$main_seeds"; else echo "${main_seeds%% *}"; fi; }

if ((TABLE_ONLY)); then
  built=""
  for mix in $mixes; do
    if [[ -f $root/$mix/data/meta.tsv ]]; then built+=" $mix"; fi
  done
  [[ -n $built ]] || die "--table-only: no mix of \"$mixes\" has data in $root yet"
  mixes=${built# }
fi
mkdir -p "$root"
((TABLE_ONLY)) || pin_lava "$root"

for mix in $mixes; do
  if [[ ! -f $root/$mix/data/meta.tsv ]]; then
    log "building the $mix scenes in $root/$mix/data"
    mkdir -p "$root/$mix"
    "$LAVA" data scenes --out "$root/$mix/data" "${SCENES[@]}" --mix "$mix" --seed 1 >&2 ||
      die "lava data scenes failed"
  fi
  mkdir -p "$root/$mix/models" "$root/$mix/plots" "$root/$mix/logs"
done

# run_one MIX VARIANT SEED: trains (or resumes, or reuses) and evaluates one model with the defaults of lava train
# --task vqa otherwise; a failure is reported and leaves the run out of the table.
run_one() {
  local mix=$1 v=$2 seed=$3 name=$2-s$3 dir=$root/$1
  local model=$dir/models/$name.safetensors logs=$dir/logs/$name extra=() resume=()
  if [[ -f $model && -n $(finished_done_line "$logs.train.jsonl") && -n $(eval_row "$logs.eval.jsonl") ]]; then
    return 0
  fi
  [[ $v == var-gumbel ]] && extra=(--temperature 0.1)  # the authors' va.sh; at 1 the relaxed z leaks the answer
  if [[ -z $(finished_done_line "$logs.train.jsonl") ]]; then
    if [[ -f $model.resume ]]; then
      resume=(--resume "$model.resume")
      log "$mix/$name: resuming from $model.resume ($(elapsed))"
    else
      rm -f "$logs.train.jsonl"
      log "$mix/$name: training ($(elapsed))"
    fi
    # A resumed session appends: the log keeps the epochs before the stop, then the ones after, then one done line.
    if ! "$LAVA" train --task vqa --data "$dir/data" --attn "$v" --save "$model" --plot "$dir/plots/$name" \
        --threads "$THREADS" --seed "$seed" --format json "${TRAIN[@]}" "${extra[@]}" "${resume[@]}" \
        >>"$logs.train.jsonl" 2>>"$logs.train.log"; then
      log "$mix/$name: training FAILED (see $logs.train.log)"
      return 0
    fi
    [[ -n $(finished_done_line "$logs.train.jsonl") ]] || {
      log "$mix/$name: stopped before the end ($(json_get "$(last_line_with "$logs.train.jsonl" '"event":"done"')" stop)); run the script again to resume it"
      return 0
    }
  fi
  if ! "$LAVA" eval --task vqa --data "$dir/data" --model "$model" --split test --plot "$dir/plots/$name/test" \
      --threads "$THREADS" --format json -q >"$logs.eval.jsonl" 2>"$logs.eval.log"; then
    log "$mix/$name: evaluation FAILED (see $logs.eval.log)"
    rm -f "$logs.eval.jsonl"
    return 0
  fi
  local done_line
  done_line=$(finished_done_line "$logs.train.jsonl")
  log "$mix/$name: done ($(elapsed)): stopped by $(json_get "$done_line" stop) at epoch $(json_get "$done_line" epochs)," \
    "update $(json_get "$done_line" steps) (best epoch $(json_get "$done_line" best_epoch)); test accuracy" \
    "$(json_get "$(eval_row "$logs.eval.jsonl")" accuracy)"
}
if ((!TABLE_ONLY)); then
  for mix in $mixes; do
    for v in $variants; do
      for seed in $(seeds_of "$v"); do pool_run run_one "$mix" "$v" "$seed"; done
    done
  done
  pool_wait || die "a run failed (see the messages above)"
fi

# ---- The tables, from the files ----
# field LINE KEY: json_get without its four processes (the tables read thousands of values): the value of KEY in a
# flat JSON line, strings unquoted.
field() {
  local v=""
  [[ $1 =~ \"$2\":([^,\}]*) ]] && v=${BASH_REMATCH[1]}
  v=${v#\"}
  printf '%s' "${v%\"}"
}
# values MIX VARIANT WHICH KEY [SCALE]: one value per seed of KEY (times SCALE) in the eval row WHICH: "all" (the
# totals), "single_region" (the subset row) or a question type.
values() {
  local seed f
  for seed in $(seeds_of "$2"); do
    f=$root/$1/logs/$2-s$seed.eval.jsonl
    field "$(vqa_eval_row "$f" "$3")" "$4" | awk -v s="${5:-1}" '/^-?[0-9.]+([eE][-+]?[0-9]+)?$/ { printf "%.10g", s * $1 }'
    echo
  done
}
# done_values MIX VARIANT KEY: KEY of each seed's finished done line.
done_values() {
  local seed
  for seed in $(seeds_of "$2"); do
    field "$(finished_done_line "$root/$1/logs/$2-s$seed.train.jsonl")" "$3"
    echo
  done
}
cell() { local f=$1; shift; mapfile -t vs < <(values "$@"); mean_sd "$f" "${vs[@]}"; }
stops() { done_values "$1" "$2" stop | { grep -v '^$' || true; } | sort | uniq -c | awk '{ printf "%s%s ×%d", (NR > 1 ? ", " : ""), $2, $1 }'; }
# shellcheck disable=SC2046  # one word per seed
seeds_ok() { seeds_finished "$root/$1/logs/$2-s" $(seeds_of "$2"); }
# The question types of a mix's test split, from its first finished evaluation.
qtypes_of() {
  local f line
  for f in "$root/$1"/logs/*.eval.jsonl; do
    [[ -n $(eval_row "$f") ]] || continue
    grep -F '"event":"qtype"' "$f" | while read -r line; do json_get "$line" qtype; echo; done
    return 0
  done
}
meta_figure() { awk -F'\t' -v k="$2" '$1 == k { printf "%.1f%%", 100 * $2 }' "$root/$1/data/meta.tsv"; }
# stat_json KEY VALUES...: "KEY":mean,"KEY_sd":sd over the numeric VALUES (null where there are none or one).
stat_json() {
  local k=$1
  shift
  printf '%s\n' "$@" | awk -v k="$k" '$1 != "" && $1 != "null" && tolower($1) !~ /nan/ { x[n++] = $1; t += $1 }
    END { if (!n) { printf "\"%s\":null,\"%s_sd\":null", k, k; exit } m = t / n; v = 0
          for (i = 0; i < n; i++) v += (x[i] - m) ^ 2
          printf "\"%s\":%.10g,\"%s_sd\":", k, m, k; if (n > 1) printf "%.10g", sqrt(v / (n - 1)); else printf "null" }'
}
paper_json() {
  local x
  x=$(paper_figure vqa "$1" "$2")
  [[ $x == – ]] && echo null || echo "$x"
}
# jsonl_row MIX VIEW WHICH VARIANT: one line of table.jsonl.
jsonl_row() {
  local mix=$1 view=$2 which=$3 v=$4 k parts=() vs
  parts+=("\"mix\":\"$mix\"" "\"mode\":\"$mode\"" "\"view\":\"$view\"" "\"qtype\":\"$which\"" "\"variant\":\"$v\"")
  parts+=("\"seeds\":\"$(seeds_of "$v")\"" "\"seeds_ok\":\"$(seeds_ok "$mix" "$v")\"")
  mapfile -t vs < <(values "$mix" "$v" "$which" questions)
  parts+=("\"questions\":${vs[0]:-null}")
  for k in nll accuracy elbo kl kl_gap entropy; do
    mapfile -t vs < <(values "$mix" "$v" "$which" "$k")
    parts+=("$(stat_json "$k" "${vs[@]}")")
  done
  if [[ $view == all ]]; then
    for k in epochs steps best_epoch seconds; do
      mapfile -t vs < <(done_values "$mix" "$v" "$k")
      parts+=("$(stat_json "$k" "${vs[@]}")")
    done
    parts+=("\"stop\":\"$(stops "$mix" "$v")\"")
  fi
  parts+=("\"paper_nll\":$(paper_json "$v" nll)" "\"paper_eval\":$(paper_json "$v" eval)")
  local IFS=,
  echo "{${parts[*]}}"
}

paper_cells() { echo "$(paper_figure vqa "$1" nll) | $(paper_figure vqa "$1" eval)"; }
: >"$root/table.jsonl.tmp"
{
  echo "# VQA-style Table 1 on Fashion-MNIST scenes ($mode run)"
  echo
  echo "Seeds: $main_seeds for $MAIN_VARIANTS, ${main_seeds%% *} for the others; mean ± sd where there are several."
  echo "NLL: the exact marginal −log Σ_i p(z=i) f_i(y) per question (direct for soft). Acc: answer accuracy (%); the"
  echo "paper's VQA Eval column is the VQA score, which needs several annotators' answers that scenes do not have."
  echo "−ELBO: q = p for the variants without q (the Jensen bound); KL gap = log p − ELBO. The paper's figures are VQA"
  echo "2.0 over all questions (src/method.md §6), given beside every view. Stop: why and where each run stopped (epoch"
  echo "and update of the stop, the epoch whose model was kept)."
  for mix in $mixes; do
    n_test=$(grep -vc '^#' "$root/$mix/data/test.questions.tsv")
    echo
    echo "## Mix \`$mix\`: $n_test test questions"
    echo
    echo "Answer-only baselines (meta.tsv): majority answer $(meta_figure "$mix" test_majority_accuracy), question-only" \
      "oracle $(meta_figure "$mix" test_question_only_oracle)."
    echo
    echo "### All questions"
    echo
    echo "| Model | Objective | E | NLL | paper NLL | Acc | paper Eval | −ELBO | KL gap | H(prior) | stop | epoch |" \
      "update | best epoch | train time | seeds ok |"
    echo "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|"
    for v in $variants; do
      mapfile -t ep < <(done_values "$mix" "$v" epochs)
      mapfile -t st < <(done_values "$mix" "$v" steps)
      mapfile -t be < <(done_values "$mix" "$v" best_epoch)
      mapfile -t se < <(done_values "$mix" "$v" seconds)
      echo "| $(paper_row "$v") | $(cell %.3f "$mix" "$v" all nll) | $(paper_figure vqa "$v" nll) |" \
        "$(cell %.2f "$mix" "$v" all accuracy 100) | $(paper_figure vqa "$v" eval) |" \
        "$(cell %.3f "$mix" "$v" all elbo -1) | $(cell %.4f "$mix" "$v" all kl_gap) |" \
        "$(cell %.2f "$mix" "$v" all entropy) | $(stops "$mix" "$v") | $(mean_sd %.1f "${ep[@]}") |" \
        "$(mean_sd %.0f "${st[@]}") | $(mean_sd %.1f "${be[@]}") |" \
        "$(fmt_duration "$(mean_sd %.0f "${se[@]}" | cut -d' ' -f1)") | $(seeds_ok "$mix" "$v") |"
      jsonl_row "$mix" all all "$v" >>"$root/table.jsonl.tmp"
    done
    echo
    types=$(qtypes_of "$mix" | tr '\n' ' ')
    single=$(for v in $variants; do
      for seed in $(seeds_of "$v"); do
        json_get "$(vqa_eval_row "$root/$mix/logs/$v-s$seed.eval.jsonl" single_region)" qtype
        echo
      done
    done | grep -v '^$' | head -n 1 | tr '+' ' ')
    mapfile -t nq < <(values "$mix" "${variants%% *}" single_region questions)
    echo "### Single-region questions (${single:-none}: ${nq[0]:-0} of $n_test)"
    echo
    echo "| Model | NLL | paper NLL (all) | Acc | paper Eval (all) | −ELBO | KL gap | region acc of the posterior |"
    echo "|---|--:|--:|--:|--:|--:|--:|--:|"
    for v in $variants; do
      echo "| $(paper_row "$v" | cut -d'|' -f1)| $(cell %.3f "$mix" "$v" single_region nll) |" \
        "$(paper_figure vqa "$v" nll) | $(cell %.2f "$mix" "$v" single_region accuracy 100) |" \
        "$(paper_figure vqa "$v" eval) | $(cell %.3f "$mix" "$v" single_region elbo -1) |" \
        "$(cell %.4f "$mix" "$v" single_region kl_gap) | $(cell %.3f "$mix" "$v" single_region region_acc_posterior) |"
      jsonl_row "$mix" single_region single_region "$v" >>"$root/table.jsonl.tmp"
    done
    echo
    echo "### By question type: accuracy % (NLL)"
    echo
    header="| qtype | subset | questions |" rule="|---|---|--:|"
    for v in $variants; do header+=" $v |" rule+="--:|"; done
    echo "$header"
    echo "$rule"
    for t in $types; do
      subset="" row=""
      for v in $variants; do
        [[ -n $subset ]] || subset=$(json_get "$(vqa_eval_row "$root/$mix/logs/$v-s$(seeds_of "$v" | cut -d' ' -f1).eval.jsonl" "$t")" subset)
        row+=" $(cell %.1f "$mix" "$v" "$t" accuracy 100) ($(cell %.3f "$mix" "$v" "$t" nll)) |"
        jsonl_row "$mix" qtype "$t" "$v" >>"$root/table.jsonl.tmp"
      done
      mapfile -t nq < <(values "$mix" "${variants%% *}" "$t" questions)
      echo "| $t | ${subset:-–} | ${nq[0]:-–} |$row"
    done
    row="| paper, all questions (VQA 2.0) | | |"
    for v in $variants; do row+=" $(paper_figure vqa "$v" eval) ($(paper_figure vqa "$v" nll)) |"; done
    echo "$row"
  done
} >"$root/table.md.tmp"
mv "$root/table.md.tmp" "$root/table.md"
mv "$root/table.jsonl.tmp" "$root/table.jsonl"
cat "$root/table.md"
