#!/usr/bin/env python3
"""An independent float64 PyTorch implementation of LAVA's translation model (and of its VQA model and sequence VAE:
VqaModel, SeqVaeModel below), to cross-check LAVA step for step.

Written from /work/shared/docs/paper-notes.md (§1.1-§1.4, §1.6, §1.7) and README.md's formulas. LAVA's C++ was read
only for parameter names, layouts and conventions:
  - a linear map is x W (+ b) with W stored (in, out); LSTM gates are the columns [i | f | g | o] of x W_ih + h W_hh + b;
  - a bidirectional LSTM has hidden/2 units per direction, outputs [forward ; backward]; the backward direction reads
    each sentence reversed within its own length; both start from zeros;
  - the loss of a batch is -(sum over real target tokens of the per-token objective) / (sentences in the batch);
  - Adam (beta 0.9, 0.999, eps 1e-8, bias-corrected) on gradients clipped by global norm, factor min(1, clip/norm).

The model (paper-notes §1.1): memory x_1..x_S from a BiLSTM over source embeddings; a decoder LSTM whose input at
step j is [emb(y_{j-1}) ; c_{j-1}], c = sum_i p(z=i) x_i the soft context under the prior, initial state zeros;
prior p(z_j=i) = softmax_i v^T tanh(W_q h_j + W_k x_i) (or (h W) . x_i, h . x_i); f(x, z=i) =
softmax(W_gen tanh(W_h h_j + b + W_x x_i) + b_gen); q(z_j=i | x, y) = softmax_i (W h^tgt_j) . h^src_i from two
one-layer BiLSTMs over the source and the whole target y_1..y_n <eos>. Objectives per target token j (README table):
  none         log f(x, mean of the real x_i)          soft      log f(x, E_p z)
  marginal     log sum_i p_i f_i                       hard-enum sum_i p_i log f_i
  hard-sample  log f_z + sg(log f_z - log f_soft) log p_z,  z ~ p   (REINFORCE, soft baseline; paper eq. 1)
  var-enum     sum_i q_i log f_i - KL(q||p)
  var-sample   log f_z - KL(q||p) + sg(log f_z - log f_soft) log q_z,  z ~ q
  var-gumbel   log f(x, softmax((log q + g)/tau)) - KL(q||p)
  var-rws      sum_k w_k (log f_k + log p_k + log q_k),  z_k ~ q,  w = sg(normalised p_k f_k / q_k)
The draws z and g come from LAVA's dump (its noise); everything else is recomputed here.

Usage:  torch_reference.py check FILE...   compare with each `lava crosscheck-dump` file; one line per check, then
                                           `crosscheck: N passed, M failed`; exit status 1 on a failure.
        torch_reference.py train FILE      a whole run from a `lava crosscheck-dump --data DIR` file: both loss
                                           trajectories, then one JSON line with LAVA's figures, the reference's
                                           figures of LAVA's trained model, and those of its own trained model.
Run it with Debian's /usr/bin/python3 (python3-torch); `make crosscheck` does.
"""
import argparse
import json
import math
import struct
import sys

import torch

torch.set_default_dtype(torch.float64)

# Tolerances of LAVA (float32) against this reference (float64), measured and stated in README "Cross-check".
TOL_OBJECTIVE = 1e-6    # relative, the loss at step 0
TOL_GRAD_ALL = 1e-6     # relative L2 error of the whole gradient at step 0
TOL_GRAD = 1e-5         # relative L2 error of each parameter's gradient at step 0 ...
TOL_GRAD_FLOOR = 1e-7   # ... counting errors below this fraction of the whole gradient's norm as zero
TOL_TRAJECTORY = 1e-5   # largest |loss_lava - loss_ref| / max(1, |loss_ref|) over the Adam updates
TOL_EVAL_REL, TOL_EVAL_ABS = 1e-5, 1e-6  # per-token evaluation figures: |a - b| <= abs + rel |b|


# ---------------------------------------------------------------------------------------------------------------
# safetensors: [u64 little-endian header size][JSON header][raw little-endian data]
def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {}
    for name, h in header.items():
        if h["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} has dtype {h['dtype']}, expected F32")
        b, e = h["data_offsets"]
        values = struct.unpack(f"<{(e - b) // 4}f", data[b:e])
        tensors[name] = torch.tensor(values, dtype=torch.float64).reshape(h["shape"])
    return tensors, meta


