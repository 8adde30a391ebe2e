"""Flash-attention forward with an online softmax, the library's kernel, and attention as an op.

Q and O are [batch·heads, tokens, D] and K, V [batch·kv_heads, tokens, D], all bf16; GROUP query
heads share a K/V head (grouped-query attention). CAUSAL=True masks keys after each query:
query i sees keys up to past + i, `past` being the keys before the first query (the context a
prefill extends: Nk - Nq).

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

    flash_attention(q, k, v, scale, causal=False)    q [B, H, Nq, D], k and v [B, Hkv, Nk, D]
                                                     with H a multiple of Hkv, D 64 or 128,
                                                     bf16, scale > 0; causal: Nq <= Nk, query i
                                                     sees keys up to Nk - Nq + i (the queries
                                                     are the last Nq of the Nk tokens)
"""

import functools
import os

import torch

import hk
from hk import tuned
from hk.autotune.space import space
from hk.autotune.tunable import Tunable
from hk.ops import registry

LOG2E = 1.4426950408889634
# Keys per block, by head size: what keeps the registers of each wave within 256 on gfx1100
# with 8 waves.
KEY_BLOCK = {64: 64, 128: 32}
WAVES = 8
# How many of D's columns each LDS read of K covers, by target and head size (16 elsewhere):
# wider reads let one wait serve several matrix instructions where the registers allow it.
K_READ = {"gfx1100": {64: 64, 128: 32}, "gfx1201": {64: 64, 128: 64}, "gfx942": {64: 32, 128: 64}}


