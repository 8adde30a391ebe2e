"""Flash-attention forward with an online softmax: O = softmax(Q Kᵀ · scale) V, per head.

Q, K, V and O are [batch·heads, tokens, 64] in bf16. A wave owns 16 query rows; it walks the
keys 16 at a time: S = Q Kᵀ on the matrix cores (mma_ABt: both operands row layout, straight
from memory), the running row maximum and sum rescale what came before, and P V accumulates
in fp32 (mma_AB: P converted to a bf16 operand, V read in column layout). Keys past the end
are masked to -inf, so ragged lengths work; CAUSAL=True masks keys after each query.
"""

import math

import torch

import hk
from common import check, run, timed

D = 64
KV = 16


@hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, 16), p.q.batch))
def attention(q: hk.Tensor[hk.bf16], k: hk.Tensor[hk.bf16], v: hk.Tensor[hk.bf16],
              o: hk.Tensor[hk.bf16], scale: float, *, CAUSAL=False):
    qi, bh = hk.arch.block_idx.x, hk.arch.block_idx.y
    scores = hk.RT(hk.fp32, 16, KV)
    stat = hk.RV(hk.fp32, 16, "col")
    key = hk.iota(scores, "col")
    query = hk.iota(scores, "row") + qi * 16

    Q = q[bh, 0, qi, 0].load(hk.RT(hk.bf16, 16, D))
    m = hk.neg_infty(stat)
    l = hk.zeros(stat)
    acc = hk.zeros(hk.RT(hk.fp32, 16, D))
    for j in hk.range(hk.cdiv(k.rows, KV)):
        K = k[bh, 0, j, 0].load(hk.RT(hk.bf16, KV, D))
        S = hk.mma_ABt(Q, K, hk.zeros(scores)) * scale
        S = hk.where(key + j * KV < k.rows, S, float("-inf"))
        if CAUSAL:
            S = hk.where(key + j * KV <= query, S, float("-inf"))
        m_new = hk.maximum(m, hk.row_max(S))
        P = hk.math.exp(hk.sub_row(S, m_new))
        alpha = hk.math.exp(m - m_new)
        l = l * alpha + hk.row_sum(P)
        V = v[bh, 0, j, 0].load(hk.RT(hk.bf16, KV, D, "col"))
        acc = hk.mma_AB(P.to(hk.bf16), V, hk.mul_row(acc, alpha))
        m = m_new
    o[bh, 0, qi, 0] = hk.div_row(acc, l).to(hk.bf16)


def reference(q, k, v, scale, causal):
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        n, m = s.shape[-2:]
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, -1) @ v.float()).to(q.dtype)


SHAPES = [(2, 128), (3, 45)]  # (batch·heads, tokens); the second is ragged


def checks(device, repeat):
    for causal in (False, True):
        for bh, n in SHAPES:
            q, k, v = (torch.randn(bh, n, D, device=device).to(torch.bfloat16) for _ in range(3))
            out = torch.empty_like(q)
            scale = 1 / math.sqrt(D)
            attention(q, k, v, out, scale, CAUSAL=causal)
            check("attention %d heads x %d tokens%s" % (bh, n, ", causal" if causal else ""),
                  out, reference(q, k, v, scale, causal))
            if repeat:
                print("  %.1f us" % (timed(lambda: attention(q, k, v, out, scale, CAUSAL=causal), repeat) * 1e6))


if __name__ == "__main__":
    run([(attention, {}), (attention, {"CAUSAL": True})], checks)
