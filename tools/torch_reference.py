#!/usr/bin/env python3
"""An independent float64 PyTorch implementation of LAVA's translation model (and of its VQA model and sequence VAE:
VqaModel, SeqVaeModel below), to cross-check LAVA step for step.

Written from the formulas of src/method.md (§1, §2, §4). LAVA's C++ was read
only for parameter names, layouts and conventions:
  - a linear map is x W (+ b) with W stored (in, out); LSTM gates are the columns [i | f | g | o] of x W_ih + h W_hh + b;
  - a bidirectional LSTM has hidden/2 units per direction, outputs [forward ; backward]; the backward direction reads
    each sentence reversed within its own length; both start from zeros;
  - the loss of a batch is -(sum over real target tokens of the per-token objective) / (sentences in the batch);
  - Adam (beta 0.9, 0.999, eps 1e-8, bias-corrected) on gradients clipped by global norm, factor min(1, clip/norm).

The model (src/method.md §1): memory x_1..x_S from a BiLSTM over source embeddings; a decoder LSTM whose input at
step j is [emb(y_{j-1}) ; c_{j-1}], c = sum_i p(z=i) x_i the soft context under the prior, initial state zeros;
prior p(z_j=i) = softmax_i v^T tanh(W_q h_j + W_k x_i) (or (h W) . x_i, h . x_i); f(x, z=i) =
softmax(W_gen tanh(W_h h_j + b + W_x x_i) + b_gen); q(z_j=i | x, y) = softmax_i (W h^tgt_j) . h^src_i from two
one-layer BiLSTMs over the source and the whole target y_1..y_n <eos>. Objectives per target token j (src/method.md §2):
  none         log f(x, mean of the real x_i)          soft      log f(x, E_p z)
  marginal     log sum_i p_i f_i                       hard-enum sum_i p_i log f_i
  hard-sample  log f_z + sg(log f_z - log f_soft) log p_z,  z ~ p   (REINFORCE, soft baseline; paper eq. 1)
  var-enum     sum_i q_i log f_i - KL(q||p)
  var-sample   log f_z - KL(q||p) + sg(log f_z - log f_soft) log q_z,  z ~ q
  var-gumbel   log f(x, softmax((log q + g)/tau)) - KL(q||p)
  var-rws      sum_k w_k (log f_k + log p_k + log q_k),  z_k ~ q,  w = sg(normalised p_k f_k / q_k)
  sparse-marginal  log sum_{i in supp p} p_i f_i,  p = sparsemax(s) (1.5-entmax when the model's alpha is 1.5)
  var-sparse   sum_{i in supp q} q_i (log f_i - log q_i + log p_i),  q = sparsemax(s_q), p softmax
                                           (torch_ref/sparse.py's formulas; evaluation over all positions, log 0
                                           = -inf off the support)
The draws z and g come from LAVA's dump (its noise); everything else is recomputed here.

Usage:  torch_reference.py check FILE...   compare with each `lava crosscheck-dump` file; one line per check, then
                                           `crosscheck: N passed, M failed`; exit status 1 on a failure.
                                           --jobs J checks J files at once (one process each, one thread
                                           each; the lines come out in the files' order all the same).
        torch_reference.py train FILE      a whole run from a `lava crosscheck-dump --data DIR` file: both loss
                                           trajectories, then one JSON line with LAVA's figures, the reference's
                                           figures of LAVA's trained model, and those of its own trained model.
Run it with Debian's /usr/bin/python3 (python3-torch); `make crosscheck` does.
"""
import argparse
import contextlib
import io
import json
import math
import multiprocessing
import sys

import torch

from torch_ref.models import make_model
from torch_ref.objectives import evaluate, figures, objective
from torch_ref.safetensors import read_safetensors
from torch_ref.training import load_batches, params_of, train  # importing torch_ref sets float64 as the default

