"""The reference models: the translation model (NmtModel, described in tools/torch_reference.py's docstring), the
VQA model and the sequence VAE, their LSTMs, and make_model, which picks one from a dump's metadata."""
import math

import torch


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
        self.sparse_alpha = float(meta.get("alpha", 2))  # sparse-marginal, var-sparse: 2 (sparsemax) or 1.5

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
    """The VQA model (src/method.md §3.1): one query per question (T = 1), the R
    regions as the candidates: x~ = the question LSTM's state after the last word, x_i = relu(W_r r_i + b_r),
    p(z=i) = softmax_i w^T tanh(W1 x_i + W2 x~) (`none`: uniform), f(x, z=i) = softmax(W_g relu(W_q x~ + b_q + W_x x_i)
    + b_g), q(z=i | y) = softmax_i u^T tanh(U1 (x_i * relu(V1 h_y)) + U2 (x~ * relu(V2 h_y))), h_y the answer's
    embedding. The loss is normalised per question; the likelihood covers the questions with a known answer."""

    def __init__(self, meta):
        self.attn = meta["attn"]
        self.score, self.layers = "mlp", 1
        self.uses_q = self.attn.startswith("var-")
        self.sparse_alpha = float(meta.get("alpha", 2))

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
    """The sequence VAE (src/method.md §3.3): memory m = BiLSTM(emb(X)), u = [forward state at the last word ;
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

