"""Sparse distributions over positions, written from their definitions: sparsemax and alpha-entmax with alpha = 1.5,
by the exact sort-based thresholds, over masked score rows; and the exact marginal over the support.

  sparsemax(z) = argmin_{p in simplex} |p - z|^2 = [z - tau]_+          (sum p = 1 fixes tau)
  entmax15(z)  = [z/2 - tau]_+^2                                         (sum p = 1 fixes tau)

Gradients come from autograd through the threshold formulas (tau is a differentiable function of the sorted scores
once the support is fixed), independently of LAVA's hand-written backward passes. `python3 -m torch_ref.sparse`
from tools/ runs the self-check at the bottom."""
import itertools

import torch


def _shifted(z, mask, dim, drop):
    """z minus its row maximum over the unmasked positions, with masked positions (mask True, or z = -inf) set
    `drop` below that maximum: finite, and below any threshold (tau >= max - 1 in the scale of the threshold), so
    they stay out of the support without inf - inf in the sums. Also returns the exclusion mask."""
    out = torch.isinf(z) & (z < 0)
    if mask is not None:
        out = out | mask.bool()
    m = z.masked_fill(out, float("-inf")).amax(dim, keepdim=True).detach()
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)  # a row with nothing left
    return (z - m).masked_fill(out, -drop), out


def _ranks(u, dim):
    """1, 2, ..., n along dim, shaped to broadcast against u."""
    shape = [1] * u.dim()
    shape[dim] = u.shape[dim]
    return torch.arange(1, u.shape[dim] + 1, dtype=u.dtype).reshape(shape)


def sparsemax(z, mask=None, dim=-1):
    """[z - tau]_+ with k* = max{k : 1 + k z_(k) > sum_{j<=k} z_(j)} over the sorted scores and
    tau = (sum_{j<=k*} z_(j) - 1) / k*. Masked positions get exactly 0."""
    u, out = _shifted(z, mask, dim, 3.0)
    srt, _ = torch.sort(u, dim=dim, descending=True)
    k = _ranks(u, dim)
    cum = srt.cumsum(dim)
    support = ((1 + k * srt) > cum).sum(dim, keepdim=True)
    tau = (cum.gather(dim, support - 1) - 1) / support.to(u.dtype)
    return torch.clamp(u - tau, min=0).masked_fill(out, 0.0)


def entmax15(z, mask=None, dim=-1):
    """[z/2 - tau]_+^2. For the top k of u = z/2 sorted, tau_k = mean_k - sqrt(max((1 - ss_k)/k, 0)) with ss_k the
    sum of squared deviations from mean_k; the support size is k* = #{k : tau_k <= u_(k)} and tau = tau_{k*}."""
    u, out = _shifted(z, mask, dim, 3.0)
    u = u / 2
    srt, _ = torch.sort(u, dim=dim, descending=True)
    k = _ranks(u, dim)
    mean = srt.cumsum(dim) / k
    msq = (srt * srt).cumsum(dim) / k
    ss = k * (msq - mean * mean)
    tau_k = mean - torch.sqrt(torch.clamp((1 - ss) / k, min=0))
    support = (tau_k <= srt).sum(dim, keepdim=True)
    tau = tau_k.gather(dim, support - 1)
    return (torch.clamp(u - tau, min=0) ** 2).masked_fill(out, 0.0)


def support_marginal(p, log_f):
    """log sum_{i: p_i > 0} p_i exp(log f_i) over the last axis: the exact marginal when p is sparse."""
    safe = torch.where(p > 0, p, torch.ones_like(p)).log() + log_f
    return torch.logsumexp(safe.masked_fill(p <= 0, float("-inf")), -1)


def _projection(z):
    """argmin over the simplex of |p - z|^2, trying every support (brute force)."""
    best, dist = None, float("inf")
    for k in range(1, len(z) + 1):
        for S in itertools.combinations(range(len(z)), k):
            idx = list(S)
            p = torch.zeros_like(z)
            p[idx] = z[idx] - (z[idx].sum() - 1) / k
            if (p[idx] >= 0).all() and float(((p - z) ** 2).sum()) < dist:
                best, dist = p, float(((p - z) ** 2).sum())
    return best


