#!/usr/bin/env bash
# The training speed of the sparse variants once their support has shrunk: trains marginal, var-enum,
# sparse-marginal and var-sparse (sparsemax and 1.5-entmax) at the small table's shape (experiments/paper/nmt.ini,
# scale small) on the gettext corpus for the same number of updates (seed 1), and the two sparsemax variants for one
# update (the -init rows: the support of an untrained model, the measurement from random weights on the same batch);
# then times `lava bench train --init-model MODEL --data CORPUS` of each model in rounds, the order of the models
# rotated round by round so that a drift of the machine's speed favours none, and prints every measurement as
# "round label tokens_per_s support" (also OUT/bench.txt), then per label the median over rounds of its tokens/s over
# its dense counterpart's in the same round (marginal for sparse-marginal, var-enum for var-sparse) and its median
# support. README.md says what they came to.
# usage: experiments/results/sparse/bench-trained.sh LAVA [OUT] [UPDATES] [ROUNDS]   (LAVA: the lava binary to run)
# MORE="LABEL=MODEL ..." adds models trained elsewhere to the rounds (a label starting with sparse-marginal or
# var-sparse is compared with marginal or var-enum), e.g. a sweep run's converged model.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then echo "usage: $0 LAVA [OUT] [UPDATES] [ROUNDS]" >&2; exit 2; fi
lava=$(realpath "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OMP_WAIT_POLICY=passive  # two one-thread processes may share the cores: no spinning while waiting
# json_get LINE KEY: KEY's value in one JSON line (strings unquoted), or nothing.
json_get() {
  local v
  v=$(printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2-) || true
  v=${v#\"}
  printf '%s' "${v%\"}"
}
dir=${2:-$here/../../../runs/sparse-bench-trained} updates=${3:-1061} rounds=${4:-5}
corpus=$here/../../../data/gettext-de-en-every5
mkdir -p "$dir"
# The small scale's options of experiments/paper/nmt.ini, but a fixed budget of updates instead of its stopping rule.
small=(--emb-size 64 --hidden-size 128 --attn-size 64 --inf-hidden 64 --layers 1 --batch-size 32 --lr 3e-3
  --dropout 0.2 --max-vocab 4000 --max-len 20 --init 0.3 --clip 5)
# "label updates attn [options]"; updates "-": UPDATES.
models=("marginal - marginal" "var-enum - var-enum" "sparse-marginal - sparse-marginal"
  "sparse-marginal-1.5 - sparse-marginal --alpha 1.5" "var-sparse - var-sparse"
  "var-sparse-1.5 - var-sparse --alpha 1.5" "sparse-marginal-init 1 sparse-marginal" "var-sparse-init 1 var-sparse")
for m in "${models[@]}"; do
  read -r label steps attn extra <<<"$m"
  read -ra extra <<<"${extra:-}"
  [ "$steps" = - ] && steps=$updates
  [ -f "$dir/$label.st" ] && continue
  "$lava" train --task nmt --data "$corpus" --attn "$attn" "${extra[@]}" "${small[@]}" --max-steps "$steps" \
    --seed 1 --threads 1 --save "$dir/$label.st" --format json >"$dir/$label.train.jsonl" 2>"$dir/$label.train.log"
  rm -f "$dir/$label.st.resume"
done
[ "${BENCH:-1}" = 1 ] || exit 0
declare -A file
for m in "${models[@]}"; do read -r label _ <<<"$m"; file[$label]=$dir/$label.st; done
for more in ${MORE:-}; do
  [ -f "${more#*=}" ] || { echo "$0: no model ${more#*=}" >&2; exit 1; }
  models+=("${more%%=*}") file[${more%%=*}]=${more#*=}
done
# The batches of a training epoch over the valid split (32 pairs of similar lengths, up to 20 tokens a side, as the
# models trained), the same for every model; one thread, as the table's runs train.
n=${#models[@]}
: >"$dir/bench.txt"
for r in $(seq 1 "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    read -r label _ <<<"${models[$(((k + r) % n))]}"
    row=$("$lava" bench train --init-model "${file[$label]}" --data "$corpus" --max-len 20 --threads 1 --steps 12 \
      --warmup 2 --format json -q | tail -n 1)
    echo "$r $label $(json_get "$row" tokens_per_s) $(json_get "$row" support)" | tee -a "$dir/bench.txt"
  done
done
echo "| model | dense counterpart | tokens/s over it (median of rounds) | min | max | support (median) |"
echo "|---|---|--:|--:|--:|--:|"
# median(list): the middle value, or the mean of the two middle ones (insertion sort: mawk has no asort).
awk '
  function median(list,   v, m, i, j, t) {
    m = split(list, v, " ")
    for (i = 2; i <= m; i++)
      for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
  }
  { tps[$1, $2] = $3; sup[$2] = sup[$2] " " $4; labels[$2] = 1; rounds[$1] = 1 }
  END {
    for (l in labels) {
      base = l ~ /^sparse-marginal/ ? "marginal" : l ~ /^var-sparse/ ? "var-enum" : ""
      if (base == "") continue
      ratios = ""; lo = 1e9; hi = 0
      for (r in rounds) { x = tps[r, l] / tps[r, base]; ratios = ratios " " x; if (x < lo) lo = x; if (x > hi) hi = x }
      printf "| %s | %s | %.3f | %.3f | %.3f | %.2f |\n", l, base, median(ratios), lo, hi, median(sup[l])
    }
  }' "$dir/bench.txt" | sort