@functools.lru_cache(maxsize=None)
def attention_kernel(D=64, GROUP=1, KB=None, WAVES=WAVES, KREAD=None):
    """The fast kernel for head size D (64 or 128) and GROUP query heads per K/V head: WAVES
    waves of 16 queries each, KB keys per block (default KEY_BLOCK's), K read from LDS KREAD
    columns at a time (default K_READ's for the target)."""
    KB = KB or KEY_BLOCK[D]
    Q = 16 * WAVES  # queries per workgroup

    def k_read():
        return KREAD or K_READ.get(hk.arch.target().arch, {}).get(D, 16)

    def scores(j, kk, Qs, k_lds, buf, qk_scale, n, q0, masked, causal):
        # Sᵀ for keys j*KB + 16*kk ..: 16 keys x 16 queries (unscaled).
        KT = k_read()
        s = hk.zeros(hk.RT(hk.fp32, 16, 16))
        for kd in range(D // KT):
            kt = k_lds[buf].subtile(16, KT, kk, kd).load(hk.RT(hk.bf16, 16, KT))
            s = hk.mma_ABt(kt, Qs[kd], s)
        if masked:
            key = hk.iota(s.spec, "row") + (j * KB + kk * 16)
            # Keys up to the tensor's end and, for CAUSAL, up to each query's position (q0 is
            # the wave's first): one compare each.
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
        # The maximum is taken of the raw scores and scaled once (the scale is positive): the
        # scaling then folds into each exponent's argument, one fma per score.
        m_new = hk.maximum(m, hk.col_max(functools.reduce(hk.maximum, ST)) * qk_scale)
        # ftz: terms below 2^-126 are 0 (they vanish in the sum anyway), one instruction each.
        alpha = hk.math.exp2(m - m_new, ftz=True)
        P = [hk.math.exp2(hk.sub_col(s * qk_scale, m_new), ftz=True) for s in ST]
        l = l * alpha + hk.col_sum(functools.reduce(lambda a, b: a + b, P))
        # A NaN among P's terms is in l too (the output is NaN either way): no NaN test.
        P = [p.to(hk.bf16, "col", finite=True) for p in P]
        OT = [accumulate(hk.mul_col(o, alpha), i, P, v_lds, buf) for i, o in enumerate(OT)]
        hk.lds.commit(k_lds, 1 - buf, k_next)
        hk.lds.commit(v_lds, 1 - buf, v_next)
        hk.arch.barrier()
        return OT, m_new, l

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, Q), p.q.batch), warps=WAVES,
               name="attention_d%d%s" % (D, "" if GROUP == 1 else "_g%d" % GROUP))
    def attention(q: hk.Tensor[hk.bf16], k: hk.Tensor[hk.bf16], v: hk.Tensor[hk.bf16],
                  o: hk.Tensor[hk.bf16], scale: float, past: int, *, CAUSAL=False):
        qi = hk.arch.block_idx.x
        bh = hk.arch.block_idx.y
        kvh = bh // GROUP
        w = hk.arch.warp_id()
        n = k.rows
        k_lds = hk.lds.alloc(hk.ST(hk.bf16, KB, D, 2))
        v_lds = hk.lds.alloc(hk.ST(hk.bf16, KB, D, 2) if v_as_stored() else hk.ST(hk.bf16, D, KB, 2))
        qrow = qi * WAVES + w
        Qs = [q[bh, 0, qrow, kd].load(hk.RT(hk.bf16, 16, k_read())) for kd in range(D // k_read())]
        OT = [hk.zeros(hk.RT(hk.fp32, 16, 16)) for _ in range(D // 16)]
        m = hk.neg_infty(hk.RV(hk.fp32, 16, "row"))
        l = hk.zeros(hk.RV(hk.fp32, 16, "row"))
        qk_scale = scale * LOG2E
        blocks = hk.cdiv(n, KB)
        unmasked = n // KB
        if CAUSAL:
            # Blocks past the workgroup's last query are skipped; those before its first need
            # no mask.
            blocks = hk.minimum(blocks, (qi * Q + Q - 1 + past) // KB + 1)
            unmasked = hk.minimum(unmasked, (qi * Q + 1 + past) // KB)
        hk.lds.commit(k_lds, 0, hk.lds.issue(k_lds, k, hk.tile_coord(kvh, 0, 0, 0)))
        hk.lds.commit(v_lds, 0, hk.lds.issue(v_lds, v, hk.tile_coord(kvh, 0, 0, 0), transpose=not v_as_stored()))
        hk.arch.barrier()
        for j in hk.range(unmasked, unroll=2):
            OT, m, l = step(j, Qs, OT, m, l, k, v, kvh, k_lds, v_lds, qk_scale, n, qrow * 16 + past, False, CAUSAL)
        for j in hk.range(unmasked, blocks):
            OT, m, l = step(j, Qs, OT, m, l, k, v, kvh, k_lds, v_lds, qk_scale, n, qrow * 16 + past, True, CAUSAL)
        for i in range(D // 16):
            o[bh, 0, qrow, i] = hk.div_col(OT[i], l).T.to(hk.bf16)

    return attention


# Tuning -----------------------------------------------------------------------------------------

# A shape is (batch, heads, kv_heads, query tokens, key tokens, D, causal); 0 for KB or KREAD is
# the default's choice (KEY_BLOCK's, K_READ's), so that today's choice is a candidate.
TOKEN_BUCKETS = (128, 512, 1024, 2048, 4096, 8192, 16384, 32768)


def attention_space(target):
    """Keys per block, waves per workgroup (16 queries each), K's columns per LDS read. What
    does not fit a head size's registers or LDS the gates refuse at that shape."""
    return space(KB=[0, 16, 32, 64], WAVES=[4, 8], KREAD=[0, 16, 32, 64])


def _tokens(n):
    low = 0
    for high in TOKEN_BUCKETS:
        if n <= high:
            return "%d-%d" % (low + 1, high)
        low = high
    return ">%d" % TOKEN_BUCKETS[-1]


def attention_bucket(shape):
    b, h, hkv, n, nk, d, causal = shape
    return "d%d g%d %s Nq=%s Nk=%s" % (d, h // hkv, "causal" if causal else "full", _tokens(n), _tokens(nk))


def _kernel_of(knobs, shape):
    d, group = shape[5], shape[1] // shape[2]
    chosen = (knobs.get("KB") or None, knobs.get("WAVES", WAVES), knobs.get("KREAD") or None)
    # Called as the default launch calls it when the knobs are the default's (one Kernel, one trace).
    return attention_kernel(d, group) if chosen == (None, WAVES, None) else attention_kernel(d, group, *chosen)


def _attention_arguments(shape):
    b, h, hkv, n, nk, d, causal = shape

    def meta(*dims):
        return torch.empty(*dims, dtype=torch.bfloat16, device="meta")

    return meta(b * h, n, d), meta(b * hkv, nk, d), meta(b * hkv, nk, d), meta(b * h, n, d), d ** -0.5, nk - n


ATTENTION = Tunable(
    name="flash_attention", space=attention_space, knobs=frozenset(("KB", "WAVES", "KREAD")),
    kernel=lambda config, shape: (_kernel_of(config.as_dict(), shape), {"CAUSAL": bool(shape[6])}),
    arguments=_attention_arguments, default=lambda arch: {"KB": 0, "WAVES": WAVES, "KREAD": 0},
    bucket=attention_bucket, describe=lambda shape: "b%d h%d kv%d nq%d nk%d d%d %s" % (
        *shape[:6], "causal" if shape[6] else "full"),
    sources=(os.path.abspath(__file__),))


# torch operators -------------------------------------------------------------------------------

def launch_attention(q, k, v, scale, causal, out):
    """out = softmax(q kᵀ · scale) v per head, grouped-query heads sharing K/V heads."""
    op = "flash_attention"
    registry.dtype_of(op, q, (torch.bfloat16,))
    for name, t in (("k", k), ("v", v), ("out", out)):
        registry.same(op, name, t, q)
    if q.dim() != 4 or k.dim() != 4 or tuple(k.shape) != tuple(v.shape) or tuple(out.shape) != tuple(q.shape):
        raise registry.LaunchError("hk.ops.flash_attention: q and out are [batch, heads, tokens, D] and k, v "
                                   "[batch, kv_heads, tokens, D]; got q %s, k %s, v %s, out %s"
                                   % tuple(tuple(t.shape) for t in (q, k, v, out)))
    b, h, n, d = q.shape
    kb, hkv, nk, kd = k.shape
    if kb != b or kd != d or hkv == 0 or h % hkv:
        raise registry.LaunchError("hk.ops.flash_attention: k %s does not fit q %s: the same batch and D, "
                                   "and query heads a multiple of the K/V heads" % (tuple(k.shape), tuple(q.shape)))
    if d not in KEY_BLOCK:
        raise registry.LaunchError("hk.ops.flash_attention: head size %d; the kernel has %s"
                                   % (d, " and ".join(map(str, sorted(KEY_BLOCK)))),
                                   hint="use torch.nn.functional.scaled_dot_product_attention (hk.ops.sdpa "
                                        "falls back to it)")
    if not scale > 0:
        # The running maximum is taken of the raw scores and scaled once, which needs scale > 0.
        raise registry.LaunchError("hk.ops.flash_attention: scale %r; the kernel takes a positive scale" % (scale,),
                                   hint="hk.ops.sdpa falls back to torch's SDPA for other scales")
    if causal and nk < n:
        raise registry.LaunchError("hk.ops.flash_attention: causal with %d queries and %d keys; the causal "
                                   "queries are the last of the keys' tokens (query i sees keys up to "
                                   "Nk - Nq + i), so Nq <= Nk" % (n, nk),
                                   hint="hk.ops.sdpa takes torch's alignment (query i sees keys up to i)")
    if out.numel() == 0:
        return
    if nk == 0:
        out.zero_()
        return

    def heads(name, t, writable=False):
        # [batch·heads, tokens, D] with unit stride along D: a view where the layout has one.
        flat = t.reshape(t.shape[0] * t.shape[1], t.shape[2], d)
        if flat.stride(-1) == 1 and (flat.data_ptr() == t.data_ptr() or not writable):
            return flat
        if writable:
            raise registry.LaunchError("hk.ops.flash_attention: out (strides %s) has no [batch·heads, "
                                       "tokens, D] view with contiguous rows" % (t.stride(),),
                                       hint="pass a contiguous out")
        return flat.contiguous()

    o3 = heads("out", out, writable=True)
    args = (heads("q", q), heads("k", k), heads("v", v), o3, float(scale), nk - n)
    shape = (b, h, hkv, n, nk, d, bool(causal))
    tuned.launch(ATTENTION, shape, lambda knobs: _kernel_of(knobs or {}, shape)(*args, CAUSAL=bool(causal)))


def _flash_attention(q, k, v, scale, causal=False):
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    launch_attention(q, k, v, scale, causal, out)
    return out


def _flash_attention_out(out, q, k, v, scale, causal=False):
    launch_attention(q, k, v, scale, causal, out)


ARGS = "Tensor q, Tensor k, Tensor v, float scale, bool causal=False"
OPS = {
    "flash_attention": registry.define(
        "flash_attention", "(%s) -> Tensor" % ARGS, _flash_attention,
        lambda q, k, v, scale, causal=False: torch.empty(q.shape, dtype=q.dtype, device=q.device)),
    "flash_attention_out": registry.define(
        "flash_attention_out", "(Tensor(a!) out, %s) -> ()" % ARGS, _flash_attention_out,
        lambda out, q, k, v, scale, causal=False: None, mutates=("out",)),
}