# ---------------------------------------------------------------------------------------------------------------
# The model
def lstm_run(x, W_ih, W_hh, b):
    """One LSTM direction over x (B, T, in) from zero state; returns h (B, T, H)."""
    B, T, _ = x.shape
    H = W_hh.shape[0]
    h = x.new_zeros(B, H)
    c = x.new_zeros(B, H)
    out = []
    for t in range(T):
        a = x[:, t] @ W_ih + b + h @ W_hh
        i, f, g, o = torch.sigmoid(a[:, :H]), torch.sigmoid(a[:, H:2 * H]), torch.tanh(a[:, 2 * H:3 * H]), \
            torch.sigmoid(a[:, 3 * H:])
        c = f * c + i * g
        h = o * torch.tanh(c)
        out.append(h)
    return torch.stack(out, 1)


def reverse_within(x, lengths):
    """x (B, T, D): each row's first len_b positions reversed, the padding left in place."""
    B, T = x.shape[:2]
    idx = torch.arange(T).repeat(B, 1)
    for bi in range(B):
        L = int(lengths[bi])
        idx[bi, :L] = torch.arange(L - 1, -1, -1)
    return torch.gather(x, 1, idx.unsqueeze(-1).expand_as(x))


def bilstm(P, prefix, x, lengths, layers):
    for l in range(layers):
        n = f"{prefix}/l{l}"
        fwd = lstm_run(x, P[n + "/fwd/W_ih"], P[n + "/fwd/W_hh"], P[n + "/fwd/b"])
        bwd = reverse_within(lstm_run(reverse_within(x, lengths), P[n + "/bwd/W_ih"], P[n + "/bwd/W_hh"],
                                      P[n + "/bwd/b"]), lengths)
        x = torch.cat([fwd, bwd], -1)
    # positions past each length are padding: nothing may read them
    real = torch.arange(x.shape[1])[None, :] < lengths[:, None]
    return x * real[..., None]


class NmtModel:
    def __init__(self, meta):
        self.attn = meta["attn"]
        self.score = meta.get("score", "mlp")
        self.layers = int(meta["layers"])
        self.uses_q = self.attn.startswith("var-")

    def forward(self, P, batch):
        """Per-query distributions and likelihoods of a batch (queries n = (b, t)):
        log_prior (B,T,S) with -inf at padding, log_q or None, log_f (B,T,S,V) for every source position, the soft
        context's log f over words (B,T,V), the token mask (B,T)."""
        src, src_len = batch["src"].long(), batch["src_len"].long()
        tgt_in, tgt_out, tgt_len = batch["tgt_in"].long(), batch["tgt_out"].long(), batch["tgt_len"].long()
        B, S = src.shape
        T = tgt_in.shape[1]
        src_real = torch.arange(S)[None, :] < src_len[:, None]  # (B, S)
        X = bilstm(P, "encoder", P["src_emb"][src], src_len, self.layers)  # (B, S, H)
        K = X @ P["score/W_k"] if self.attn != "none" and self.score == "mlp" else None
        E = P["tgt_emb"][tgt_in]  # (B, T, E)
        Hd = P["decoder/l0/W_hh"].shape[0]
        h = [X.new_zeros(B, Hd) for _ in range(self.layers)]
        c = [X.new_zeros(B, Hd) for _ in range(self.layers)]
        ctx = X.new_zeros(B, X.shape[2])
        tops, log_priors = [], []
        for t in range(T):
            inp = None
            for l in range(self.layers):
                n = f"decoder/l{l}"
                if l == 0:
                    a = E[:, t] @ P[n + "/W_in"] + P[n + "/b"] + ctx @ P[n + "/W_feed"] + h[0] @ P[n + "/W_hh"]
                else:
                    a = inp @ P[n + "/W_in"] + P[n + "/b"] + h[l] @ P[n + "/W_hh"]
                i, f, g, o = a.chunk(4, -1)
                c[l] = torch.sigmoid(f) * c[l] + torch.sigmoid(i) * torch.tanh(g)
                h[l] = torch.sigmoid(o) * torch.tanh(c[l])
                inp = h[l]
            top = inp
            if self.attn == "none":
                scores = torch.zeros(B, S)
            elif self.score == "mlp":
                qv = top @ P["score/W_q"]  # (B, A)
                scores = (torch.tanh(qv[:, None, :] + K) @ P["score/v"]).squeeze(-1)
            elif self.score == "general":
                scores = torch.einsum("bh,bsh->bs", top @ P["score/W"], X)
            else:
                scores = torch.einsum("bh,bsh->bs", top, X)
            lp = torch.log_softmax(scores.masked_fill(~src_real, -math.inf), -1)
            ctx = torch.einsum("bs,bsh->bh", lp.exp(), X)
            tops.append(top)
            log_priors.append(lp)
        top = torch.stack(tops, 1)  # (B, T, Hd)
        log_prior = torch.stack(log_priors, 1)  # (B, T, S)
        A = top @ P["out/h/W"] + P["out/h/b"]  # (B, T, Hd)
        U = X @ P["out/x/W"]  # (B, S, Hd)
        Wg, bg = P["generator/W"], P["generator/b"]
        log_f = torch.log_softmax(torch.tanh(A[:, :, None, :] + U[:, None, :, :]) @ Wg + bg, -1)  # (B,T,S,V)
        out = {"log_prior": log_prior, "log_f": log_f, "A": A, "U": U, "src_real": src_real,
               "y": tgt_out, "mask": torch.arange(T)[None, :] < tgt_len[:, None]}
        out["word_log_probs_at"] = lambda w: torch.log_softmax(torch.tanh(A + w @ U) @ Wg + bg, -1)  # (B,T,V)
        if self.uses_q:
            hs = bilstm(P, "inference/src", P["src_emb"][src], src_len, 1)
            ht = bilstm(P, "inference/tgt", P["tgt_emb"][tgt_out], tgt_len, 1)
            qs = (ht @ P["inference/W"]) @ hs.transpose(1, 2)  # (B, T, S)
            out["log_q"] = torch.log_softmax(qs.masked_fill(~src_real[:, None, :], -math.inf), -1)
        return out


