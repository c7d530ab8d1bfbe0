#!/usr/bin/python3
"""The PyTorch peer of `lava bench train`: the same translation network and training step, timed the same way.

Network (src/tasks/nmt/seq2seq.hpp): embeddings; a bidirectional LSTM encoder (hidden/2 per direction) giving memory
x_1..x_S; an LSTM decoder whose input at step j is [emb(y_{j-1}); c_{j-1}] with c the soft context under the prior
(input feeding); an MLP prior p(z_j = i) = softmax_i v . tanh(W_q h_j + W_k x_i); the output layer
f(x, z = i) = softmax(W_gen tanh(W_h h_j + W_x x_i + b) + b_gen). Objectives per target token:
  soft      log f(x, E_p z)                         (the context enters the tanh linearly, as in LAVA)
  marginal  log sum_i p_i f_i                       (a (B, T, S, V) tensor: what the naive implementation costs)
  var-enum  sum_i q_i log f_i - KL(q || p), q from BiLSTMs over the source and the whole target, bilinear scores
A step is forward, backward, gradient clipping (norm 5) and Adam, on random tokens; the result is the median of the
timed steps after the warm-up. Prints one JSON line with the keys `lava bench train --format json` uses, plus `blas`,
`blas_threads` and `blas_gflops`: the BLAS library torch actually loaded (read from /proc/self/maps after a product,
since Debian's torch calls whatever libblas.so.3 the alternatives system points to), the threads its products run on,
and a 512^3 product's GFLOP/s. Without libopenblas0-pthread that is the reference BLAS, some 40 times slower, and no
ratio against it means anything: tools/bench-train.sh refuses to print one.
torch.set_num_threads does not reach that library: OpenBLAS starts one thread per core and keeps them, so a peer
asked for one thread ran its products on two (a 1024^3 product at 110 GFLOP/s against 76 on one thread, on two
cores of an AMD EPYC). The script therefore sets OpenBLAS's own count to --threads (openblas_set_num_threads) and
reports what OpenBLAS says it uses; tools/bench-train.sh refuses a ratio against a peer on another thread count.
The peer should be the strongest reasonable one. make bench (tools/bench-train.sh) runs it with OpenBLAS on its own
choice of kernel for this CPU (the environment's OPENBLAS_CORETYPE, which forces an older kernel on some machines,
unset) and with jemalloc keeping freed memory mapped (glibc's malloc unmaps every block above 32 MiB on free, so
each step faulted its large tensors in again page by page). Before anything is timed the script checks OpenBLAS's
float32 products against float64 sums (check_products): a kernel that fails is not trusted, and the script runs
again on the Haswell kernel, saying so in `blas_check`. `blas_core` names the kernel that ran, `allocator` the
malloc.
Optional tool: needs Debian's python3-torch; exits 0 with a message on stderr when torch is missing.
"""
import argparse
import ctypes
import json
import os
import resource
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("bench-torch.py: PyTorch is not installed (apt-get install python3-torch); skipping", file=sys.stderr)
    sys.exit(0)


