"""Each attention variant's objective (the loss of a batch LAVA differentiates), and the evaluation sums and
per-token figures `lava eval` reports."""
import math

import torch

from .models import pick_y
from .sparse import entmax15, sparsemax, support_marginal


def xlogy_sum(q, a):
    """sum_s q_s a_s over the positions with q_s > 0 (0 log 0 = 0; padding has a = -inf)."""
    return torch.where(q > 0, q * torch.where(q > 0, a, torch.zeros_like(a)), torch.zeros_like(q)).sum(-1)


def kl_cat(log_q, log_p):
    return xlogy_sum(log_q.exp(), log_q - log_p.masked_fill(torch.isinf(log_p), 0.0))


def sparse_probs(model, log_probs):
    """The sparse variants' distribution from a log-softmax over positions (-inf at padding): sparsemax or 1.5-entmax
    of its scores, which are log_probs up to a constant per row (both maps are invariant to adding one)."""
    return (entmax15 if model.sparse_alpha == 1.5 else sparsemax)(log_probs)


def safe_log(p):
    """log p where p > 0, 0 elsewhere (the sums over the support never read it there; no inf in the gradient)."""
    return torch.where(p > 0, p, torch.ones_like(p)).log()


def objective(model, P, batch, noise, meta):
    """The batch's loss (the scalar LAVA differentiates) for the model's variant."""
    if hasattr(model, "loss"):
        return model.loss(P, batch, noise)
    f = model.forward(P, batch)
    v, lp, y, mask = model.attn, f["log_prior"], f["y"], f["mask"]
    B, T, S = lp.shape
    lf = pick_y(f["log_f"], y)  # (B, T, S)
    soft = pick_y(f["word_log_probs_at"](lp.exp()), y)  # log f(x, E_p z): (B, T)
    if v in ("none", "soft"):
        per = soft
    elif v == "marginal":
        per = torch.logsumexp(lp + lf, -1)
    elif v == "hard-enum":
        per = xlogy_sum(lp.exp(), lf)
    elif v == "var-enum":
        lq = f["log_q"]
        per = xlogy_sum(lq.exp(), lf) - kl_cat(lq, lp)
    elif v == "sparse-marginal":  # log sum_{i in supp p} p_i f_i, p = sparsemax(s)
        per = support_marginal(sparse_probs(model, lp), lf)
    elif v == "var-sparse":  # sum_{i in supp q} q_i (log f_i - log q_i + log p_i), q sparse, p softmax
        q = sparse_probs(model, f["log_q"])
        per = xlogy_sum(q, lf + lp.masked_fill(torch.isinf(lp), 0.0) - safe_log(q))
    elif v in ("hard-sample", "var-sample"):
        lr = lp if v == "hard-sample" else f["log_q"]
        z = noise.long().reshape(B, T)
        lfz = torch.gather(lf, 2, z[..., None]).squeeze(-1)
        lrz = torch.gather(lr, 2, z[..., None]).squeeze(-1)
        per = lfz + (lfz - soft).detach() * lrz
        if v == "var-sample":
            per = per - kl_cat(f["log_q"], lp)
    elif v == "var-gumbel":
        lq = f["log_q"]
        tau = float(meta["crosscheck/temperature"])
        relaxed = torch.softmax((lq + noise.reshape(B, T, S)) / tau, -1)
        per = pick_y(f["word_log_probs_at"](relaxed), y) - kl_cat(lq, lp)
    elif v == "var-rws":
        lq = f["log_q"]
        K = int(meta["crosscheck/samples"])
        z = noise.long().reshape(B, T, K)
        g = lambda a: torch.gather(a, 2, z)  # (B, T, K)
        lfk, lpk, lqk = g(lf), g(lp), g(lq)
        w = torch.softmax((lpk - lqk + lfk).detach(), -1)
        per = (w * (lfk + lpk + lqk)).sum(-1)
    else:
        raise ValueError(f"variant {v} is not in the reference")
    return -(per * mask).sum() / B


def evaluate(model, P, batches, kmax):
    """The evaluation sums LAVA reports (src/method.md §4.1), over real target tokens."""
    if hasattr(model, "eval_sums"):
        return model.eval_sums(P, batches, evaluate.noises)
    s = dict(tokens=0.0, log_lik=0.0, elbo=0.0, kl=0.0, kl_posterior=0.0, entropy=0.0, correct=0.0)
    with torch.no_grad():
        for batch in batches:
            f = model.forward(P, batch)
            lp, y, mask = f["log_prior"], f["y"], f["mask"]
            if model.attn == "sparse-marginal":  # its prior is sparse: log 0 = -inf off the support
                p = sparse_probs(model, lp)
                lp = safe_log(p).masked_fill(p <= 0, -math.inf)
            S = lp.shape[-1]
            if kmax > 0 and kmax < S:  # K-max: the top K prior positions (ties: the lower one), renormalised
                order = torch.sort(-lp, stable=True, dim=-1).indices
                keep = torch.zeros_like(lp, dtype=torch.bool).scatter(-1, order[..., :kmax], True)
                lp = torch.log_softmax(lp.masked_fill(~keep, -math.inf), -1)
            p = lp.exp()
            H = -xlogy_sum(p, lp)
            if model.attn == "none":  # a fixed average; K-max does not apply
                w = f["src_real"].to(torch.float64)
                w = (w / w.sum(-1, keepdim=True))[:, None, :].expand_as(lp)
            else:
                w = p
            lf_all = f["log_f"]
            if model.attn in ("none", "soft"):
                words = f["word_log_probs_at"](w)  # (B, T, V)
                log_lik = elbo = pick_y(words, y)
                kl = kl_post = torch.zeros_like(log_lik)
            else:
                lf = pick_y(lf_all, y)
                words = torch.logsumexp(lp[..., None] + lf_all, 2)  # the exact marginal over words (B, T, V)
                log_lik = torch.logsumexp(lp + lf, -1)
                lq = torch.log_softmax(f["log_q"], -1) if model.uses_q else lp
                if model.attn == "var-sparse":
                    q = sparse_probs(model, f["log_q"])
                    lq = safe_log(q).masked_fill(q <= 0, -math.inf)
                q = lq.exp()
                # Where K-max cuts a position q keeps, log p = -inf: the ELBO is -inf and both KLs +inf.
                elbo = xlogy_sum(q, lf + lp - lq)
                kl = xlogy_sum(q, lq - lp)
                kl_post = xlogy_sum(q, lq - (lp + lf - log_lik[..., None]))
            correct = (words.argmax(-1) == y)  # argmax ties: the first (lowest) id
            m = mask.to(torch.float64)
            s["tokens"] += float(m.sum())
            for k, t in (("log_lik", log_lik), ("elbo", elbo), ("kl", kl), ("kl_posterior", kl_post),
                         ("entropy", H), ("correct", correct.to(torch.float64))):
                s[k] += float(t.masked_fill(m == 0, 0).sum())  # not t * m: an infinite padding token times 0 is nan
    return s


def figures(s):
    """Per-token figures from sums (as `lava eval` prints them)."""
    n = max(1.0, s["tokens"])
    return dict(nll=-s["log_lik"] / n, elbo=s["elbo"] / n, kl=s["kl"] / n, kl_gap=(s["log_lik"] - s["elbo"]) / n,
                kl_posterior=s["kl_posterior"] / n, entropy=s["entropy"] / n, accuracy=s["correct"] / n)
