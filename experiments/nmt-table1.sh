#!/usr/bin/env bash
# The paper's Table 1 (translation half) on the Debian gettext German-English corpus: trains every attention variant,
# evaluates each on test (exact PPL, ELBO, KL, KL gap, prior entropy, token accuracy, beam-search BLEU) and prints a
# markdown table, also written to OUT/table.md. See usage() for the options.
set -euo pipefail
SCRIPT=nmt-table1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  cat <<EOF
usage: experiments/nmt-table1.sh [--quick] [--data DIR] [--out DIR] [--threads N] [--minutes M | --steps N]
                                 [--variants "V1 V2 ..."] [--limit N] [--beam B] [--seed S] [--reuse] [-- TRAIN ARGS]

Trains every --attn variant ($ALL_VARIANTS)
on DIR (default data/gettext-de-en, built with lava data gettext if missing), evaluates each on the test split
with --bleu and prints the paper's Table 1 layout as markdown (also OUT/table.md). Models, JSON logs, progress
logs, the settings and a copy of the lava binary used stay in OUT (default runs/nmt-table1-quick or
runs/nmt-table1-full).

  --quick        about 15 minutes on 2 idle cores: emb 64, hidden 128, vocabulary 4000, pairs up to 30 tokens,
                 batch 16, lr 3e-3, no dropout, 1 minute of training per variant, validation on the first 500
                 valid pairs, test on the first 500 test sentences (corpus order) with beam 2
  (default)      the paper's appendix settings (2-layer LSTMs, 512/768, batch 6, Adam 3e-4, 30 epochs), beam 10,
                 the whole test set: days of CPU time per variant; use --minutes or --steps to bound each variant
  --minutes M    training time per variant in minutes (quick: 1; full: 0 = no limit)
  --steps N      a budget of N updates per variant instead (then no time limit unless --minutes is also given):
                 the models and the table no longer depend on the machine's load
  --variants L   only these variants, in this order (space separated)
  --limit N      test sentences to evaluate (0 = all; quick: 500)
  --beam B       beam size for BLEU (quick: 2; full: 10)
  --threads N    OpenMP threads for lava (default: all cores)
  --seed S       random seed (default 1)
  --reuse        keep models already trained in OUT (a variant whose train log has its "done" line)
  -- ARGS        extra lava train options for every variant; each replaces the default of the same name
                 (give the time budget with --minutes, not --max-minutes)
EOF
}

quick=0 data=$REPO/data/gettext-de-en out="" threads="" minutes="" variants=$ALL_VARIANTS limit="" beam=""
seed=1 steps="" minutes_given=0 reuse=0 user_train_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --data) data=${2:?--data needs a directory}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --threads) threads=${2:?--threads needs a number}; shift ;;
    --minutes) minutes=${2:?--minutes needs a number} minutes_given=1; shift ;;
    --steps) steps=${2:?--steps needs a number}; shift ;;
    --variants) variants=${2:?--variants needs a list}; shift ;;
    --limit) limit=${2:?--limit needs a number}; shift ;;
    --beam) beam=${2:?--beam needs a number}; shift ;;
    --seed) seed=${2:?--seed needs a number}; shift ;;
    --reuse) reuse=1 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; user_train_args=("$@"); break ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
  shift
done
for v in $variants; do
  case " $ALL_VARIANTS " in *" $v "*) ;; *) die "unknown variant '$v' (known: $ALL_VARIANTS)" ;; esac
done

require_lava
ensure_corpus "$data"
if [ "$quick" = 1 ]; then
  mode=quick
  : "${minutes:=1}" "${limit:=500}" "${beam:=2}"
  read -ra train_args <<<"$(quick_train_args)"
else
  mode=full
  : "${minutes:=0}" "${limit:=0}" "${beam:=10}"
  read -ra train_args <<<"$(full_train_args)"
fi
out=${out:-$REPO/runs/nmt-table1-$mode}
mkdir -p "$out/models" "$out/logs"
pin_lava "$out"
corpus=$data
if [ "$quick" = 1 ]; then
  corpus=$out/corpus
  quick_corpus_view "$data" "$corpus" 500
fi
# --steps: a step budget instead of a time budget, so that the models (and the table) do not depend on the load.
if [ -n "$steps" ]; then
  train_args+=(--max-steps "$steps")
  [ "$minutes_given" = 1 ] || minutes=0
