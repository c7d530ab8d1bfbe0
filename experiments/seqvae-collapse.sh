#!/usr/bin/env bash
# Posterior collapse in a sequence VAE whose decoder attends to the encoder states (lava train --task seqvae): KL,
# active units, reconstruction and the ELBO on the test split, with and without decoder attention (--dec-attn soft |
# none), plain (β = 1), with KL annealing (--kl-anneal) and with free bits (--free-bits), on the English side of the
# synthetic task (`lava data synth`) and of the Debian gettext corpus, with the BiLSTM encoder and, on the synthetic
# task, the Transformer encoder too. Prints a markdown table per data set (also in OUT/table.md) and writes every
# validation point to OUT/curves.tsv (KL and active units against updates).
#
#   experiments/seqvae-collapse.sh [--quick] [--out DIR] [--threads N] [--jobs N] [--seed S] [--minutes M]
#                                  [--data GETTEXT_DIR]
#
# --quick: a small model (emb 64, hidden 128, z 16; Transformer: 2 layers, 4 heads, feed-forward 256), 2000 updates
#          per run on the synthetic task and 1000 on gettext (vocabulary 4000), 12 runs, two at a time with one
#          thread each; 10-15 minutes on 2 idle cores. A run also stops after --minutes M (default 3) so that a busy
#          machine cannot stretch the script much past that; the table's `steps` column shows where each run stopped.
# Full:    emb 128, hidden 256, z 32; 20 epochs of the synthetic task and 5 of gettext, 18 runs; many hours.
# Everything goes under --out (default runs/seqvae-collapse[-quick]/): lava (the binary used), data/, models/, logs/,
# curves.tsv and table.md. A run whose test evaluation exists is not repeated (delete its logs to redo it).
# --jobs: parallel runs (default 2); --threads: per run (default 1); --seed: the training seed (default 1);
# --minutes 0 makes every run step-bounded and load-independent; --data: the gettext corpus (default
# data/gettext-de-en; built with lava data gettext if missing). Environment: LAVA (default build/lava).
set -euo pipefail
SCRIPT=seqvae-collapse
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
SCRIPT_OPTIONS="minutes= data="
parse_args "$@"
((${#EXTRA_ARGS[@]} == 0)) || usage_error "this script takes no extra lava train options"
quick=$QUICK JOBS=${JOBS:-2} THREADS=${THREADS:-1} SEED=${SEEDS:-1}
[[ $SEED != *" "* ]] || usage_error "--seed takes one seed here"
GETTEXT=${OPT_data:-$REPO/data/gettext-de-en}
if [[ $LAVA == "$REPO/build/lava" ]]; then make -s -C "$REPO" build/lava >&2; fi

if ((quick)); then
  OUT=${OUT:-$REPO/runs/seqvae-collapse-quick}
  MAX_MINUTES=${OPT_minutes:-3}
  MODEL=(--emb-size 64 --hidden-size 128 --latent-size 16 --attn-size 64 --batch-size 32 --lr 2e-3 --dropout 0.1)
  SYNTH_TRAIN=(--max-steps 2000 --epochs 100 --valid-every 250)
  GETTEXT_TRAIN=(--max-steps 1000 --epochs 100 --valid-every 250 --max-vocab 4000 --max-len 30)
  ANNEAL_SYNTH=1500 ANNEAL_GETTEXT=750 FREE_BITS=0.5
  EVAL=(--samples 5 --limit 1000)
else
  OUT=${OUT:-$REPO/runs/seqvae-collapse}
  MAX_MINUTES=${OPT_minutes:-0}
  MODEL=(--emb-size 128 --hidden-size 256 --latent-size 32 --attn-size 128 --batch-size 32 --lr 1e-3 --dropout 0.2)
  SYNTH_TRAIN=(--epochs 20 --valid-every 1000)
  GETTEXT_TRAIN=(--epochs 5 --valid-every 2000 --min-freq 2 --max-len 50)
  ANNEAL_SYNTH=10000 ANNEAL_GETTEXT=20000 FREE_BITS=0.25
  EVAL=(--samples 20)
fi
mkdir -p "$OUT/data" "$OUT/models" "$OUT/logs"
pin_lava "$OUT"

if [[ ! -f $OUT/data/synth/train.en ]]; then
  log "building the synthetic task in $OUT/data/synth"
  "$LAVA" data synth --out "$OUT/data/synth" --seed 1 -q >&2
fi
ensure_corpus "$GETTEXT"
quick_corpus_view "$GETTEXT" "$OUT/data/gettext" 1000  # validation on the first 1000 valid sentences

# The runs: "NAME DATA ARGS...". NAME = data-encoder-attention-treatment.
runs=()
for enc in lstm transformer; do
  for attn in none soft; do
    for kl in plain anneal freebits; do
      for data in synth gettext; do
        if ((quick)); then  # the quick subset: every BiLSTM run on synth, four on gettext, two Transformer runs
          case $enc-$data-$attn-$kl in
            lstm-synth-*) ;;
            lstm-gettext-*-plain | lstm-gettext-*-freebits) ;;
            transformer-synth-soft-plain | transformer-synth-none-freebits) ;;
            *) continue ;;
          esac
        elif [[ $enc == transformer && $data == gettext ]]; then
          continue
        fi
        args=(--encoder "$enc" --dec-attn "$attn")
        ((quick)) && [[ $enc == transformer ]] && args+=(--ff-size 256)  # 2 x hidden instead of 4 x: half the cost
        anneal=$ANNEAL_SYNTH
        [[ $data == gettext ]] && anneal=$ANNEAL_GETTEXT
        case $kl in
          anneal) args+=(--kl-anneal "$anneal") ;;
          freebits) args+=(--free-bits "$FREE_BITS") ;;
        esac
        runs+=("$data-$enc-$attn-$kl $data ${args[*]}")
      done
    done
  done
