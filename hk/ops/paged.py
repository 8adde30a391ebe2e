"""Decode attention on vLLM's paged KV cache (the flash layout): one new query token per
sequence against its cached keys and values, found through its block table.

    paged_attention_decode(query, key_cache, value_cache, block_tables, seq_lens, scale) -> out
        query [seqs, heads, head_size] bf16; key_cache, value_cache [blocks, block_size,
        kv_heads, head_size] bf16 (block_size a multiple of 16); block_tables [seqs, max_blocks]
        int32 (the cache blocks of each sequence, in order); seq_lens [seqs] int32 (its tokens
        in the cache, the new one's included); out [seqs, heads, head_size] bf16. heads is a
        multiple of kv_heads (grouped-query heads); head_size a multiple of 16 up to 256.
    paged_attention_decode_out(out, query, key_cache, value_cache, block_tables, seq_lens, scale)

A wave owns up to 16 query heads of one K/V head of one sequence and walks the sequence's
keys as flash attention walks its key blocks, 16 at a time: their K and V are copied into LDS
(the cache viewed as [blocks, 1, block_size, ...], the block table's entry the batch index, so
any cache size is addressed), the next 16's loads in flight while these are computed; Sᵀ = K Qᵀ on
the matrix cores, the softmax's maximum and sum kept per query, Oᵀ += Vᵀ P (V committed
transposed, or on gfx950 read by the transposing LDS read). In the last 16 the slots past
the sequence get no weight, and their values (whatever was left there) are made finite first.
A sequence of no tokens gives zeros. No sliding window, ALiBi or logit cap.
"""

import functools

import torch

import hk
from hk.ops import registry

LOG2E = 1.4426950408889634
TILE = 16
BIG = 3.0e38  # beyond any real value: what a stale slot's value is clamped to


@hk.func
def _row_ids(first, count):
    """Rows first .. first + 15 as an i32 "col" vector, -1 from the count'th on (what a gather
    reads as zeros and a scatter drops), distributed as a 16-bit row tile's rows are."""
    spec = hk.RT(hk.i32, TILE, 16, "col")
    i = hk.iota(spec, "row")
    ids = i + first
    if not isinstance(count, int) or count < TILE:  # (a Python test: the trace keeps one side)
        ids = hk.where(i < count, ids, -1)
    return hk.row_max(ids)