fi
with_overrides train_args "${user_train_args[@]}"
{
  echo "mode: $mode"
  echo "data: $data (training and evaluation read $corpus)"
  echo "lava train options: ${train_args[*]} --max-minutes $minutes --seed $seed"
  echo "lava eval options: --split test --limit $limit --bleu --beam $beam"
  echo "threads: ${threads:-all}, OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
} >"$out/settings.txt"
log "$mode run, output in $out"

n=$(wc -w <<<"$variants") k=0
for attn in $variants; do
  k=$((k + 1))
  prefix=$out/logs/$attn model=$out/models/$attn.safetensors
  t0=$SECONDS
  train_variant "$attn" "$corpus" "$model" "$prefix" "$minutes" "$threads" "$seed" "$reuse" "${train_args[@]}"
  t1=$SECONDS
  eval_variant "$model" "$corpus" "$prefix" "$limit" "$beam" "$threads"
  t2=$SECONDS
  done_line=$(last_line_with "$prefix.train.jsonl" '"event":"done"')
  row=$(eval_row "$prefix.eval.jsonl")
  log "[$k/$n] $(printf '%-11s' "$attn") train $(fmt_duration $((t1 - t0))) ($(json_get "$done_line" steps) steps)," \
    "eval $(fmt_duration $((t2 - t1))): ppl $(fmt_num "$(json_get "$row" ppl)" %.2f)" \
    "bleu $(fmt_num "$(json_get "$row" bleu)" %.2f)  [elapsed $(elapsed)]"
done

# The table: the paper's Table 1 rows and columns (Model, Objective, E, PPL, BLEU), then the figures LAVA adds.
label() {
  case "$1" in
    none) echo "No Attention (uniform average) | log p(y \| mean x) | –" ;;
    soft) echo "Soft Attention | log p(y \| E[z]) | –" ;;
    marginal) echo "Marginal Likelihood | log E[p] | Enum" ;;
    hard-enum) echo "Hard Attention | E_p[log p] | Enum" ;;
    hard-sample) echo "Hard Attention | E_p[log p] | Sample" ;;
    var-enum) echo "Variational Attention | E_q[log p] − KL | Enum" ;;
    var-sample) echo "Variational Attention | E_q[log p] − KL | Sample" ;;
    var-gumbel) echo "Variational Attention (Gumbel-softmax) | E_q[log p] − KL | Relaxed" ;;
    var-rws) echo "Variational Attention (RWS) | wake-sleep | Sample (K)" ;;
  esac
}
{
  echo "| Model | Objective | E | \`--attn\` | PPL | BLEU | ELBO | KL | KL gap | Prior entropy | Token acc. | Train time | Steps |"
  echo "|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
  for attn in $variants; do
    done_line=$(last_line_with "$out/logs/$attn.train.jsonl" '"event":"done"')
    row=$(eval_row "$out/logs/$attn.eval.jsonl")
    nan=""
    [ "$(json_get "$done_line" nan)" = true ] && nan=" (NaN in training)"
    echo "| $(label "$attn")$nan | \`$attn\` | $(fmt_num "$(json_get "$row" ppl)" %.2f) |" \
      "$(fmt_num "$(json_get "$row" bleu)" %.2f) | $(fmt_num "$(json_get "$row" elbo)" %.3f) |" \
      "$(fmt_num "$(json_get "$row" kl)" %.3f) | $(fmt_num "$(json_get "$row" kl_gap)" %.4f) |" \
      "$(fmt_num "$(json_get "$row" entropy)" %.2f) | $(fmt_num "$(json_get "$row" accuracy)" %.3f) |" \
      "$(fmt_duration "$(json_get "$done_line" seconds)") | $(json_get "$done_line" steps) |"
  done
  echo
  read -r first _ <<<"$variants"
  tokens=$(json_get "$(eval_row "$out/logs/$first.eval.jsonl")" tokens)
  sentences=$([ "$limit" = 0 ] && echo "all" || echo "the first $limit")
  echo "Test split of $data: $sentences sentences ($tokens target tokens, </s> included as scored by lava eval)," \
    "beam $beam. PPL is the exact marginal under the prior; ELBO, KL = KL(q‖p) and KL gap = log p − ELBO are" \
    "nats per target token (variants without q: ELBO at q = p). Train time includes the final validation." \
    "Mode $mode; settings in $out/settings.txt."
} >"$out/table.md"
cat "$out/table.md"
log "done in $(elapsed); table in $out/table.md"
