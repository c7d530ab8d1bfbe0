#!/usr/bin/env python3
"""Converts the logs of the bash table scripts that preceded the sweep files (experiments/paper-tables.sh, in git
history before their removal; LOGS/nmt/logs/ATTN-sSEED.{train,eval,kK,kK.bleu}.jsonl and
LOGS/vqa/MIX/logs/ATTN-sSEED.{train,eval}.jsonl) into run folders as `lava sweep` writes them, so that
`lava report OUT --tables paper` builds the paper's tables from them:

  OUT/SWEEP/ID/config.ini     the run's options, "key = value", in the order lava sweep writes them (task, the
                              sweep's fixed options, the per-variant ones, attn, seed)
  OUT/SWEEP/ID/run.json       {"id", "index", "sweep", "task", "seed", "grid": {"attn": ...}}
  OUT/SWEEP/ID/status.json    {"state": "finished", "exit": 0, "sessions": N, "host": ""}
  OUT/SWEEP/ID/metrics.jsonl  the training log, byte for byte
  OUT/SWEEP/ID/eval/NAME.jsonl  one file per evaluation, byte for byte (test.jsonl, kmaxK.jsonl)

ID is FNV-1a 64 of the options that change results, as sweep_plan.cpp's run_id computes it. The options are those
those scripts (nmt-table1.sh and vqa-table1.sh) trained the small ("converged") tables with; the data paths are relative
to the sweep files' folder experiments/paper/, as a sweep file writes them.

usage: tools/paper_tables_to_runs.py LOGS OUT
"""
import json
import os
import re
import sys

NMT_OPTIONS = [
    ("data", "../../data/gettext-de-en-every5"),  # every 5th training pair of data/gettext-de-en, whole valid split
    ("emb-size", "64"), ("hidden-size", "128"), ("attn-size", "64"), ("inf-hidden", "64"), ("layers", "1"),
    ("batch-size", "32"), ("lr", "3e-3"), ("dropout", "0.2"), ("max-vocab", "4000"), ("max-len", "20"),
    ("epochs", "30"), ("start-decay-at", "2"), ("lr-decay", "0.5"), ("patience", "2"), ("init", "0.3"),
    ("clip", "5"), ("checkpoint-every", "500"), ("max-minutes", "0"), ("threads", "1"),
]
# The per-variant options of the translation rows (the scripts' variant_train_args, 1,061 updates an epoch).
NMT_VARIANT_OPTIONS = {
    "var-dirichlet": [("warm-start", "2122")],
    "var-gumbel": [("temperature", "0.1")],
    "var-rws": [("samples", "5")],
}
VQA_OPTIONS = [("epochs", "30"), ("start-decay-at", "2"), ("lr-decay", "0.5"), ("patience", "3"), ("threads", "1")]
ROW_ORDER = ["soft", "marginal", "hard-enum", "hard-sample", "var-dirichlet", "var-enum", "var-sample", "var-gumbel",
             "var-rws"]
UNTIMED = {"threads", "logits-cache-mb"}  # options that do not change results: not part of the id


def run_id(options):
    lines = sorted(f"{k}={v}\n" for k, v in options if k not in UNTIMED)
    h = 0xcbf29ce484222325
    for line in lines:
        for byte in line.encode():
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def runs_in(logs):
    """(attn, seed) of every training log in LOGS, in the tables' row order, then by seed."""
    found = []
    for name in os.listdir(logs):
        m = re.fullmatch(r"(.+)-s(\d+)\.train\.jsonl", name)
        if m:
            found.append((m.group(1), int(m.group(2))))
    return sorted(found, key=lambda r: (ROW_ORDER.index(r[0]) if r[0] in ROW_ORDER else len(ROW_ORDER), r[0], r[1]))


def copy(src, dst):
    with open(src, "rb") as f:
        data = f.read()
    with open(dst, "wb") as f:
        f.write(data)


def write_run(out, sweep, task, index, options, attn, seed, logs, evals):
    options = [("task", task)] + options + [("attn", attn), ("seed", str(seed))]
    rid = run_id(options)
    d = os.path.join(out, rid)
    os.makedirs(os.path.join(d, "eval"), exist_ok=True)
    with open(os.path.join(d, "config.ini"), "w") as f:
        f.writelines(f"{k} = {v}\n" for k, v in options)
    info = {"id": rid, "index": index, "sweep": sweep, "task": task, "seed": seed, "grid": {"attn": attn}}
    with open(os.path.join(d, "run.json"), "w") as f:
        f.write(json.dumps(info, separators=(",", ":")) + "\n")
    train = os.path.join(logs, f"{attn}-s{seed}.train.jsonl")
    with open(train) as f:
        text = f.read()
    sessions = 1 + text.count('"event":"stopped"')
    with open(os.path.join(d, "status.json"), "w") as f:
        f.write(json.dumps({"state": "finished", "exit": 0, "sessions": sessions, "host": ""}, separators=(",", ":"))
                + "\n")
    copy(train, os.path.join(d, "metrics.jsonl"))
    for suffix, name in evals:
        src = os.path.join(logs, f"{attn}-s{seed}.{suffix}")
        if os.path.exists(src):
            copy(src, os.path.join(d, "eval", name))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    logs, out = sys.argv[1], sys.argv[2]
    nmt_logs = os.path.join(logs, "nmt", "logs")
    nmt_evals = [("eval.jsonl", "test.jsonl"), ("k5.bleu.jsonl", "kmax5.jsonl")] + \
        [(f"k{k}.jsonl", f"kmax{k}.jsonl") for k in range(1, 11) if k != 5]
    for index, (attn, seed) in enumerate(runs_in(nmt_logs)):
        write_run(os.path.join(out, "nmt"), "experiments/paper/nmt.ini", "nmt", index,
                  NMT_OPTIONS + NMT_VARIANT_OPTIONS.get(attn, []), attn, seed, nmt_logs, nmt_evals)
    vqa = os.path.join(logs, "vqa")
    for mix in sorted(os.listdir(vqa)):
        mix_logs = os.path.join(vqa, mix, "logs")
        if not os.path.isdir(mix_logs):
            continue
        for index, (attn, seed) in enumerate(runs_in(mix_logs)):
            options = [("data", f"../../data/scenes-{mix}")] + VQA_OPTIONS
            write_run(os.path.join(out, f"vqa-{mix}"), f"experiments/paper/vqa-{mix}.ini", "vqa", index, options,
                      attn, seed, mix_logs, [("eval.jsonl", "test.jsonl")])


if __name__ == "__main__":
    main()
