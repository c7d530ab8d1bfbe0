#!/usr/bin/env bash
# Reproduces synth-aer.md: the alignment error rate of marginal, var-enum and the sparse latent alignments
# (sparsemax and 1.5-entmax, p or q) on `lava data synth`, 3 seeds each, 4,000 updates each with the context-free
# memory (--encoder embedding) that makes the alignment well posed (experiments/results/paper-tables/README.md).
# usage: experiments/results/sparse/synth-aer.sh LAVA [OUT] [--jobs N]   (LAVA: the lava binary to run)
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then echo "usage: $0 LAVA [OUT] [--jobs N]" >&2; exit 2; fi
lava=$(realpath "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${2:-$here/../../../runs/sparse-synth-aer}
LAVA=$lava exec "$here/../../synth-aer.sh" --out "$out" --threads 1 "${@:3}" --seed 1-3 --steps 4000 \
  --only "marginal var-enum sparse-marginal sparse-marginal-1.5 var-sparse var-sparse-1.5" \
  -- --encoder embedding --init 0.1
