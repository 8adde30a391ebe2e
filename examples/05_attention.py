"""Flash-attention forward with an online softmax: O = softmax(Q Kᵀ · scale) V, per head, in two
forms.

Q and O are [batch·heads, tokens, D] and K, V [batch·kv_heads, tokens, D], all bf16; GROUP query
heads share a K/V head (grouped-query attention). CAUSAL=True masks keys after each query.

The fast form (`attention_kernel(D, ...)`): a workgroup of WAVES waves (8) owns 16 query rows per
wave and walks the keys KB at a time; each block of K and V is loaded once for the workgroup,
through LDS, while the previous block is computed (hk.lds.issue / commit, two buffers). Eight
waves share each block, so a wave's part of the copy in flight is small enough that blocks of
32 keys (d128) or 64 (d64) fit its registers: the accumulator is rescaled once per block, and
the longer the block, the less that costs per matrix instruction:

  - Sᵀ = K Qᵀ on the matrix cores, one 16 x 16 tile per 16 keys: each lane holds one query's
    keys along its registers, so the softmax's maximum and sum over the keys stay in the lane;
  - P = exp2(Sᵀ·scale·log2 e - m) with the running maximum m, the running sum l and the
    accumulator rescaled by exp2(m_old - m);
  - Oᵀ += Vᵀ P: where the target reads LDS transposed (gfx950), V is stored as it is and read
    in col layout (Vᵀ as the transposed A operand); elsewhere it is written into LDS transposed
    (commit transpose=True), so that Vᵀ is read in row layout. P, converted to bf16, is the B
    operand as it stands;
  - whole key blocks run without a mask; the ragged last block and, for CAUSAL, the blocks on the
    diagonal run a second loop with one (blocks past the last query are skipped).

The short form (`attention_simple`, D = 64): one wave per 16 query rows, 16 keys at a time
straight from memory, V in column layout. It is what the language looks like without the
schedule; its registers fit only gfx1201 (the resource gate refuses it elsewhere: it spills).
"""

import functools
import math

import torch

import hk
from common import check, run, timed

LOG2E = 1.4426950408889634
# Keys per block, by head size: what keeps the registers of each wave within 256 on gfx1100
# with 8 waves.
KEY_BLOCK = {64: 64, 128: 32}
WAVES = 8


