#!/usr/bin/env bash
# Copies the records of the medium-scale runs (translation, and VQA var-enum), of VQA var-enum at the paper's
# settings and of the VQA probes from the repository's runs/ into runs/ here, without their models:
# config.ini, run.json, status.json, metrics.jsonl, train.log and eval/*.jsonl, which is all `lava report` reads.
# Rerun it as the runs progress; a run still training shows as unfinished. The runs themselves live in the
# repository's runs/, which git ignores (README.md here says how they run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
for sweep in paper/nmt-medium paper/vqa-default-paper paper/vqa-default-medium probe-vqa-optimiser probe-vqa-dropout probe-vqa-size \
    probe-vqa-paper-20k; do
  for run in "$root/runs/$sweep"/*/; do
    [ -f "$run/run.json" ] || continue  # also when the sweep has not started: the pattern stays unexpanded
    dest="$here/runs/$(basename "$sweep")/$(basename "$run")"
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