class Seq2Seq(nn.Module):
    def __init__(self, a):
        super().__init__()
        E, H, A, V, I = a.emb_size, a.hidden_size, a.attn_size, a.vocab, a.inf_hidden
        self.attn = a.attn
        self.src_emb, self.tgt_emb = nn.Embedding(V, E), nn.Embedding(V, E)
        self.encoder = nn.LSTM(E, H // 2, batch_first=True, bidirectional=True)
        self.decoder = nn.LSTMCell(E + H, H)
        self.W_q, self.W_k, self.v = nn.Linear(H, A), nn.Linear(H, A, bias=False), nn.Linear(A, 1, bias=False)
        self.W_h, self.W_x = nn.Linear(H, H), nn.Linear(H, H, bias=False)
        self.gen = nn.Linear(H, V)
        if self.attn == "var-enum":
            self.inf_src = nn.LSTM(E, I // 2, batch_first=True, bidirectional=True)
            self.inf_tgt = nn.LSTM(E, I // 2, batch_first=True, bidirectional=True)
            self.inf_bilinear = nn.Linear(I, I, bias=False)
        for p in self.parameters():
            nn.init.uniform_(p, -0.1, 0.1)

    def forward(self, src, tgt_in, tgt_out):
        B, T = tgt_in.shape
        X, _ = self.encoder(self.src_emb(src))                       # (B, S, H)
        keys, U = self.W_k(X), self.W_x(X)                            # (B, S, A), (B, S, H)
        h = X.new_zeros(B, X.shape[2])
        cell, ctx = torch.zeros_like(h), torch.zeros_like(h)
        emb = self.tgt_emb(tgt_in)
        log_p, queries = [], []
        for t in range(T):
            h, cell = self.decoder(torch.cat([emb[:, t], ctx], 1), (h, cell))
            lp = F.log_softmax(self.v(torch.tanh(self.W_q(h).unsqueeze(1) + keys)).squeeze(2), 1)  # (B, S)
            ctx = torch.bmm(lp.exp().unsqueeze(1), X).squeeze(1)
            log_p.append(lp)
            queries.append(self.W_h(h))
        log_p, Aq = torch.stack(log_p, 1), torch.stack(queries, 1)   # (B, T, S), (B, T, H)
        if self.attn == "soft":
            o = torch.tanh(Aq + torch.bmm(log_p.exp(), U))            # (B, T, H)
            return F.log_softmax(self.gen(o), -1).gather(2, tgt_out.unsqueeze(2)).sum()
        o = torch.tanh(Aq.unsqueeze(2) + U.unsqueeze(1))              # (B, T, S, H)
        idx = tgt_out.unsqueeze(2).unsqueeze(3).expand(B, T, o.shape[2], 1)
        log_f = F.log_softmax(self.gen(o), -1).gather(3, idx).squeeze(3)  # (B, T, S)
        if self.attn == "marginal":
            return torch.logsumexp(log_p + log_f, 2).sum()
        hs, _ = self.inf_src(self.src_emb(src))                       # (B, S, I)
        ht, _ = self.inf_tgt(self.tgt_emb(tgt_out))                   # (B, T, I)
        log_q = F.log_softmax(torch.bmm(self.inf_bilinear(ht), hs.transpose(1, 2)), 2)  # (B, T, S)
        q = log_q.exp()
        return ((q * log_f).sum() - (q * (log_q - log_p)).sum())


def loaded_blas():
    """(name, path) of the BLAS behind torch's products: 'OpenBLAS 0.3.21', 'reference BLAS', 'MKL' or 'unknown'.

    Debian's torch is linked against libblas.so.3 (BLAS_INFO=generic), so sgemm_ comes from whichever libblas.so.3
    the loader mapped: its real path names the implementation. libopenblas may be mapped as well (through
    liblapack.so.3) while the products run in the reference library, so its presence alone proves nothing."""
    a = torch.ones(64, 64)
    torch.mm(a, a)  # make sure the library is loaded
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "/" in line and
                        any(k in line.lower() for k in ("blas", "mkl"))})
    openblas = [p for p in paths if "libopenblas" in p.rsplit("/", 1)[-1]]
    version = ""
    if openblas:
        name = openblas[0].rsplit("/", 1)[-1]
        version = name.split("-r", 1)[1].split(".so")[0] if "-r" in name else ""
    for path in paths:
        if "libblas.so" in path.rsplit("/", 1)[-1]:
            real = os.path.realpath(path)
            if "openblas" in real:
                return ("OpenBLAS " + version).strip(), real
            if "/blas/" in real:
                return "reference BLAS", real
            return "unknown", real
    if any("mkl" in p for p in paths):
        return "MKL", ",".join(paths)
    if openblas:
        return ("OpenBLAS " + version).strip(), openblas[0]
    return "unknown", ",".join(paths)


def pin_blas_threads(blas, path, threads):
    """Sets the threads of the BLAS behind torch's products to `threads` and returns the count the library reports:
    OpenBLAS's own (openblas_get_num_threads), 1 for the reference BLAS (single-threaded), None where unknown."""
    if blas == "reference BLAS":
        return 1
    if not blas.startswith("OpenBLAS"):
        return None
    lib = ctypes.CDLL(path)  # already mapped: dlopen returns the loaded copy, whose thread pool torch's products use
    lib.openblas_set_num_threads(threads)
    return lib.openblas_get_num_threads()


def openblas_core(blas, path):
    """The kernel OpenBLAS chose (openblas_get_corename), or "" for another BLAS."""
    if not blas.startswith("OpenBLAS"):
        return ""
    lib = ctypes.CDLL(path)
    lib.openblas_get_corename.restype = ctypes.c_char_p
    return lib.openblas_get_corename().decode()


def check_products():
    """The largest error of torch's float32 products over their rounding bound, on shapes that reach every edge case
    of a GEMM kernel (odd sizes, each transpose). The reference is the float64 sum of the same float32 inputs, by
    numpy's einsum, which runs its own loops and no BLAS; the bound is 2 K u sum_k |a_ik| |b_kj| with u = 2^-24, twice
    the classical forward error bound of a K-term dot product in float32. A correct kernel stays well below 1."""
    import numpy as np
    gen = torch.Generator().manual_seed(7)
    worst = 0.0
    for m, n, k in [(1, 1, 1), (7, 13, 5), (33, 65, 31), (97, 130, 257), (256, 256, 256), (300, 500, 1000)]:
        for ta in (False, True):
            for tb in (False, True):
                a = torch.rand(k, m, generator=gen) - 0.5 if ta else torch.rand(m, k, generator=gen) - 0.5
                b = torch.rand(n, k, generator=gen) - 0.5 if tb else torch.rand(k, n, generator=gen) - 0.5
                a_op, b_op = (a.t() if ta else a), (b.t() if tb else b)
                c = torch.mm(a_op, b_op).double().numpy()
                a64, b64 = a_op.double().numpy(), b_op.double().numpy()
                ref = np.einsum("ik,kj->ij", a64, b64)
                bound = 2 * k * 2.0 ** -24 * np.einsum("ik,kj->ij", np.abs(a64), np.abs(b64)) + 1e-30
                worst = max(worst, float(np.max(np.abs(c - ref) / bound)))
    return worst


def allocator():
    with open("/proc/self/maps") as maps:
        return "jemalloc" if "libjemalloc" in maps.read() else "glibc malloc"


def product_gflops(n=512, reps=5):
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.mm(a, b)
    return 2.0 * n ** 3 * reps / (time.perf_counter() - t0) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attn", default="soft", choices=["soft", "marginal", "var-enum"])
    for name, default in [("emb-size", 256), ("hidden-size", 256), ("attn-size", 256), ("inf-hidden", 256),
                          ("vocab", 10000), ("batch-size", 32), ("src-len", 20), ("tgt-len", 20), ("steps", 10),
                          ("warmup", 2), ("threads", 1), ("seed", 1)]:
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    blas, blas_path = loaded_blas()
    blas_threads = pin_blas_threads(blas, blas_path, a.threads)
    core, check = openblas_core(blas, blas_path), check_products()
    blas_check = "passed ({:.3f} of the bound)".format(check)
    if check > 1:
        if os.environ.get("OPENBLAS_CORETYPE"):
            print("bench-torch.py: float32 products fail the float64 check ({:.3g} times the rounding bound) even on "
                  "OpenBLAS's {} kernel; no peer to time".format(check, core), file=sys.stderr)
            sys.exit(1)
        # Not this kernel: the same process cannot switch, so run again on the kernel the environment forces here.
        print("bench-torch.py: OpenBLAS's {} kernel fails the float64 check ({:.3g} times the rounding bound); running "
              "on Haswell's".format(core, check), file=sys.stderr)
        env = dict(os.environ, OPENBLAS_CORETYPE="Haswell", LAVA_PEER_FELL_BACK=core)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    if os.environ.get("LAVA_PEER_FELL_BACK"):
        blas_check += "; {} failed it".format(os.environ["LAVA_PEER_FELL_BACK"])
    blas_gflops = product_gflops()
    model = Seq2Seq(a)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    src = torch.randint(4, a.vocab, (a.batch_size, a.src_len))
    tgt = torch.randint(4, a.vocab, (a.batch_size, a.tgt_len + 1))
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    seconds = []
    for step in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        objective = model(src, tgt_in, tgt_out)
        loss = -objective / a.batch_size
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if step >= a.warmup:
            seconds.append(time.perf_counter() - t0)
    step_s = statistics.median(seconds)
    tokens = a.batch_size * a.tgt_len
    print(json.dumps({"peer": "pytorch " + torch.__version__, "attn": a.attn, "threads": a.threads,
                      "tokens_per_s": tokens / step_s, "step_ms": 1e3 * step_s,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      "objective_per_token": objective.item() / tokens,
                      "blas": blas, "blas_path": blas_path, "blas_threads": blas_threads,
                      "blas_core": core, "blas_check": blas_check, "allocator": allocator(),
                      "blas_gflops": blas_gflops}))


if __name__ == "__main__":
    main()
