#!/usr/bin/env bash
# tools/bench-ab.sh NEW OLD [ROUNDS]: two lava binaries' `lava bench train` tokens/s, soft and var-enum on 1 and 2
# threads, alternated round by round (odd rounds NEW first, even rounds OLD first), so that a drift of the
# machine's speed favours neither; prints every measurement as "round attn threads who tokens_per_s".
set -euo pipefail
new=$1 base=$2 rounds=${3:-7}
export OMP_WAIT_POLICY=passive
for r in $(seq 1 $rounds); do
  for attn in soft var-enum; do
    for th in 1 2; do
      if (( r % 2 )); then order="new base"; else order="base new"; fi
      for who in $order; do
        bin=$new; [ $who = base ] && bin=$base
        tps=$($bin bench train --attn $attn --threads $th --steps 8 --format json 2>/dev/null | tail -1 | sed 's/.*"tokens_per_s":\([0-9.]*\).*/\1/')
        echo "$r $attn $th $who $tps"
      done
    done
  done
done
