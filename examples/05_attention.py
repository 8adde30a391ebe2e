"""Flash-attention forward, O = softmax(Q Kᵀ · scale) V per head, in two forms.

The fast form is the library's kernel, `hk.ops.attention.attention_kernel(D, GROUP, KB, WAVES)`
(its schedule is described there): eight waves of 16 queries share each K/V block through LDS
with split copies, Sᵀ = K Qᵀ keeps the softmax in each lane, whole key blocks run unmasked.
Here it is instantiated for d64 (also causal) and d128 with two query heads per K/V head, and
checked on ragged token counts, also with more keys than queries (a prefill after `past` cached
tokens: with CAUSAL, query i sees keys up to past + i).

The short form (`attention_simple`, D = 64): one wave per 16 query rows, 16 keys at a time
straight from memory, V in column layout. It is what the language looks like without the
schedule; its registers fit only gfx1201 (the resource gate refuses it elsewhere: it spills).
"""

import math

import torch

import hk
from common import check, run, timed
from hk.ops.attention import attention_kernel

attention = attention_kernel(64)
attention_d128_gqa = attention_kernel(128, GROUP=2)

KV = 16


@hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, 16), p.q.batch))
def attention_simple(q: hk.Tensor[hk.bf16], k: hk.Tensor[hk.bf16], v: hk.Tensor[hk.bf16],
                     o: hk.Tensor[hk.bf16], scale: float, past: int, *, CAUSAL=False):
    qi, bh = hk.arch.block_idx.x, hk.arch.block_idx.y
    scores = hk.RT(hk.fp32, 16, KV)
    stat = hk.RV(hk.fp32, 16, "col")
    key = hk.iota(scores, "col")
    query = hk.iota(scores, "row") + (qi * 16 + past)  # its position among the keys

    Q = q[bh, 0, qi, 0].load(hk.RT(hk.bf16, 16, 64))
    m = hk.neg_infty(stat)
    l = hk.zeros(stat)
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    for j in hk.range(hk.cdiv(k.rows, KV)):
        K = k[bh, 0, j, 0].load(hk.RT(hk.bf16, KV, 64))
        S = hk.mma_ABt(Q, K, hk.zeros(scores)) * scale
        S = hk.where(key + j * KV < k.rows, S, float("-inf"))
        if CAUSAL:
            S = hk.where(key + j * KV <= query, S, float("-inf"))
        m_new = hk.maximum(m, hk.row_max(S))
        P = hk.math.exp(hk.sub_row(S, m_new))
        alpha = hk.math.exp(m - m_new)
        l = l * alpha + hk.row_sum(P)
        V = v[bh, 0, j, 0].load(hk.RT(hk.bf16, KV, 64, "col"))
        acc = hk.mma_AB(P.to(hk.bf16), V, hk.mul_row(acc, alpha))
        m = m_new
    o[bh, 0, qi, 0] = hk.div_row(acc, l).to(hk.bf16)


def reference(q, k, v, scale, causal):
    group = q.shape[0] // k.shape[0]
    k, v = (x.float().repeat_interleave(group, 0) for x in (k, v))
    s = (q.float() @ k.transpose(-1, -2)) * scale
    if causal:
        n, m = s.shape[-2:]
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1 + m - n), float("-inf"))
    return (torch.softmax(s, -1) @ v).to(q.dtype)


# (kernel, head size, query heads per K/V head, [(batch·heads, queries, keys)]); ragged counts.
RUNS = [(attention, 64, 1, [(2, 200, 200), (3, 45, 45), (2, 40, 150)]),
        (attention_d128_gqa, 128, 2, [(4, 80, 80), (2, 170, 170), (2, 20, 90)]),
        (attention_simple, 64, 1, [(3, 45, 45)])]


def checks(device, repeat):
    for kernel, d, group, shapes in RUNS:
        for causal in (False, True):
            for bh, n, nk in shapes:
                q = torch.randn(bh, n, d, device=device).to(torch.bfloat16)
                k, v = (torch.randn(bh // group, nk, d, device=device).to(torch.bfloat16) for _ in range(2))
                out = torch.empty_like(q)
                scale = 1 / math.sqrt(d)
                try:
                    kernel(q, k, v, out, scale, nk - n, CAUSAL=causal)
                except hk.errors.ResourceError as e:
                    # The short form's registers fit only gfx1201: elsewhere its refusal is the check.
                    assert kernel is attention_simple and "spills" in str(e), e
                    print("%-40s refused by the resource gate (spills)" % kernel.name)
                    continue
                check("%s %d heads x %d queries x %d keys%s" % (kernel.name, bh, n, nk, ", causal" if causal else ""),
                      out, reference(q, k, v, scale, causal))
                if repeat:
                    print("  %.1f us" % (timed(lambda: kernel(q, k, v, out, scale, nk - n, CAUSAL=causal), repeat)
                                         * 1e6))


if __name__ == "__main__":
    run([(attention, {}), (attention, {"CAUSAL": True}), (attention_d128_gqa, {}),
         (attention_simple, {})], checks)