@functools.lru_cache(maxsize=None)
def attention_kernel(D=64, GROUP=1, KB=None, WAVES=WAVES):
    """The fast kernel for head size D (64 or 128) and GROUP query heads per K/V head: WAVES
    waves of 16 queries each, KB keys per block."""
    KB = KB or KEY_BLOCK[D]
    Q = 16 * WAVES  # queries per workgroup

    def scores(j, kk, Qs, k_lds, buf, qk_scale, n, q0, masked, causal):
        # Sᵀ for keys j*KB + 16*kk ..: 16 keys x 16 queries, scaled to base 2.
        s = hk.zeros(hk.RT(hk.fp32, 16, 16))
        for kd in range(D // 16):
            kt = k_lds[buf].subtile(16, 16, kk, kd).load(hk.RT(hk.bf16, 16, 16))
            s = hk.mma_ABt(kt, Qs[kd], s)
        s = s * qk_scale
        if masked:
            key = hk.iota(s.spec, "row") + (j * KB + kk * 16)
            # Keys up to the tensor's end and, for CAUSAL, up to each query: one compare each.
            end = hk.minimum(hk.iota(s.spec, "col") + (q0 + 1), n) if causal else n
            s = hk.where(key < end, s, float("-inf"))
        return s

    def v_as_stored():
        # V in LDS as it is (KB x D), read in col layout by the transposing LDS read.
        return hk.arch.target().lds_transpose_read is not None

    def accumulate(o, i, P, v_lds, buf):
        # Rows 16*i .. of Oᵀ: + Vᵀ P over the block's keys.
        for kk in range(KB // 16):
            if v_as_stored():
                v = v_lds[buf].subtile(16, 16, kk, i).load(hk.RT(hk.bf16, 16, 16, "col"))
                o = hk.mma_AtB(v, P[kk], o)
            else:
                o = hk.mma_AB(v_lds[buf].subtile(16, 16, i, kk).load(hk.RT(hk.bf16, 16, 16)), P[kk], o)
        return o

    @hk.func
    def step(j, Qs, OT, m, l, k, v, kvh, k_lds, v_lds, qk_scale, n, q0, masked, causal):
        buf = j % 2
        # The next block's loads stay in flight while this block is computed.
        k_next = hk.lds.issue(k_lds, k, hk.tile_coord(kvh, 0, j + 1, 0))
        v_next = hk.lds.issue(v_lds, v, hk.tile_coord(kvh, 0, j + 1, 0), transpose=not v_as_stored())
        ST = [scores(j, kk, Qs, k_lds, buf, qk_scale, n, q0, masked, causal) for kk in range(KB // 16)]
        m_new = m
        for s in ST:
            m_new = hk.maximum(m_new, hk.col_max(s))
        # ftz: terms below 2^-126 are 0 (they vanish in the sum anyway), one instruction each.
        alpha = hk.math.exp2(m - m_new, ftz=True)
        P = [hk.math.exp2(hk.sub_col(s, m_new), ftz=True) for s in ST]
        l = l * alpha
        for p in P:
            l = l + hk.col_sum(p)
        P = [p.to(hk.bf16, "col") for p in P]
        OT = [accumulate(hk.mul_col(o, alpha), i, P, v_lds, buf) for i, o in enumerate(OT)]
        hk.lds.commit(k_lds, 1 - buf, k_next)
        hk.lds.commit(v_lds, 1 - buf, v_next)
        hk.arch.barrier()
        return OT, m_new, l

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, Q), p.q.batch), warps=WAVES,
               name="attention_d%d%s" % (D, "" if GROUP == 1 else "_g%d" % GROUP))
    def attention(q: hk.Tensor[hk.bf16], k: hk.Tensor[hk.bf16], v: hk.Tensor[hk.bf16],
                  o: hk.Tensor[hk.bf16], scale: float, *, CAUSAL=False):
        qi = hk.arch.block_idx.x
        bh = hk.arch.block_idx.y
        kvh = bh // GROUP
        w = hk.arch.warp_id()
        n = k.rows
        k_lds = hk.lds.alloc(hk.ST(hk.bf16, KB, D, 2))
        v_lds = hk.lds.alloc(hk.ST(hk.bf16, KB, D, 2) if v_as_stored() else hk.ST(hk.bf16, D, KB, 2))
        qrow = qi * WAVES + w
        Qs = [q[bh, 0, qrow, kd].load(hk.RT(hk.bf16, 16, 16)) for kd in range(D // 16)]
        OT = [hk.zeros(hk.RT(hk.fp32, 16, 16)) for _ in range(D // 16)]
        m = hk.neg_infty(hk.RV(hk.fp32, 16, "row"))
        l = hk.zeros(hk.RV(hk.fp32, 16, "row"))
        qk_scale = scale * LOG2E
        blocks = hk.cdiv(n, KB)
        unmasked = n // KB
        if CAUSAL:
            # Blocks past the workgroup's last query are skipped; those before its first need
            # no mask.
            blocks = hk.minimum(blocks, (qi * Q + Q - 1) // KB + 1)
            unmasked = hk.minimum(unmasked, (qi * Q + 1) // KB)
        hk.lds.commit(k_lds, 0, hk.lds.issue(k_lds, k, hk.tile_coord(kvh, 0, 0, 0)))
        hk.lds.commit(v_lds, 0, hk.lds.issue(v_lds, v, hk.tile_coord(kvh, 0, 0, 0), transpose=not v_as_stored()))
        hk.arch.barrier()
        for j in hk.range(unmasked, unroll=2):
            OT, m, l = step(j, Qs, OT, m, l, k, v, kvh, k_lds, v_lds, qk_scale, n, qrow * 16, False, CAUSAL)
        for j in hk.range(unmasked, blocks):
            OT, m, l = step(j, Qs, OT, m, l, k, v, kvh, k_lds, v_lds, qk_scale, n, qrow * 16, True, CAUSAL)
        for i in range(D // 16):
            o[bh, 0, qrow, i] = hk.div_col(OT[i], l).T.to(hk.bf16)

    return attention


attention = attention_kernel(64)
attention_d128_gqa = attention_kernel(128, GROUP=2)

KV = 16


@hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, 16), p.q.batch))
def attention_simple(q: hk.Tensor[hk.bf16], k: hk.Tensor[hk.bf16], v: hk.Tensor[hk.bf16],
                     o: hk.Tensor[hk.bf16], scale: float, *, CAUSAL=False):
    qi, bh = hk.arch.block_idx.x, hk.arch.block_idx.y
    scores = hk.RT(hk.fp32, 16, KV)
    stat = hk.RV(hk.fp32, 16, "col")
    key = hk.iota(scores, "col")
    query = hk.iota(scores, "row") + qi * 16

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
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, -1) @ v).to(q.dtype)


# (kernel, head size, query heads per K/V head, [(batch·heads, tokens)]); ragged token counts.
RUNS = [(attention, 64, 1, [(2, 200), (3, 45)]), (attention_d128_gqa, 128, 2, [(4, 80), (2, 170)]),
        (attention_simple, 64, 1, [(3, 45)])]


def checks(device, repeat):
    for kernel, d, group, shapes in RUNS:
        for causal in (False, True):
            for bh, n in shapes:
                q = torch.randn(bh, n, d, device=device).to(torch.bfloat16)
                k, v = (torch.randn(bh // group, n, d, device=device).to(torch.bfloat16) for _ in range(2))
                out = torch.empty_like(q)
                scale = 1 / math.sqrt(d)
                try:
                    kernel(q, k, v, out, scale, CAUSAL=causal)
                except hk.errors.ResourceError as e:
                    # The short form's registers fit only gfx1201: elsewhere its refusal is the check.
                    assert kernel is attention_simple and "spills" in str(e), e
                    print("%-40s refused by the resource gate (spills)" % kernel.name)
                    continue
                check("%s %d heads x %d tokens%s" % (kernel.name, bh, n, ", causal" if causal else ""),
                      out, reference(q, k, v, scale, causal))
                if repeat:
                    print("  %.1f us" % (timed(lambda: kernel(q, k, v, out, scale, CAUSAL=causal), repeat) * 1e6))


if __name__ == "__main__":
    run([(attention, {}), (attention, {"CAUSAL": True}), (attention_d128_gqa, {}),
         (attention_simple, {})], checks)