@functools.lru_cache(maxsize=None)
def decode_kernel(D, GROUP, BS):
    """Head size D, GROUP query heads per K/V head, cache blocks of BS slots."""
    QT = -(-GROUP // TILE)  # query tiles per K/V head
    f32, bf16 = hk.fp32, hk.bf16

    def v_as_stored():
        # V in LDS as it is, read in col layout by the transposing LDS read (gfx950).
        return hk.arch.target().lds_transpose_read is not None

    @hk.func
    def key_step(j, q_lds, OT, m, l, k_lds, v_lds, n, qk_scale, last):
        # Keys 16j .. 16j+15, in LDS: Sᵀ = K Qᵀ (16 keys x 16 queries, in base 2).
        s = hk.zeros(hk.RT(f32, TILE, TILE))
        for kd in range(D // 16):
            s = hk.mma_ABt(k_lds[0].subtile(TILE, 16, 0, kd).load(hk.RT(bf16, TILE, 16)),
                           q_lds[0].subtile(TILE, 16, 0, kd).load(hk.RT(bf16, TILE, 16)), s)
        s = s * qk_scale
        if last:
            s = hk.where(hk.iota(s.spec, "row") + j * TILE < n, s, float("-inf"))
        m_new = hk.maximum(m, hk.col_max(s))
        alpha = hk.math.exp2(m - m_new, ftz=True)
        p = hk.math.exp2(hk.sub_col(s, m_new), ftz=True)
        l = l * alpha + hk.col_sum(p)
        pb = p.to(bf16, "col", finite=True)  # a NaN term is in l too: no NaN test
        new_OT = []
        for i, o in enumerate(OT):  # rows 16i.. of Oᵀ += Vᵀ P
            if v_as_stored():
                x = v_lds[0].subtile(TILE, 16, 0, i).load(hk.RT(bf16, TILE, 16, "col"))
            else:
                x = v_lds[0].subtile(16, TILE, i, 0).load(hk.RT(bf16, 16, TILE))
            if last:
                # The slots past the sequence hold whatever was there: made finite (maxNum
                # drops a NaN), so that their zero weights give zeros.
                x = hk.minimum(hk.maximum(x, -BIG), BIG)
            o = hk.mul_col(o, alpha)
            new_OT.append(hk.mma_AtB(x, pb, o) if v_as_stored() else hk.mma_AB(x, pb, o))
        return new_OT, m_new, l

    @hk.func
    def issue(k_lds, v_lds, k, v, tables, seq, kvh, j):
        # The copies of keys 16j .. 16j+15: tile j % (BS/16) of the sequence's block j // (BS/16).
        # (Past the last block the table reads 0, a real block: loaded, never used.)
        block = tables.load_scalar(0, 0, seq, j // (BS // TILE))
        at = hk.tile_coord(block, 0, j % (BS // TILE), kvh)
        return hk.lds.issue(k_lds, k, at), hk.lds.issue(v_lds, v, at, transpose=not v_as_stored())

    @hk.kernel(grid=lambda p: (p.k.cols // D * QT, p.lens.cols), name="paged_decode_d%d_g%d_b%d" % (D, GROUP, BS))
    def decode(q: hk.Tensor[bf16], k: hk.Tensor[bf16], v: hk.Tensor[bf16], tables: hk.Tensor[hk.i32],
               lens: hk.Tensor[hk.i32], o: hk.Tensor[bf16], scale: float):
        # q, o [seqs * heads, D]; k, v [blocks, 1, block_size, kv_heads * D] (the block table's
        # entry is the batch index); tables [seqs, max_blocks]; lens [seqs].
        seq = hk.arch.block_idx.y
        kvh = hk.arch.block_idx.x // QT
        qt = hk.arch.block_idx.x % QT
        heads = k.cols // D * GROUP
        first = qt * TILE
        queries = _row_ids(seq * heads + kvh * GROUP + first, hk.minimum(GROUP - first, TILE))
        # The queries wait in LDS (in registers with the copy in flight they would not fit gfx11).
        q_lds = hk.lds.alloc(hk.ST(bf16, TILE, D))
        for kd in range(D // 16):
            q_lds[0].subtile(TILE, 16, 0, kd).store(hk.gather(q, hk.tile_coord(0, 0, 0, kd), queries,
                                                              hk.RT(bf16, TILE, 16)))
        OT = [hk.zeros(hk.RT(f32, 16, TILE)) for _ in range(D // 16)]
        m = hk.neg_infty(hk.RV(f32, TILE, "row"))
        l = hk.zeros(hk.RV(f32, TILE, "row"))
        n = lens.load_scalar(0, 0, 0, seq)
        qk_scale = scale * LOG2E
        k_lds = hk.lds.alloc(hk.ST(bf16, TILE, D))
        v_lds = hk.lds.alloc(hk.ST(bf16, TILE, D) if v_as_stored() else hk.ST(bf16, D, TILE))
        tiles = hk.cdiv(n, TILE)
        full = n // TILE
        # Each 16 keys' copy is issued a step ahead: its loads are in flight while the keys
        # before it are computed, and written into LDS after the barrier that ends that step.
        k_next, v_next = issue(k_lds, v_lds, k, v, tables, seq, kvh, 0)
        hk.lds.commit(k_lds, 0, k_next)
        hk.lds.commit(v_lds, 0, v_next)
        hk.arch.barrier()
        for j in hk.range(full):
            k_next, v_next = issue(k_lds, v_lds, k, v, tables, seq, kvh, j + 1)
            OT, m, l = key_step(j, q_lds, OT, m, l, k_lds, v_lds, n, qk_scale, False)
            hk.arch.barrier()
            hk.lds.commit(k_lds, 0, k_next)
            hk.lds.commit(v_lds, 0, v_next)
            hk.arch.barrier()
        if full < tiles:  # the sequence's last keys, fewer than 16
            OT, m, l = key_step(full, q_lds, OT, m, l, k_lds, v_lds, n, qk_scale, True)
        # A sequence of no tokens: l is 0 and so is every O; the floor keeps it 0 / l = 0.
        l = hk.maximum(l, 1e-30)
        for kd in range(D // 16):
            hk.scatter(o, hk.tile_coord(0, 0, 0, kd), queries, hk.div_col(OT[kd], l).T.to(bf16))

    return decode


def launch_decode(query, key_cache, value_cache, block_tables, seq_lens, scale, out):
    op = "paged_attention_decode"
    for name, t in (("query", query), ("key_cache", key_cache), ("value_cache", value_cache), ("out", out)):
        if t.dtype != torch.bfloat16:
            raise registry.LaunchError("hk.ops.%s: %s is %s" % (op, name, t.dtype), hint="pass bfloat16 tensors")
        if t.device != query.device:
            raise registry.LaunchError("hk.ops.%s: %s is on %s, query on %s" % (op, name, t.device, query.device))
    if query.dim() != 3 or key_cache.dim() != 4 or value_cache.shape != key_cache.shape or out.shape != query.shape:
        raise registry.LaunchError(
            "hk.ops.%s: query %s, key_cache %s, value_cache %s, out %s: query and out are [seqs, heads, head_size], "
            "the caches [blocks, block_size, kv_heads, head_size]" % (op, tuple(query.shape), tuple(key_cache.shape),
                                                                     tuple(value_cache.shape), tuple(out.shape)))
    seqs, heads, d = query.shape
    _, bs, kv_heads, dk = key_cache.shape
    if dk != d or d % 16 or d > 256 or bs % TILE or heads % kv_heads:
        raise registry.LaunchError(
            "hk.ops.%s: head size %d (cache %d), block size %d, %d heads on %d K/V heads are not supported"
            % (op, d, dk, bs, heads, kv_heads),
            hint="head sizes are multiples of 16 up to 256, block sizes multiples of 16, and heads a multiple of "
                 "K/V heads")
    for name, t, shape in (("block_tables", block_tables, (seqs, None)), ("seq_lens", seq_lens, (seqs,))):
        if t.dtype != torch.int32 or t.dim() != len(shape) or t.shape[0] != seqs or t.device != query.device:
            raise registry.LaunchError("hk.ops.%s: %s is %s %s; it must be int32 with one row per sequence (%d)"
                                       % (op, name, t.dtype, tuple(t.shape), seqs))
    if seqs == 0:
        return
    kernel = decode_kernel(d, heads // kv_heads, bs)
    q2 = registry.rows(op, "query", query, d)
    o2 = registry.rows(op, "out", out, d, writable=True)
    k2 = _blocks(op, "key_cache", key_cache)
    v2 = _blocks(op, "value_cache", value_cache)
    kernel(q2, k2, v2, block_tables.contiguous(), seq_lens.contiguous(), o2, float(scale))


def _blocks(op, name, cache):
    """`cache` as [blocks, 1, block_size, kv_heads * head_size]: the blocks may be strided (a
    view of a K and V cache in one tensor), each block's slots and heads not."""
    blocks, bs, kv_heads, d = cache.shape
    try:
        view = cache.view(blocks, 1, bs, kv_heads * d)
    except RuntimeError:
        view = None
    if view is None or (view.numel() and view.stride(-1) != 1):
        raise registry.LaunchError("hk.ops.%s: %s (strides %s) has no [blocks, block_size, kv_heads * head_size] view"
                                   % (op, name, cache.stride()), hint="pass each cache with its slots and heads "
                                                                      "contiguous within a block")
    return view


def _decode(query, key_cache, value_cache, block_tables, seq_lens, scale):
    out = torch.empty(query.shape, dtype=query.dtype, device=query.device)
    launch_decode(query, key_cache, value_cache, block_tables, seq_lens, scale, out)
    return out


def _decode_out(out, query, key_cache, value_cache, block_tables, seq_lens, scale):
    launch_decode(query, key_cache, value_cache, block_tables, seq_lens, scale, out)


OPS = {
    "paged_attention_decode": registry.define(
        "paged_attention_decode",
        "(Tensor query, Tensor key_cache, Tensor value_cache, Tensor block_tables, Tensor seq_lens, float scale) "
        "-> Tensor", _decode,
        lambda query, key_cache, value_cache, block_tables, seq_lens, scale: torch.empty(
            query.shape, dtype=query.dtype, device=query.device)),
    "paged_attention_decode_out": registry.define(
        "paged_attention_decode_out",
        "(Tensor(a!) out, Tensor query, Tensor key_cache, Tensor value_cache, Tensor block_tables, Tensor seq_lens, "
        "float scale) -> ()", _decode_out,
        lambda out, query, key_cache, value_cache, block_tables, seq_lens, scale: None, mutates=("out",)),
}
