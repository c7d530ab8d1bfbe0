#!/usr/bin/env bash
# epoch-check.sh [LAVA] [WORKDIR] [VARIANTS...]: the CPU seconds of a whole first epoch of the small translation table's
# runs (1,061 updates and the epoch-end validation) against a run of 10 updates with the stopping validation, at one
# thread: (cpu(epoch) - cpu(10)) / (1061 - 10) is the measured CPU time an update over a whole epoch, to set beside
# the --estimate figure timed on 30 updates. CPU time (user + system, GNU time) is what a core-hour counts and what
# other processes on a loaded machine inflate least. Needs compare.sh's WORKDIR/corpus.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
LAVA=${1:-$ROOT/build/lava}
WORK=${2:-${TMPDIR:-/tmp}/lava-estimate-nmt}
shift 2 || true
VARIANTS=${*:-soft marginal var-enum hard-sample}
args=(--task nmt --data "$WORK/corpus" --emb-size 64 --hidden-size 128 --attn-size 64 --inf-hidden 64 --layers 1
  --batch-size 32 --lr 3e-3 --dropout 0.2 --max-vocab 4000 --max-len 20 --epochs 1 --init 0.3 --clip 5 --seed 1
  --threads 1 --format json --quiet)
cpu() { # cpu VARIANT STEPS: user + system seconds of lava train (STEPS 0: the whole epoch)
  local steps=() t
  [ "$2" = 0 ] || steps=(--max-steps "$2")
  rm -f "$WORK/epoch-check.safetensors"*
  t=$({ OMP_WAIT_POLICY=passive /usr/bin/time -f '%U %S' "$LAVA" train "${args[@]}" --attn "$1" "${steps[@]}" \
    --save "$WORK/epoch-check.safetensors" >/dev/null; } 2>&1 | tail -n 1)
  awk '{ printf "%.2f", $1 + $2 }' <<<"$t"
}
echo "| variant | cpu s, 10 updates | cpu s, epoch (1061) | cpu s an update over the epoch |"
echo "|---|---:|---:|---:|"
for v in $VARIANTS; do
  a=$(cpu "$v" 10)
  b=$(cpu "$v" 0)
  awk -v v="$v" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.2f | %.2f | %.4f |\n", v, a, b, (b - a) / 1051 }'
done
