#!/usr/bin/env bash
# compare.sh [LAVA] [WORKDIR] [STEPS]: `lava sweep plan --estimate` of the small translation table (the settings of
# ../paper-tables/runs/nmt/*/config.ini, on the same data: every 5th training pair of data/gettext-de-en, which
# experiments/paper/prepare-data.sh nmt-small makes) against the seconds its runs took (../paper-tables/runs/nmt/*/
# metrics.jsonl, their done lines). Writes WORKDIR/estimate.jsonl
# (the estimate's rows) and prints one markdown row per variant and seed: updates and epochs the run made, its
# measured seconds an update (validations included), the estimate for that many updates and validations, and the
# error. The estimate is CPU time at one thread; the runs' seconds are wall-clock at one thread each, two runs at a
# time on the 2 cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
LAVA=${1:-$ROOT/build/lava}
WORK=${2:-${TMPDIR:-/tmp}/lava-estimate-nmt}
STEPS=${3:-100}  # --estimate-steps
RUNS=$ROOT/experiments/results/paper-tables/runs/nmt
LAVA=$LAVA "$ROOT/experiments/paper/prepare-data.sh" nmt-small
mkdir -p "$WORK"
ln -sfn "$ROOT/data/gettext-de-en-every5" "$WORK/corpus"

# The table's lava train options (settings.txt), as a sweep file; a variant with options of its own is a file of its own.
common="task = nmt
data = corpus
emb-size = 64
hidden-size = 128
attn-size = 64
inf-hidden = 64
layers = 1
batch-size = 32
lr = 3e-3
dropout = 0.2
max-vocab = 4000
max-len = 20
epochs = 30
start-decay-at = 2
lr-decay = 0.5
patience = 2
init = 0.3
clip = 5
checkpoint-every = 500
max-minutes = 0"
printf '%s\ngrid.attn = soft, marginal, hard-enum, hard-sample, var-enum, var-sample\nseeds = 1-3\n' "$common" >"$WORK/main.ini"
printf '%s\nattn = var-dirichlet\nwarm-start = 2122\n' "$common" >"$WORK/dirichlet.ini"
printf '%s\nattn = var-gumbel\ntemperature = 0.1\n' "$common" >"$WORK/gumbel.ini"
printf '%s\nattn = var-rws\nsamples = 5\n' "$common" >"$WORK/rws.ini"
: >"$WORK/estimate.jsonl"
for f in main dirichlet gumbel rws; do
  OMP_WAIT_POLICY=passive "$LAVA" sweep plan "$WORK/$f.ini" --estimate --estimate-steps "$STEPS" --format json |
    grep -v '"id":"total"' | sed "s/^{/{\"file\":\"$f\",/" >>"$WORK/estimate.jsonl"
done

python3 - "$WORK/estimate.jsonl" "$RUNS" <<'PY'
import json, sys, glob, os
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fixed = {"dirichlet": "var-dirichlet", "gumbel": "var-gumbel", "rws": "var-rws"}
cost = {}
for r in rows:
    attn = r.get("attn") or fixed[r["file"]]
    cost[attn] = r
print("| variant | seed | updates | epochs | measured s/update | estimated s/update | error |")
print("|---|---:|---:|---:|---:|---:|---:|")
errs = {}
for run in sorted(glob.glob(os.path.join(sys.argv[2], "*", "")), key=lambda r: json.load(open(r + "run.json"))["index"]):
    done = [json.loads(l) for l in open(run + "metrics.jsonl") if '"event":"done"' in l]
    if not done: continue
    d = done[-1]
    attn, seed = d["attn"], json.load(open(run + "run.json"))["seed"]
    c = cost[attn]
    steps, epochs = d["steps"], d["epochs"]
    warm = min(c.get("warm_start", 0) or 0, steps)
    est = warm * c.get("warm_update_s", c["update_s"]) + (steps - warm) * c["update_s"] + epochs * c["validation_s"]
    measured = d["seconds"] / steps
    e = est / d["seconds"] - 1
    errs.setdefault(attn, []).append(e)
    print(f"| {attn} | {seed} | {steps} | {epochs} | {measured:.4f} | {est / steps:.4f} | {100 * e:+.0f} % |")
print()
print("| variant | error, fastest seed | error, mean over seeds |")
print("|---|---:|---:|")
for attn, e in errs.items():
    print(f"| {attn} | {100 * max(e):+.0f} % | {100 * sum(e) / len(e):+.0f} % |")
PY
