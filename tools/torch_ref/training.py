"""A dump's batches and parameters, and its Adam updates (bias-corrected, on gradients clipped by global norm)."""
import math
import sys

import torch

from .objectives import objective


def load_batches(tensors, meta):
    """The training batches, the batch index of each step, and the evaluation batches of a dump."""
    groups = {}
    for k, t in tensors.items():
        head, _, field = k.partition("/")
        if field and (head.startswith("batch") or head.startswith("eval")):
            groups.setdefault(head, {})[field] = t
    def group(prefix, n):
        return [groups[f"{prefix}{i}"] for i in range(n)]
    batches = group("batch", int(meta["crosscheck/batches"]))
    n_eval = int(meta["crosscheck/eval_batches"])
    return batches, [int(x) for x in tensors["schedule"].tolist()], group("eval", n_eval) if n_eval else batches


def params_of(tensors, prefix):
    return {k[len(prefix):]: v.clone().requires_grad_(True) for k, v in tensors.items() if k.startswith(prefix)}


def train(model, tensors, meta, progress=None):
    """The dump's Adam updates from its initial parameters, on its schedule of batches and with its noise;
    returns the trained parameters and the loss of every step."""
    batches, schedule, _ = load_batches(tensors, meta)
    lr, clip = float(meta["crosscheck/lr"]), float(meta["crosscheck/clip"])
    P = params_of(tensors, "param/")
    m = {k: torch.zeros_like(p) for k, p in P.items()}
    s2 = {k: torch.zeros_like(p) for k, p in P.items()}
    losses = []
    for t in range(int(meta["crosscheck/steps"])):
        loss = objective(model, P, batches[schedule[t]], tensors.get(f"noise/{t}"), meta)
        grads = torch.autograd.grad(loss, list(P.values()), allow_unused=True)
        grads = [g if g is not None else torch.zeros_like(p) for g, p in zip(grads, P.values())]
        losses.append(float(loss))
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
        scale = clip / norm if clip > 0 and norm > clip else 1.0  # clipping by global norm
        c1, c2 = 1 - 0.9 ** (t + 1), 1 - 0.999 ** (t + 1)
        with torch.no_grad():
            for (k, p), g in zip(P.items(), grads):
                g = g * scale
                m[k].mul_(0.9).add_(0.1 * g)
                s2[k].mul_(0.999).add_(0.001 * g * g)
                p -= lr * (m[k] / c1) / ((s2[k] / c2).sqrt() + 1e-8)
        if progress and (t + 1) % progress == 0:
            print(f"step {t + 1}: loss lava {float(tensors['loss'][t]):.6f} ref {losses[-1]:.6f}", file=sys.stderr,
                  flush=True)
    return P, losses