# Tolerances of LAVA (float32) against this reference (float64), measured and stated in tests/README.md ("Cross-check against PyTorch").
TOL_OBJECTIVE = 1e-6    # relative, the loss at step 0
TOL_GRAD_ALL = 1e-6     # relative L2 error of the whole gradient at step 0
TOL_GRAD = 1e-5         # relative L2 error of each parameter's gradient at step 0 ...
TOL_GRAD_FLOOR = 1e-7   # ... counting errors below this fraction of the whole gradient's norm as zero
TOL_TRAJECTORY = 1e-5   # largest |loss_lava - loss_ref| / max(1, |loss_ref|) over the Adam updates
TOL_EVAL_REL, TOL_EVAL_ABS = 1e-5, 1e-6  # per-token evaluation figures: |a - b| <= abs + rel |b|


# ---------------------------------------------------------------------------------------------------------------
# The comparison
class Report:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail):
        print(f"{'pass' if ok else 'FAIL'}  {name:<44} {detail}")
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def use_eval_noises(tensors, eval_set):
    """The dump's noise of each evaluation batch (the sequence VAE's eps), for evaluate to read."""
    evaluate.noises = [tensors.get(f"evalnoise/{k}") for k in range(len(eval_set))]


def compare_training(path, every):
    """A whole training run of both implementations from one dump (`lava crosscheck-dump --data DIR`): the loss
    trajectories side by side, and the evaluation figures of each implementation's own trained model."""
    tensors, meta = read_safetensors(path)
    model = make_model(meta)
    _, _, eval_set = load_batches(tensors, meta)
    use_eval_noises(tensors, eval_set)
    P, losses = train(model, tensors, meta, progress=every)
    lava_losses = [float(x) for x in tensors["loss"]]
    ref = figures(evaluate(model, {k: p.detach() for k, p in P.items()}, eval_set, 0))
    lava = figures(json.loads(meta["eval/trained/k0"]))
    lava_by_ref = figures(evaluate(model, {k: p.detach() for k, p in params_of(tensors, "trained/").items()},
                                   eval_set, 0))
    window = max(1, len(losses) // 10)
    print(json.dumps({"attn": model.attn, "steps": len(losses),
                      "loss_last_window_lava": sum(lava_losses[-window:]) / window,
                      "loss_last_window_ref": sum(losses[-window:]) / window,
                      "lava": lava, "lava_model_by_ref": lava_by_ref, "ref": ref}))


def check_file(path, rep):
    tensors, meta = read_safetensors(path)
    model = make_model(meta)
    if meta["task"] == "seqvae":
        v = f"seqvae ({model.layers} layers)"
    else:
        v = f"{meta['task']} {model.attn}" + ("" if model.score == "mlp" else f" ({model.score}, {model.layers} layer)")
        if float(meta.get("alpha", 2)) == 1.5:
            v += " (1.5-entmax)"
    batches, schedule, eval_set = load_batches(tensors, meta)
    steps = int(meta["crosscheck/steps"])
    use_eval_noises(tensors, eval_set)
    noise = lambda t: tensors.get(f"noise/{t}")
    P = params_of(tensors, "param/")

    # 1. The objective and every parameter's gradient at step 0.
    loss = objective(model, P, batches[schedule[0]], noise(0), meta)
    loss.backward()
    lava_loss = float(tensors["loss"][0])
    rel = abs(lava_loss - float(loss)) / max(1e-12, abs(float(loss)))
    rep.check(f"{v} objective", rel <= TOL_OBJECTIVE, f"lava {lava_loss:.9g} ref {float(loss):.9g} rel {rel:.1e}")
    g_ref = {n: p.grad if p.grad is not None else torch.zeros_like(p) for n, p in P.items()}
    g_lava = {n: tensors["grad/" + n] for n in P}
    total = math.sqrt(sum(float((g * g).sum()) for g in g_ref.values()))
    diff = math.sqrt(sum(float(((g_lava[n] - g_ref[n]) ** 2).sum()) for n in P))
    rep.check(f"{v} gradient, all parameters", diff <= TOL_GRAD_ALL * total,
              f"relative L2 error {diff / max(total, 1e-300):.1e} of norm {total:.3g}")
    worst, worst_name = 0.0, ""
    for n in P:  # each tensor to TOL_GRAD of its own norm, with a floor of TOL_GRAD_FLOOR of the whole gradient's
        r = float((g_lava[n] - g_ref[n]).norm()) / (float(g_ref[n].norm()) + TOL_GRAD_FLOOR / TOL_GRAD * total)
        if r > worst:
            worst, worst_name = r, n
    rep.check(f"{v} gradient of each of {len(P)} parameters", worst <= TOL_GRAD,
              f"largest relative L2 error {worst:.1e} ({worst_name})")

    # 2. Adam on the same batches and noise: the loss trajectory.
    P, losses = train(model, tensors, meta)
    gaps = [abs(float(a) - b) / max(1.0, abs(b)) for a, b in zip(tensors["loss"], losses)]
    gap_step = max(range(steps), key=lambda t: gaps[t])
    rep.check(f"{v} {steps} Adam updates", gaps[gap_step] <= TOL_TRAJECTORY,
              f"largest relative loss gap {gaps[gap_step]:.1e} (step {gap_step}); final loss lava "
              f"{float(tensors['loss'][-1]):.6f} ref {losses[-1]:.6f}")

    # 3. Every evaluation figure, of the initial and of LAVA's trained model, exact and K-max.
    kmax = int(meta["crosscheck/kmax"])
    for when in ("init", "trained"):
        Pw = {k: t.detach() for k, t in params_of(tensors, "param/" if when == "init" else "trained/").items()}
        for k in sorted({0, kmax}):
            ref = figures(evaluate(model, Pw, eval_set, k))
            # LAVA writes an infinite sum (K-max cutting a position q keeps) as JSON null: it matches an infinite ref.
            sums = {n: math.nan if x is None else x for n, x in json.loads(meta[f"eval/{when}/k{k}"]).items()}
            lava = figures(sums)
            bad = [f"{n} lava {lava[n]:.9g} ref {ref[n]:.9g}" for n in ref
                   if not (abs(lava[n] - ref[n]) <= TOL_EVAL_ABS + TOL_EVAL_REL * abs(ref[n])
                           or (math.isnan(lava[n]) and math.isinf(ref[n])))]
            finite = [n for n in ref if math.isfinite(ref[n])]
            worst = max([abs(lava[n] - ref[n]) / max(1e-12, abs(ref[n])) for n in finite] + [0])
            infinite = f" ({len(ref) - len(finite)} infinite in both)" if len(finite) < len(ref) else ""
            rep.check(f"{v} eval {when} {'exact' if k == 0 else f'K-max {k}'}", not bad,
                      "; ".join(bad) if bad else
                      f"{len(ref)} figures{infinite}, largest relative gap {worst:.1e}, nll {ref['nll']:.6f}")


def check_file_captured(path):
    """check_file in a worker process (--jobs): its lines and counts, for the parent to print in the files' order."""
    torch.set_num_threads(1)
    rep, out = Report(), io.StringIO()
    with contextlib.redirect_stdout(out):
        check_file(path, rep)
    return out.getvalue(), rep.passed, rep.failed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="compare with lava crosscheck-dump files")
    c.add_argument("files", nargs="+")
    c.add_argument("--jobs", type=int, default=1, help="files checked at once, one process each")
    t = sub.add_parser("train", help="train from a `lava crosscheck-dump --data DIR` file; compare whole runs")
    t.add_argument("file")
    t.add_argument("--every", type=int, default=100, help="print both losses every this many steps")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.cmd == "train":
        compare_training(a.file, a.every)
        return 0
    rep = Report()
    if a.jobs > 1:  # spawned, not forked: a fork of a process that has run torch ops may inherit a held lock
        with multiprocessing.get_context("spawn").Pool(a.jobs) as pool:
            for text, passed, failed in pool.imap(check_file_captured, a.files):
                sys.stdout.write(text)
                sys.stdout.flush()
                rep.passed += passed
                rep.failed += failed
    else:
        for path in a.files:
            check_file(path, rep)
    print(f"crosscheck: {rep.passed} passed, {rep.failed} failed")
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
