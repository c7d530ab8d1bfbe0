#!/usr/bin/env bash
# Copies the records of the medium-scale runs (translation, and VQA var-enum), of VQA var-enum at the paper's
# settings and of the VQA probes from the repository's runs/ into runs/ here, without their models:
# config.ini, run.json, status.json, metrics.jsonl, train.log and eval/*.jsonl, which is all `lava report` reads.
# Rerun it as the runs progress; a run still training shows as unfinished. The runs themselves live in the
# repository's runs/, which git ignores (README.md here says how they run), so a new machine starts without them:
# a run trained again from its first update keeps the record here until it passes it, and the epochs both reach
# must agree to the last digit, or the script stops with the first that differs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
# steps_in FILE: the most updates any line of a metrics.jsonl names (0 for none).
steps_in() { { grep -o '"steps":[0-9]*' "$1" 2>/dev/null || true; } | cut -d: -f2 | sort -n | tail -n 1 | grep . || echo 0; }
# epoch_lines_but_times FILE: a metrics.jsonl's epoch lines without their "seconds" and "cpu_seconds".
epoch_lines_but_times() { grep '"event":"epoch"' "$1" | sed -E 's/"(cpu_)?seconds":[^,}]*,?//g' || true; }
# same_epochs LIVE COMMITTED: whether the epochs both records reach have the same lines but for their times, to the
# last digit (a run's bits depend only on its seed and data, so a run trained again from its first update, on a new
# machine for instance, must retrace them). Prints how many it compared, or the first that differs.
same_epochs() {
  local a b n
  a=$(epoch_lines_but_times "$1") b=$(epoch_lines_but_times "$2")
  [ -n "$a" ] && [ -n "$b" ] || { echo "no epoch in common yet"; return 0; }
  n=$(( $(wc -l <<<"$a") < $(wc -l <<<"$b") ? $(wc -l <<<"$a") : $(wc -l <<<"$b") ))
  if [ "$(head -n "$n" <<<"$a")" = "$(head -n "$n" <<<"$b")" ]; then
    echo "epochs both reach: $n, equal to the last digit"
  else
    echo "DIFFERS from the committed record: $(diff <(head -n "$n" <<<"$a") <(head -n "$n" <<<"$b") | grep '^[<>]' | head -n 2 | tr '\n' ' ')"
    return 1
  fi
}
sweeps="paper/nmt-medium paper/vqa-default-paper paper/vqa-default-medium probe-vqa-optimiser probe-vqa-dropout
  probe-vqa-size probe-vqa-paper-20k"
# --restore, on a new machine: copies the finished runs' records from here back into runs/, so that the sweeps skip
# them (a finished run whose evaluations are written is done) instead of training them again.
if [ "${1:-}" = --restore ]; then
  for sweep in $sweeps; do
    for run in "$here/runs/$(basename "$sweep")"/*/; do
      dest="$root/runs/$sweep/$(basename "$run")"
      grep -q '"state":"finished"' "$run/status.json" 2>/dev/null && [ ! -e "$dest" ] || continue
      mkdir -p "$(dirname "$dest")" && cp -r "$run" "$dest" && echo "collect.sh: restored $dest"
    done
  done
  exit 0
fi
for sweep in $sweeps; do
  for run in "$root/runs/$sweep"/*/; do
    [ -f "$run/run.json" ] || continue  # also when the sweep has not started: the pattern stays unexpanded
    dest="$here/runs/$(basename "$sweep")/$(basename "$run")"
    # A run trained again from scratch keeps its committed record, which is further along, until it passes it.
    if [ -f "$dest/metrics.jsonl" ] && [ -f "$run/metrics.jsonl" ]; then
      live=$(steps_in "$run/metrics.jsonl") kept=$(steps_in "$dest/metrics.jsonl")
      check=$(same_epochs "$run/metrics.jsonl" "$dest/metrics.jsonl") || { echo "collect.sh: $run: $check" >&2; exit 1; }
      if [ "$live" -lt "$kept" ]; then
        echo "collect.sh: kept the committed record of $(basename "$run") ($kept updates; this one is at $live): $check"
        continue
      fi
    fi
    mkdir -p "$dest"
    # Paths inside the records are made relative to the repository root: no machine's directory in git.
    for f in config.ini run.json status.json metrics.jsonl train.log; do
      # run.json names the sweep file that last prepared the run. A committed one is kept: soft's names the table
      # (experiments/paper/nmt.ini, which evaluated it), not the launch copy in runs/ that resumes the other two.
      [ "$f" = run.json ] && [ -f "$dest/$f" ] && continue
      [ -f "$run/$f" ] && sed "s|$root/||g" "$run/$f" > "$dest/$f"
    done
    if compgen -G "$run/eval/*.jsonl" > /dev/null; then
      mkdir -p "$dest/eval"
      cp "$run"/eval/*.jsonl "$dest/eval/"
    fi
  done
done
# The translation runs' validation curves (nmt-curves.svg here), when the binary is built.
lava="$root/build/lava"
[ -x "$lava" ] && "$lava" report "$here/runs/nmt-medium" --tables paper --plots "$here" > /dev/null
echo "collected into $here/runs (lava report $here/runs/nmt-medium --tables paper)"