class VqaModel:
    """The VQA model (paper-notes §1.6, §3; README "VQA-style experiment"): one query per question (T = 1), the R
    regions as the candidates: x~ = the question LSTM's state after the last word, x_i = relu(W_r r_i + b_r),
    p(z=i) = softmax_i w^T tanh(W1 x_i + W2 x~) (`none`: uniform), f(x, z=i) = softmax(W_g relu(W_q x~ + b_q + W_x x_i)
    + b_g), q(z=i | y) = softmax_i u^T tanh(U1 (x_i * relu(V1 h_y)) + U2 (x~ * relu(V2 h_y))), h_y the answer's
    embedding. The loss is normalised per question; the likelihood covers the questions with a known answer."""

    def __init__(self, meta):
        self.attn = meta["attn"]
        self.score, self.layers = "mlp", 1
        self.uses_q = self.attn.startswith("var-")

    def forward(self, P, batch):
        words, lengths = batch["words"].long(), batch["lengths"].long()
        feats, answer, known = batch["features"], batch["answer"].long(), batch["known"] > 0
        B, R = feats.shape[:2]
        h = lstm_run(P["word_emb"][words], P["question/W_ih"], P["question/W_hh"], P["question/b"])  # (B, L, H)
        qv = h[torch.arange(B), lengths - 1]  # x~: (B, H)
        X = torch.relu(feats @ P["region/W"] + P["region/b"])  # (B, R, H)
        if self.attn == "none":
            scores = torch.zeros(B, R)
        else:
            scores = (torch.tanh(X @ P["prior/W1"] + (qv @ P["prior/W2"])[:, None, :]) @ P["prior/w"]).squeeze(-1)
        lp = torch.log_softmax(scores, -1)[:, None, :]  # (B, 1, R)
        A = (qv @ P["answer_mlp/question/W"] + P["answer_mlp/question/b"])[:, None, :]  # (B, 1, M)
        U = X @ P["answer_mlp/region/W"]  # (B, R, M)
        Wg, bg = P["answer_mlp/out/W"], P["answer_mlp/out/b"]
        out = {"log_prior": lp, "log_f": torch.log_softmax(torch.relu(A[:, :, None, :] + U[:, None]) @ Wg + bg, -1),
               "src_real": torch.ones(B, R, dtype=torch.bool), "y": answer[:, None], "mask": known[:, None]}
        out["word_log_probs_at"] = lambda w: torch.log_softmax(torch.relu(A + w @ U) @ Wg + bg, -1)
        if self.uses_q:
            hy = P["inference/answer_emb"][answer]
            g1, g2 = torch.relu(hy @ P["inference/V1"]), torch.relu(hy @ P["inference/V2"])
            qs = torch.tanh((X * g1[:, None, :]) @ P["inference/U1"] + ((qv * g2) @ P["inference/U2"])[:, None, :])
            out["log_q"] = torch.log_softmax((qs @ P["inference/u"]).squeeze(-1), -1)[:, None, :]
        return out


