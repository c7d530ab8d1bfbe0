#!/usr/bin/env bash
# The translation part of `make demo`: soft attention against variational attention (enumerated) on the Debian
# gettext German-English corpus, a couple of minutes of training each, then exact PPL, ELBO, KL gap and BLEU
# side by side. Output stays in runs/demo-nmt (models, JSON logs, table.md).
set -euo pipefail
SCRIPT=demo-nmt
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  cat <<EOF
usage: experiments/demo-nmt.sh [--minutes M] [--data DIR] [--out DIR] [--threads N] [--limit N] [--beam B]

Builds data/gettext-de-en if it is missing (lava data gettext; the download is cached), trains --attn soft and
--attn var-enum for M minutes each (default 2; small model: emb 64, hidden 128, vocabulary 4000), evaluates both
on the first N test sentences (default 500) with beam B (default 2) and prints the figures side by side.
Output in OUT (default runs/demo-nmt).
EOF
}

data=$REPO/data/gettext-de-en out=$REPO/runs/demo-nmt threads="" minutes=2 limit=500 beam=2
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=${2:?--minutes needs a number}; shift ;;
    --data) data=${2:?--data needs a directory}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --threads) threads=${2:?--threads needs a number}; shift ;;
    --limit) limit=${2:?--limit needs a number}; shift ;;
    --beam) beam=${2:?--beam needs a number}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
  shift
done

require_lava
ensure_corpus "$data"
mkdir -p "$out/models" "$out/logs"
pin_lava "$out"
quick_corpus_view "$data" "$out/corpus" 500
read -ra train_args <<<"$(quick_train_args)"
log "training soft and var-enum attention for $minutes minutes each on $data (output in $out)"
for attn in soft var-enum; do
  prefix=$out/logs/$attn model=$out/models/$attn.safetensors
  t0=$SECONDS
  train_variant "$attn" "$out/corpus" "$model" "$prefix" "$minutes" "$threads" 1 0 "${train_args[@]}"
  t1=$SECONDS
  eval_variant "$model" "$out/corpus" "$prefix" "$limit" "$beam" "$threads"
  log "$(printf '%-8s' "$attn") trained $(fmt_duration $((t1 - t0))) ($(json_get "$(last_line_with "$prefix.train.jsonl" \
    '"event":"done"')" steps) steps), evaluated $(fmt_duration $((SECONDS - t1)))  [elapsed $(elapsed)]"
done

{
  echo "| \`--attn\` | PPL (exact) | ELBO / token | KL gap / token | BLEU | Training steps |"
  echo "|---|--:|--:|--:|--:|--:|"
  for attn in soft var-enum; do
    row=$(eval_row "$out/logs/$attn.eval.jsonl")
    echo "| \`$attn\` | $(fmt_num "$(json_get "$row" ppl)" %.3f) | $(fmt_num "$(json_get "$row" elbo)" %.4f) |" \
      "$(fmt_num "$(json_get "$row" kl_gap)" %.5f) | $(fmt_num "$(json_get "$row" bleu)" %.2f) |" \
      "$(json_get "$(last_line_with "$out/logs/$attn.train.jsonl" '"event":"done"')" steps) |"
  done
  echo
  echo "First $limit test sentences, beam $beam; $minutes minutes of training each. PPL = exp(nll) of the exact" \
    "marginal under the prior; ELBO in nats per target token (soft has no latent alignment: lava reports ELBO = log p, gap 0);" \
    "KL gap = log p - ELBO = KL(q || exact posterior)."
} >"$out/table.md"
cat "$out/table.md"