def _bisection(z, alpha):
    """alpha-entmax by bisection on tau: p = [(alpha - 1) z - tau]_+^(1/(alpha - 1)), sum p = 1."""
    a = (alpha - 1) * z
    lo, hi = float(a.max()) - 1, float(a.max())
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(torch.clamp(a - mid, min=0).pow(1 / (alpha - 1)).sum()) > 1 else (lo, mid)
    return torch.clamp(a - (lo + hi) / 2, min=0).pow(1 / (alpha - 1))


def _self_check():
    g = torch.Generator().manual_seed(0)
    for n in (1, 2, 3, 5, 8):
        for scale in (0.2, 1.0, 3.0):
            z = torch.randn(n, generator=g, dtype=torch.float64) * scale
            assert torch.allclose(sparsemax(z), _projection(z), atol=1e-12, rtol=0)
            assert torch.allclose(entmax15(z), _bisection(z, 1.5), atol=1e-12, rtol=0)
            assert torch.allclose(sparsemax(z), _bisection(z, 2.0), atol=1e-12, rtol=0)
    for f in (sparsemax, entmax15):
        ties = f(torch.tensor([0.3, -2.0, 0.3, 0.3], dtype=torch.float64))
        assert torch.allclose(ties, torch.tensor([1 / 3, 0, 1 / 3, 1 / 3], dtype=torch.float64), atol=1e-15)
        equal = f(torch.full((5,), 2.25, dtype=torch.float64))
        assert torch.allclose(equal, torch.full((5,), 0.2, dtype=torch.float64))
        # Masked by mask and by -inf: the same as the row without them; a fully masked row is all zeros.
        z = torch.tensor([[0.2, 5.0, 0.9, 5.0, -0.1], [0.2, float("-inf"), 0.9, float("-inf"), -0.1],
                          [1.0, 2.0, 3.0, 4.0, 5.0]], dtype=torch.float64)
        mask = torch.tensor([[0, 1, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
        p = f(z, mask)
        live = f(torch.tensor([0.2, 0.9, -0.1], dtype=torch.float64))
        assert torch.allclose(p[0, [0, 2, 4]], live) and torch.allclose(p[1, [0, 2, 4]], live)
        assert (p[:2, [1, 3]] == 0).all() and (p[2] == 0).all()
        # Autograd through the thresholds against central differences, away from the support's kinks.
        x = (torch.randn(3, 6, generator=g, dtype=torch.float64) * 1.5).requires_grad_()
        holes = torch.tensor([[0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 1]], dtype=torch.bool)
        assert ((f(x, holes) == 0) & ~holes).any()  # some unmasked positions fall outside the support
        assert torch.autograd.gradcheck(lambda x: f(x, holes), (x,))
    # The formulas' backward (dz = g dp - g (g . dp) / sum g, g = sqrt(p)) agrees with autograd for entmax15.
    x = torch.randn(4, 7, generator=g, dtype=torch.float64).requires_grad_()
    dp = torch.randn(4, 7, generator=g, dtype=torch.float64)
    p = entmax15(x)
    (auto,) = torch.autograd.grad(p, x, dp)
    s = p.detach().sqrt()
    assert torch.allclose(auto, s * dp - s * (s * dp).sum(-1, keepdim=True) / s.sum(-1, keepdim=True), atol=1e-12)
    # The support marginal equals the dense one, log sum_i p_i f_i, when p has zeros.
    p = sparsemax(torch.randn(5, 6, generator=g, dtype=torch.float64) * 2)
    log_f = torch.randn(5, 6, generator=g, dtype=torch.float64) - 2
    assert (p == 0).any()
    assert torch.allclose(support_marginal(p, log_f), (p * log_f.exp()).sum(-1).log(), atol=1e-13)
    print("torch_ref.sparse: self-check passed")


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    _self_check()