class SeqVaeModel:
    """The sequence VAE (README "Sequence VAE"): memory m = BiLSTM(emb(X)), u = [forward state at the last word ;
    backward state at the first], q(z|X) = N(mu, sigma^2), mu = u W_mu + b, log sigma = u W_s + b_s, z = mu + sigma eps;
    decoder LSTM over [emb(x_{t-1}) ; z]; c_t = sum_i alpha_ti m_i with alpha_t = softmax_i v^T tanh(W_q h_t + W_k m_i);
    p(x_t) = softmax(W_g tanh(W_h h_t + b + W_c c_t) + b_g). Loss per sentence: (KL(q || N(0, I)) - log p(X | z)) / B."""

    def __init__(self, meta):
        self.attn, self.score, self.layers = "seqvae", "additive", int(meta["layers"])

    def terms(self, P, batch, eps):
        src, src_len = batch["src"].long(), batch["src_len"].long()
        tgt_in, tgt_out, tgt_len = batch["tgt_in"].long(), batch["tgt_out"].long(), batch["tgt_len"].long()
        B, S = src.shape
        T = tgt_in.shape[1]
        m = bilstm(P, "encoder", P["emb"][src], src_len, self.layers)  # (B, S, H)
        H = m.shape[2]
        u = torch.cat([m[torch.arange(B), src_len - 1, :H // 2], m[:, 0, H // 2:]], -1)
        mu = u @ P["posterior/mu/W"] + P["posterior/mu/b"]
        sigma = torch.exp(u @ P["posterior/log_sigma/W"] + P["posterior/log_sigma/b"])
        z = mu + sigma * eps.reshape(mu.shape)
        h = torch.cat([P["emb"][tgt_in], z[:, None, :].expand(B, T, z.shape[1])], -1)
        for l in range(self.layers):
            n = f"decoder/l{l}"
            h = lstm_run(h, P[n + "/W_ih"], P[n + "/W_hh"], P[n + "/b"])
        scores = (torch.tanh((h @ P["score/W_q"])[:, :, None, :] + (m @ P["score/W_k"])[:, None, :, :])
                  @ P["score/v"]).squeeze(-1)  # (B, T, S)
        real = torch.arange(S)[None, :] < src_len[:, None]
        alpha = torch.softmax(scores.masked_fill(~real[:, None, :], -math.inf), -1)
        o = torch.tanh(h @ P["out/h/W"] + P["out/h/b"] + (alpha @ m) @ P["out/c/W"])
        lp = pick_y(torch.log_softmax(o @ P["generator/W"] + P["generator/b"], -1), tgt_out)
        recon = (lp * (torch.arange(T)[None, :] < tgt_len[:, None])).sum()
        kl = (-torch.log(sigma) + (sigma ** 2 + mu ** 2) / 2 - 0.5).sum()
        return recon, kl, float(tgt_len.sum())

    def loss(self, P, batch, noise):
        recon, kl, _ = self.terms(P, batch, noise)
        return (kl - recon) / batch["src"].shape[0]

    def eval_sums(self, P, batches, noises):
        s = dict(tokens=0.0, log_lik=0.0, elbo=0.0, kl=0.0, kl_posterior=0.0, entropy=0.0, correct=0.0)
        with torch.no_grad():
            for batch, eps in zip(batches, noises):
                recon, kl, tokens = self.terms(P, batch, eps)
                s["tokens"] += tokens
                s["log_lik"] += float(recon)
                s["kl"] += float(kl)
                s["elbo"] += float(recon - kl)
        return s


def make_model(meta):
    task = meta.get("task")
    return VqaModel(meta) if task == "vqa" else SeqVaeModel(meta) if task == "seqvae" else NmtModel(meta)


def pick_y(log_f, y):
    """log f(.)_{y[b,t]} from (B, T, S, V) -> (B, T, S), or (B, T, V) -> (B, T)."""
    if log_f.dim() == 4:
        return torch.gather(log_f, 3, y[:, :, None, None].expand(*log_f.shape[:3], 1)).squeeze(-1)
    return torch.gather(log_f, 2, y[:, :, None]).squeeze(-1)


def xlogy_sum(q, a):
    """sum_s q_s a_s over the positions with q_s > 0 (0 log 0 = 0; padding has a = -inf)."""
    return torch.where(q > 0, q * torch.where(q > 0, a, torch.zeros_like(a)), torch.zeros_like(q)).sum(-1)


def kl_cat(log_q, log_p):
    return xlogy_sum(log_q.exp(), log_q - log_p.masked_fill(torch.isinf(log_p), 0.0))


def one_hot_at(z, S):
    return torch.nn.functional.one_hot(z, S).to(torch.float64)


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
    """The evaluation sums LAVA reports (README `lava eval`), over real target tokens."""
    if hasattr(model, "eval_sums"):
        return model.eval_sums(P, batches, evaluate.noises)
    s = dict(tokens=0.0, log_lik=0.0, elbo=0.0, kl=0.0, kl_posterior=0.0, entropy=0.0, correct=0.0)
    with torch.no_grad():
        for batch in batches:
            f = model.forward(P, batch)
            lp, y, mask = f["log_prior"], f["y"], f["mask"]
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
                q = lq.exp()
                lp_cut = lp.masked_fill(torch.isinf(lp), -1e300)  # LAVA's stand-in for log 0 where q > 0
                elbo = xlogy_sum(q, lf + lp_cut - lq)
                kl = xlogy_sum(q, lq - lp_cut)
                kl_post = xlogy_sum(q, lq - (lp_cut + lf - log_lik[..., None]))
            correct = (words.argmax(-1) == y)  # argmax ties: the first (lowest) id
            m = mask.to(torch.float64)
            s["tokens"] += float(m.sum())
            for k, t in (("log_lik", log_lik), ("elbo", elbo), ("kl", kl), ("kl_posterior", kl_post),
                         ("entropy", H), ("correct", correct.to(torch.float64))):
                s[k] += float((t * m).sum())
    return s


def figures(s):
    """Per-token figures from sums (as `lava eval` prints them)."""
    n = max(1.0, s["tokens"])
    return dict(nll=-s["log_lik"] / n, elbo=s["elbo"] / n, kl=s["kl"] / n, kl_gap=(s["log_lik"] - s["elbo"]) / n,
                kl_posterior=s["kl_posterior"] / n, entropy=s["entropy"] / n, accuracy=s["correct"] / n)


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


def compare_training(path, every):
    """A whole training run of both implementations from one dump (`lava crosscheck-dump --data DIR`): the loss
    trajectories side by side, and the evaluation figures of each implementation's own trained model."""
    tensors, meta = read_safetensors(path)
    model = make_model(meta)
    _, _, eval_set = load_batches(tensors, meta)
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
    batches, schedule, eval_set = load_batches(tensors, meta)
    steps = int(meta["crosscheck/steps"])
    evaluate.noises = [tensors.get(f"evalnoise/{k}") for k in range(len(eval_set))]
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
            lava = figures(json.loads(meta[f"eval/{when}/k{k}"]))
            bad = [f"{n} lava {lava[n]:.9g} ref {ref[n]:.9g}" for n in ref
                   if not abs(lava[n] - ref[n]) <= TOL_EVAL_ABS + TOL_EVAL_REL * abs(ref[n])]
            worst = max(abs(lava[n] - ref[n]) / max(1e-12, abs(ref[n])) for n in ref)
            rep.check(f"{v} eval {when} {'exact' if k == 0 else f'K-max {k}'}", not bad,
                      "; ".join(bad) if bad else f"7 figures, largest relative gap {worst:.1e}, nll {ref['nll']:.6f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="compare with lava crosscheck-dump files")
    c.add_argument("files", nargs="+")
    t = sub.add_parser("train", help="train from a `lava crosscheck-dump --data DIR` file; compare whole runs")
    t.add_argument("file")
    t.add_argument("--every", type=int, default=100, help="print both losses every this many steps")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.cmd == "train":
        compare_training(a.file, a.every)
        return 0
    rep = Report()
    for path in a.files:
        check_file(path, rep)
    print(f"crosscheck: {rep.passed} passed, {rep.failed} failed")
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