done

# run_one NAME DATA ARGS...: trains (JSON lines in logs/NAME.train.jsonl) and evaluates on test (logs/NAME.eval.jsonl).
run_one() {
  local name=$1 data=$2
  shift 2
  local dir=$OUT/data/$data model=$OUT/models/$name.safetensors prefix=$OUT/logs/$name
  if [[ -n $(last_line_with "$prefix.eval.jsonl" '"event":"eval"') ]]; then return 0; fi
  local train=("${SYNTH_TRAIN[@]}")
  [[ $data == gettext ]] && train=("${GETTEXT_TRAIN[@]}")
  local t0=$SECONDS
  run_lava "$prefix.train.jsonl" "$prefix.train.log" train --task seqvae --data "$dir" --lang en "$@" \
    "${MODEL[@]}" "${train[@]}" --max-minutes "$MAX_MINUTES" --save "$model" --threads "$THREADS" --seed "$SEED" \
    --format json
  [[ -f $model ]] || die "$name: lava train wrote no model $model"
  run_lava "$prefix.eval.jsonl" "$prefix.eval.log" eval --task seqvae --data "$dir" --model "$model" --split test \
    "${EVAL[@]}" --threads "$THREADS" --seed "$SEED" --format json -q
  local done_line
  done_line=$(last_line_with "$prefix.train.jsonl" '"event":"done"')
  log "$(printf '%-34s' "$name") $(json_get "$done_line" steps) steps, $(fmt_duration $((SECONDS - t0)))  [elapsed $(elapsed)]"
}

log "${#runs[@]} runs, $JOBS at a time with $THREADS thread(s) each; output in $OUT"
for r in "${runs[@]}"; do
  read -ra words <<<"$r"
  pool_run run_one "${words[@]}"
done
pool_wait || die "a run failed (see the messages above)"

# ---- curves.tsv: every validation point of every run ----
{
  printf 'run\tsteps\tepoch\tkl_weight\telbo\trecon\tkl\tactive_units\n'
  for r in "${runs[@]}"; do
    name=${r%% *}
    grep -F '"event":"epoch"' "$OUT/logs/$name.train.jsonl" | while IFS= read -r line; do
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(json_get "$line" steps)" "$(json_get "$line" epoch)" \
        "$(json_get "$line" kl_weight)" "$(json_get "$line" elbo)" "$(json_get "$line" recon)" \
        "$(json_get "$line" kl)" "$(json_get "$line" active_units)"
    done
  done
} >"$OUT/curves.tsv"

# ---- the tables ----
treatment() {
  case $1 in
    plain) echo "β = 1" ;;
    anneal) echo "KL annealing" ;;
    freebits) echo "free bits λ = $FREE_BITS" ;;
  esac
}
{
  mode=$( ((quick)) && echo "--quick" || echo "full")
  echo "Sequence VAE, posterior collapse ($mode run). Test split$( ((quick)) && echo " (first 1000 sentences)"), figures in nats"
  echo "per sentence except the last columns; recon = E_q log p(X|z) over ${EVAL[1]} samples of z, KL = KL(q(z|X) || N(0, I)),"
  echo "ELBO = recon − KL; ppl ≤ exp(−ΣELBO/tokens) and the importance-weighted bound ppl_iw (tokens = words + <eos>);"
  echo "active units: dimensions of z whose posterior mean varies over the test sentences by more than 0.01 (Burda et al.)."
  for data in synth gettext; do
    echo
    case $data in
      synth) echo "**Synthetic task** (\`lava data synth\`, English side; annealing over $ANNEAL_SYNTH updates)" ;;
      gettext) echo "**Debian gettext, English side** (annealing over $ANNEAL_GETTEXT updates)" ;;
    esac
    echo
    echo "| encoder | decoder attention | KL treatment | steps | ELBO | recon | KL | active units | ppl ≤ | ppl_iw ≤ | train time |"
    echo "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"
    for r in "${runs[@]}"; do
      name=${r%% *}
      [[ $name == $data-* ]] || continue
      IFS=- read -r _ enc attn kl <<<"$name"
      e=$(last_line_with "$OUT/logs/$name.eval.jsonl" '"event":"eval"')
      t=$(last_line_with "$OUT/logs/$name.train.jsonl" '"event":"done"')
      echo "| $enc | $attn | $(treatment "$kl") | $(json_get "$t" steps) | $(fmt_num "$(json_get "$e" elbo)" %.2f) |" \
        "$(fmt_num "$(json_get "$e" recon)" %.2f) | $(fmt_num "$(json_get "$e" kl)" %.2f) |" \
        "$(json_get "$e" active_units)/$(json_get "$e" latent) | $(fmt_num "$(json_get "$e" ppl_bound)" %.2f) |" \
        "$(fmt_num "$(json_get "$e" ppl_iw)" %.2f) | $(fmt_duration "$(json_get "$t" seconds)") |"
    done
  done
  echo
  echo "Total wall time $(elapsed) (JOBS=$JOBS, THREADS=$THREADS). Learning curves (KL and active units per validation): $OUT/curves.tsv"
} | tee "$OUT/table.md"
