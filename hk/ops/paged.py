"""Attention on vLLM's paged KV cache (the flash layout): decode, one new query token per
sequence, and prefill, a run of new tokens per sequence (causal), against the sequence's cached
keys and values, found through its block table.

    paged_attention_decode(query, key_cache, value_cache, block_tables, seq_lens, scale,
                           k_scale=None, v_scale=None) -> out
        query [seqs, heads, head_size] bf16; key_cache, value_cache [blocks, block_size,
        kv_heads, head_size] bf16, or vLLM's fp8 cache: OCP e4m3 bytes (uint8, or float8_e4m3fn)
        with k_scale and v_scale, float32 tensors of one element (not read for a bf16 cache)
        (block_size a multiple of 16); block_tables [seqs, max_blocks]
        int32 (the cache blocks of each sequence, in order); seq_lens [seqs] int32 (its tokens
        in the cache, the new one's included); out [seqs, heads, head_size] bf16. heads is a
        multiple of kv_heads (grouped-query heads); head_size a multiple of 16 up to 256.
    paged_attention_decode_out(out, query, key_cache, value_cache, block_tables, seq_lens, scale)

    paged_attention_prefill(query, key_cache, value_cache, block_tables, seq_lens, query_start_loc,
                            max_query_len, scale, k_scale=None, v_scale=None) -> out
        query [tokens, heads, head_size]: the new tokens of every sequence, one after another,
        sequence s's from query_start_loc[s] to query_start_loc[s + 1] (int32, [seqs + 1]), at
        most max_query_len of them; they are the last of the sequence's seq_lens[s] tokens,
        already written to the cache (reshape_and_cache_flash), and token i of them sees the
        cached keys up to its own position (causal). out as query.
    paged_attention_prefill_out(out, query, ...)

Prefill runs a wave per 16 tokens of one query head: the same steps over 16 keys at a time,
each token's keys ending at its position. A workgroup of several waves shares each 16 keys' copy
into LDS: HEADS query heads of one K/V head times TILES consecutive tiles of 16 tokens, every
wave walking the keys up to the workgroup's last token (its own masked). How many is a schedule
choice: PAGED_PREFILL is the Tunable (per target and bucket of tokens per sequence by heads and
head size); without a tuned choice, one wave.

A wave owns up to 16 query heads of one K/V head of one sequence and walks the sequence's
keys as flash attention walks its key blocks, 16 at a time: their K and V are copied into LDS
(the cache viewed as [blocks, 1, block_size, ...], the block table's entry the batch index, so
any cache size is addressed), the next 16's loads in flight while these are computed; Sᵀ = K Qᵀ on
the matrix cores, the softmax's maximum and sum kept per query, Oᵀ += Vᵀ P (V committed
transposed, or on gfx950 read by the transposing LDS read). In the last 16 the slots past
the sequence get no weight, and their values (whatever was left there) are made finite first.
A sequence of no tokens gives zeros. No sliding window, ALiBi or logit cap.

A decode of a few sequences gives a GPU a few dozen such waves, each walking a whole sequence:
split, each sequence's keys are cut into parts, a wave per part (decode_split_kernel), whose
normalized O and log-sum-exp a second kernel merges (merge_kernel). How many parts is a schedule
choice: PAGED_DECODE is the Tunable hk-tune searches (per target and bucket of sequences by
heads and head size) and hk/tuned/<arch>.json ships; without a tuned choice, one part.

An fp8 cache's 16 keys are loaded, dequantized as vLLM's Triton kernel dequantizes them
(bf16(value * scale): e4m3 converted by the target, on gfx942, whose fp8 is FNUZ,
decoded from the bytes in integer arithmetic) and stored into the same bf16 LDS tiles, with no
copy in flight across steps: correct, not fast.

The two caches may also be the halves of one tensor whose rows hold each head's K and then its
V ([blocks, block_size, kv_heads, 2 * head_size] split along the last dimension, as vLLM 0.33
lays out its KV cache): the kernels then read both from that tensor, with no copy.
"""

import functools
import os

import torch

import hk
from hk import tuned
from hk.autotune.space import space
from hk.autotune.tunable import Launch, Tunable
from hk.ops import mm8, registry
from hk.target import facts

LOG2E = 1.4426950408889634
FP8_CACHES = (torch.uint8, torch.float8_e4m3fn)  # e4m3 bytes, as vLLM allocates them or typed
TILE = 16
BIG = 3.0e38  # beyond any real value: what a stale slot's value is clamped to


@hk.func
def _row_ids(first, count, step=1):
    """Rows first, first + step, .. (16 of them) as an i32 "col" vector, -1 from the count'th on
    (what a gather reads as zeros and a scatter drops), distributed as a 16-bit row tile's rows
    are."""
    spec = hk.RT(hk.i32, TILE, 16, "col")
    i = hk.iota(spec, "row")
    ids = (i if isinstance(step, int) and step == 1 else i * step) + first
    if not isinstance(count, int) or count < TILE:  # (a Python test: the trace keeps one side)
        ids = hk.where(i < count, ids, -1)
    return hk.row_max(ids)


def _reads_at_once():
    """K and Q subtiles read from LDS before their MMAs: all of them on wave64 targets (a 16 x 16
    bf16 operand is 2 VGPRs a lane there); one pair on wave32, whose operands are 4 VGPRs and,
    on gfx11, duplicated."""
    return 1 << 30 if hk.arch.target().wave_size == 64 else 1


def _batches(n, size):
    """range(n) in consecutive runs of at most `size`."""
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


@functools.lru_cache(maxsize=None)
def _key_steps(D, BS, KV, fp8=None):
    """What decode and prefill share for head size D and cache blocks of BS slots: the copy of
    16 keys' K and V into LDS, and the online softmax's step over them. KV is 1 for separate K
    and V caches, 2 for one cache whose rows hold each head's K and then its V (K of head h at
    column tile 2h, V at 2h + 1, in tiles of D). fp8: None for bf16 caches, "fp8e4m3" for e4m3
    caches converted by the target, "raw fp8e4m3" for e4m3 bytes read as int8 and decoded in
    integer arithmetic (gfx942, whose fp8 is FNUZ); either is dequantized (times
    its scale, rounded to bf16, as vLLM's Triton kernel does) into the bf16 LDS tiles."""
    f32, bf16 = hk.fp32, hk.bf16
    stored = None if fp8 is None else hk.i8 if fp8.startswith("raw ") else hk.fp8e4m3

    def v_as_stored():
        # V in LDS as it is, read in col layout by the transposing LDS read (gfx950).
        return hk.arch.target().lds_transpose_read is not None

    @hk.func
    def key_step(j, q_lds, OT, m, l, k_lds, v_lds, end, qk_scale, masked, last, qw=0):
        # Keys 16j .. 16j+15, in LDS: Sᵀ = K Qᵀ (16 keys x 16 queries, in base 2), the queries
        # those of q_lds[qw]; `masked`: only keys before `end` (a count, or a tile of one per
        # query) count.
        s = hk.zeros(hk.RT(f32, TILE, TILE))
        for kds in _batches(D // 16, _reads_at_once()):
            # A batch's LDS reads issued together, then its MMAs: they wait for one another
            # (lgkmcnt counting down) instead of each read for the MMA before it.
            ops = [(k_lds[0].subtile(TILE, 16, 0, kd).load(hk.RT(bf16, TILE, 16)),
                    q_lds[qw].subtile(TILE, 16, 0, kd).load(hk.RT(bf16, TILE, 16))) for kd in kds]
            for a, b in ops:
                s = hk.mma_ABt(a, b, s)
        s = s * qk_scale
        if masked:
            s = hk.where(hk.iota(s.spec, "row") + j * TILE < end, s, float("-inf"))
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
        at_k = hk.tile_coord(block, 0, j % (BS // TILE), kvh * KV)
        at_v = hk.tile_coord(block, 0, j % (BS // TILE), kvh * KV + KV - 1)
        return hk.lds.issue(k_lds, k, at_k), hk.lds.issue(v_lds, v, at_v, transpose=not v_as_stored())

    @hk.func
    def fill(k_lds, v_lds, k, v, tables, seq, kvh, j, scales):
        # Keys 16j .. 16j+15 of an fp8 cache into the bf16 LDS tiles, 16 columns at a time
        # (loaded, dequantized, stored): what issue and commit are for a bf16 cache.
        block = tables.load_scalar(0, 0, seq, j // (BS // TILE))
        row = j % (BS // TILE)
        k_scale = scales.load_scalar(0, 0, 0, 0)
        v_scale = scales.load_scalar(0, 0, 0, 1)
        for c in hk.range(D // 16):  # (unrolled, each tile's address would take SGPRs)
            kt = dequant(k[hk.tile_coord(block, 0, row, kvh * KV * (D // 16) + c)].load(hk.RT(stored, TILE, 16)),
                         k_scale)
            k_lds[0].subtile(TILE, 16, 0, c).store(kt.to(bf16, "row"))
            vt = dequant(v[hk.tile_coord(block, 0, row, (kvh * KV + KV - 1) * (D // 16) + c)].load(
                hk.RT(stored, TILE, 16)), v_scale)
            if v_as_stored():
                v_lds[0].subtile(TILE, 16, 0, c).store(vt.to(bf16, "row"))
            else:
                v_lds[0].subtile(16, TILE, c, 0).store(vt.T.to(bf16, "row"))
            hk.arch.wait_lds()  # (a loop's stores are waited for in it)

    def dequant(t, scale):
        # e4m3 bytes as fp32 (exact), times the scale. (Through bf16, also exact: fp8 to fp32
        # directly spills SGPRs on gfx950.)
        if stored == hk.i8:
            return mm8.decode_ocp(t, "fp8e4m3", f32) * scale
        return t.to(bf16).to(f32) * scale

    @hk.func
    def attend_fp8(q_lds, OT, m, l, k_lds, v_lds, k, v, tables, seq, kvh, n, end, tiles, qk_scale, causal, scales,
                   first=None, qw=0):
        """attend for fp8 caches: each 16 keys dequantized into LDS, then the same step."""
        full, steps = _tiles(n, tiles, first)
        for j in steps(full):
            fill(k_lds, v_lds, k, v, tables, seq, kvh, j, scales)
            hk.arch.barrier()
            OT, m, l = key_step(j, q_lds, OT, m, l, k_lds, v_lds, end, qk_scale, causal, False)
            hk.arch.barrier()
        if full < tiles:
            fill(k_lds, v_lds, k, v, tables, seq, kvh, full, scales)
            hk.arch.barrier()
            OT, m, l = key_step(full, q_lds, OT, m, l, k_lds, v_lds, end, qk_scale, True, True)
        return OT, m, l

    def begin(q, queries, whole=False, waves=1, qw=0):
        """The 16 queries' rows of q in LDS (in registers, with the copy in flight, they would not
        fit gfx11), LDS for 16 keys' K and V, and the softmax's state (Oᵀ, m, l). `whole`: the
        rows gathered in one 16 x D tile (one wait; decode), else 16 columns at a time. `waves`:
        a workgroup of that many waves sharing K and V, each its own queries in q_lds[qw]."""
        q_lds = hk.lds.alloc(hk.ST(bf16, TILE, D, waves) if waves > 1 else hk.ST(bf16, TILE, D))
        if whole:
            q_lds[qw].store(hk.gather(q, hk.tile_coord(0, 0, 0, 0), queries, hk.RT(bf16, TILE, D)))
        else:
            for kd in range(D // 16):
                q_lds[qw].subtile(TILE, 16, 0, kd).store(hk.gather(q, hk.tile_coord(0, 0, 0, kd), queries,
                                                                   hk.RT(bf16, TILE, 16)))
        k_lds = hk.lds.alloc(hk.ST(bf16, TILE, D))
        v_lds = hk.lds.alloc(hk.ST(bf16, TILE, D) if v_as_stored() else hk.ST(bf16, D, TILE))
        OT = [hk.zeros(hk.RT(f32, 16, TILE)) for _ in range(D // 16)]
        return q_lds, k_lds, v_lds, OT, hk.neg_infty(hk.RV(f32, TILE, "row")), hk.zeros(hk.RV(f32, TILE, "row"))

    def finish(o, queries, OT, l):
        """O = Oᵀ / l into the queries' rows of o. A query that sees no key has l = 0 and O = 0:
        the floor keeps it 0."""
        l = hk.maximum(l, 1e-30)
        for kd in range(D // 16):
            hk.scatter(o, hk.tile_coord(0, 0, 0, kd), queries, hk.div_col(OT[kd], l).T.to(bf16))

    def _tiles(n, tiles, first):
        """(the end of the whole tiles to walk, the loop over them from `first`): tiles
        0 .. tiles-1 of the sequence, or with `first` (a part's) those from it, none when the
        part begins past its end."""
        if first is None:
            return hk.minimum(n // TILE, tiles), hk.range
        return hk.maximum(hk.minimum(n // TILE, tiles), first), lambda full: hk.range(first, full)

    @hk.func
    def attend(q_lds, OT, m, l, k_lds, v_lds, k, v, tables, seq, kvh, n, end, tiles, qk_scale, causal, first=None,
               qw=0):
        """The keys of tiles 0 .. tiles-1 of the sequence (n of them) into OT, m and l, or with
        `first` those of tiles first .. tiles-1; with `causal`, each query's keys end at its
        entry of `end`. The queries are q_lds[qw]; in a workgroup of several waves every wave
        walks the same tiles (the copies and barriers are the workgroup's)."""
        full, steps = _tiles(n, tiles, first)
        # Each 16 keys' copy is issued a step ahead: its loads are in flight while the keys
        # before it are computed, and written into LDS after the barrier that ends that step.
        k_next, v_next = issue(k_lds, v_lds, k, v, tables, seq, kvh, 0 if first is None else first)
        hk.lds.commit(k_lds, 0, k_next)
        hk.lds.commit(v_lds, 0, v_next)
        hk.arch.barrier()
        for j in steps(full):
            k_next, v_next = issue(k_lds, v_lds, k, v, tables, seq, kvh, j + 1)
            OT, m, l = key_step(j, q_lds, OT, m, l, k_lds, v_lds, end, qk_scale, causal, False, qw)
            hk.arch.barrier()
            hk.lds.commit(k_lds, 0, k_next)
            hk.lds.commit(v_lds, 0, v_next)
            hk.arch.barrier()
        if full < tiles:  # the sequence's last keys, fewer than 16
            OT, m, l = key_step(full, q_lds, OT, m, l, k_lds, v_lds, end, qk_scale, True, True, qw)
        return OT, m, l

    if fp8 is not None:
        return begin, attend_fp8, finish
    return begin, attend, finish


def _suffix(KV, fp8):
    return ("_kv" if KV == 2 else "") + ("" if fp8 is None else "_" + fp8.replace("raw ", "") + (
        "_raw" if fp8.startswith("raw ") else ""))


def _cache_type(fp8):
    return hk.bf16 if fp8 is None else hk.i8 if fp8.startswith("raw ") else hk.fp8e4m3


@functools.lru_cache(maxsize=None)
def decode_kernel(D, GROUP, BS, KV=1, fp8=None):
    """Head size D, GROUP query heads per K/V head, cache blocks of BS slots; KV 2: K and V in
    one cache; fp8: the caches' e4m3 bytes, with a kv_scales argument [k_scale, v_scale]
    (_key_steps)."""
    QT = -(-GROUP // TILE)  # query tiles per K/V head
    bf16 = hk.bf16
    begin, attend, finish = _key_steps(D, BS, KV, fp8)

    def body(q, k, v, tables, lens, o, scale, scales):  # (traced inline: the bf16 kernel as it was)
        # q, o [seqs * heads, D]; k, v [blocks, 1, block_size, kv_heads * D * KV] (the block
        # table's entry is the batch index); tables [seqs, max_blocks]; lens [seqs].
        seq = hk.arch.block_idx.y
        kvh = hk.arch.block_idx.x // QT
        qt = hk.arch.block_idx.x % QT
        heads = k.cols // (D * KV) * GROUP
        first = qt * TILE
        queries = _row_ids(seq * heads + kvh * GROUP + first, hk.minimum(GROUP - first, TILE))
        q_lds, k_lds, v_lds, OT, m, l = begin(q, queries, whole=True)
        n = lens.load_scalar(0, 0, 0, seq)
        extra = () if fp8 is None else (scales,)
        OT, m, l = attend(q_lds, OT, m, l, k_lds, v_lds, k, v, tables, seq, kvh, n, n, hk.cdiv(n, TILE),
                          scale * LOG2E, False, *extra)
        finish(o, queries, OT, l)  # (a sequence of no tokens: zeros)

    grid = lambda p: (p.k.cols // (D * KV) * QT, p.lens.cols)  # noqa: E731
    name = "paged_decode_d%d_g%d_b%d%s" % (D, GROUP, BS, _suffix(KV, fp8))
    C, F = hk.Tensor[_cache_type(fp8)], hk.Tensor[hk.fp32]
    if fp8 is None:
        def decode(q: hk.Tensor[bf16], k: C, v: C, tables: hk.Tensor[hk.i32], lens: hk.Tensor[hk.i32],
                   o: hk.Tensor[bf16], scale: float):
            body(q, k, v, tables, lens, o, scale, None)
    else:
        def decode(q: hk.Tensor[bf16], k: C, v: C, tables: hk.Tensor[hk.i32], lens: hk.Tensor[hk.i32],
                   o: hk.Tensor[bf16], scale: float, kv_scales: F):
            body(q, k, v, tables, lens, o, scale, kv_scales)
    return hk.kernel(grid=grid, name=name)(decode)


@functools.lru_cache(maxsize=None)
def decode_split_kernel(D, GROUP, BS, KV=1, fp8=None):
    """decode_kernel with each sequence's keys cut into parts, a workgroup per part (the grid's
    third dimension, as many as `partial`'s batch): part p of P walks tiles p·per .. of the
    sequence's cdiv(n, 16), per = cdiv(cdiv(n, 16), P), and writes its queries' O normalized by
    its own sum into `partial` [P, 1, seqs * heads, D] fp32 and their log2 of sum and maximum
    (in base 2) into `lse` [P, 1, seqs * heads, 16] (the value repeated along the row), which
    merge_kernel combines. A part past the sequence's keys writes O = 0 and lse = -BIG."""
    QT = -(-GROUP // TILE)
    f32 = hk.fp32
    begin, attend, _ = _key_steps(D, BS, KV, fp8)

    def body(q, k, v, tables, lens, partial, lse, scale, scales):
        seq = hk.arch.block_idx.y
        kvh = hk.arch.block_idx.x // QT
        qt = hk.arch.block_idx.x % QT
        part = hk.arch.block_idx.z
        heads = k.cols // (D * KV) * GROUP
        first = qt * TILE
        queries = _row_ids(seq * heads + kvh * GROUP + first, hk.minimum(GROUP - first, TILE))
        q_lds, k_lds, v_lds, OT, m, l = begin(q, queries, whole=True)
        n = lens.load_scalar(0, 0, 0, seq)
        tiles = hk.cdiv(n, TILE)
        per = hk.cdiv(tiles, partial.batch)
        start = part * per
        extra = () if fp8 is None else (scales,)
        OT, m, l = attend(q_lds, OT, m, l, k_lds, v_lds, k, v, tables, seq, kvh, n, n,
                          hk.maximum(hk.minimum(start + per, tiles), start), scale * LOG2E, False, *extra,
                          first=start)
        l = hk.maximum(l, 1e-30)  # (no key: O = 0, and lse below -BIG's floor)
        for kd in range(D // 16):
            hk.scatter(partial, hk.tile_coord(part, 0, 0, kd), queries, hk.div_col(OT[kd], l).T)
        sums = hk.maximum(m + hk.math.log2(l), -BIG)
        hk.scatter(lse, hk.tile_coord(part, 0, 0, 0), queries, hk.add_col(hk.zeros(hk.RT(f32, TILE, TILE)), sums).T)

    grid = lambda p: (p.k.cols // (D * KV) * QT, p.lens.cols, p.partial.batch)  # noqa: E731
    name = "paged_decode_split_d%d_g%d_b%d%s" % (D, GROUP, BS, _suffix(KV, fp8))
    C, F, bf16 = hk.Tensor[_cache_type(fp8)], hk.Tensor[f32], hk.bf16
    if fp8 is None:
        def decode_split(q: hk.Tensor[bf16], k: C, v: C, tables: hk.Tensor[hk.i32], lens: hk.Tensor[hk.i32],
                         partial: F, lse: F, scale: float):
            body(q, k, v, tables, lens, partial, lse, scale, None)
    else:
        def decode_split(q: hk.Tensor[bf16], k: C, v: C, tables: hk.Tensor[hk.i32], lens: hk.Tensor[hk.i32],
                         partial: F, lse: F, scale: float, kv_scales: F):
            body(q, k, v, tables, lens, partial, lse, scale, kv_scales)
    return hk.kernel(grid=grid, name=name)(decode_split)


# Parts whose loads a merge wave has in flight at once: 2 (4 spill SGPRs; on gfx1201 so do 2).
MERGE_UNROLL = {"gfx1201": 1}
# Waves of a merge workgroup: each walks every MERGE_WAVES'th part, so that MERGE_WAVES times
# MERGE_UNROLL parts' loads are in flight; the waves' sums meet in LDS.
MERGE_WAVES = 4


@functools.lru_cache(maxsize=None)
def merge_kernel(D):
    """o = the parts' O (decode_split_kernel's `partial` and `lse`) weighted by 2^lse, in one
    order: a workgroup per 16 rows and 16 columns of o [seqs * heads, D] bf16, wave w summing
    parts w, w + MERGE_WAVES, .. (MERGE_UNROLL loads in flight each), then the waves' sums
    combined from LDS in wave order, each wave storing a quarter of the rows."""
    f32, i32 = hk.fp32, hk.i32
    spec = hk.RT(f32, TILE, 16)
    W = MERGE_WAVES
    rows = TILE // W  # of the tile each wave stores

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.rows, TILE), D // 16), warps=W, name="paged_decode_merge_d%d" % D)
    def paged_decode_merge(partial: hk.Tensor[f32], lse: hk.Tensor[f32], o: hk.Tensor[hk.bf16]):
        bx, kd = hk.arch.block_idx.x, hk.arch.block_idx.y
        w = hk.arch.warp_id()
        top = hk.full(spec, -BIG)  # the largest lse so far, each row's
        total = hk.zeros(spec)     # the sum of 2^(lse - top)
        acc = hk.zeros(spec)
        for p in hk.range(w, partial.batch, W, unroll=MERGE_UNROLL.get(hk.arch.target().arch, 2)):
            sums = lse[p, 0, bx, 0].load(spec)
            new_top = hk.maximum(top, sums)
            old, this = hk.math.exp2(top - new_top), hk.math.exp2(sums - new_top)
            total = total * old + this
            acc = acc * old + partial[p, 0, bx, kd].load(spec) * this
            top = new_top
        # Each wave's (top, total, acc) side by side in LDS; every wave combines all of them.
        tops = hk.lds.alloc(hk.ST(f32, TILE, 16 * W))
        totals = hk.lds.alloc(hk.ST(f32, TILE, 16 * W))
        accs = hk.lds.alloc(hk.ST(f32, TILE, 16 * W))
        tops[0].subtile(TILE, 16, 0, w).store(top)
        totals[0].subtile(TILE, 16, 0, w).store(total)
        accs[0].subtile(TILE, 16, 0, w).store(acc)
        hk.arch.barrier()
        top = tops[0].subtile(TILE, 16, 0, 0).load(spec)
        for i in range(1, W):
            top = hk.maximum(top, tops[0].subtile(TILE, 16, 0, i).load(spec))
        total, acc = hk.zeros(spec), hk.zeros(spec)
        for i in range(W):
            weight = hk.math.exp2(tops[0].subtile(TILE, 16, 0, i).load(spec) - top)
            total = total + totals[0].subtile(TILE, 16, 0, i).load(spec) * weight
            acc = acc + accs[0].subtile(TILE, 16, 0, i).load(spec) * weight
        i = hk.iota(hk.RT(i32, TILE, 16, "col"), "row")
        mine = hk.where(i >= w * rows, hk.where(i < w * rows + rows, i + bx * TILE, -1), -1)
        hk.scatter(o, hk.tile_coord(0, 0, 0, kd), hk.row_max(mine), (acc / total).to(hk.bf16))

    return paged_decode_merge


@functools.lru_cache(maxsize=None)
def prefill_kernel(D, GROUP, BS, KV=1, fp8=None, HEADS=1, TILES=1):
    """Causal prefill: head size D, GROUP query heads per K/V head, cache blocks of BS slots (KV
    and fp8 as for decode). A wave owns 16 query tokens of one head of one sequence; its keys
    are the sequence's cached ones, through the block table, as for decode. A workgroup holds
    HEADS x TILES waves that share each 16 keys' copy into LDS: HEADS query heads of one K/V
    head (HEADS divides GROUP) times TILES consecutive tiles of 16 tokens (bf16 caches; an fp8
    cache's dequantizing copy is one wave's)."""
    f32, bf16 = hk.fp32, hk.bf16
    waves = HEADS * TILES
    if GROUP % HEADS or HEADS < 1 or TILES < 1 or (fp8 is not None and waves > 1):
        raise ValueError("prefill_kernel: HEADS=%d of GROUP=%d, TILES=%d%s" % (
            HEADS, GROUP, TILES, "" if fp8 is None else " with an fp8 cache (one wave)"))
    begin, attend, finish = _key_steps(D, BS, KV, fp8)
    span = TILE * TILES  # a workgroup's tokens

    def body(q, k, v, tables, lens, starts, o, scale, scales):
        # q, o [tokens * heads, D]; k, v [blocks, 1, block_size, kv_heads * D * KV]; tables
        # [seqs, max_blocks]; lens [seqs] (keys, the new tokens' included); starts [seqs + 1]
        # (where each sequence's tokens start in q).
        heads = k.cols // (D * KV) * GROUP
        seq = hk.arch.block_idx.y // (heads // HEADS)
        w = hk.arch.warp_id() if waves > 1 else 0
        h = hk.arch.block_idx.y % (heads // HEADS) * HEADS + (w % HEADS if HEADS > 1 else 0)
        top = hk.arch.block_idx.x * span  # the workgroup's first query, within the sequence
        first = top + (w // HEADS * TILE if TILES > 1 else 0)  # the wave's
        start = starts.load_scalar(0, 0, 0, seq)
        count = starts.load_scalar(0, 0, 0, seq + 1) - start
        n = lens.load_scalar(0, 0, 0, seq)
        past = n - count  # the sequence's queries are its last `count` tokens
        queries = _row_ids((start + first) * heads + h, count - first, heads)
        q_lds, k_lds, v_lds, OT, m, l = begin(q, queries, waves=waves, qw=w)
        # Query i (a column of Sᵀ) sees keys up to past + first + i; none past the workgroup's
        # last query are read (every wave walks the same tiles), and a workgroup past the
        # sequence's queries reads none.
        end = hk.minimum(hk.iota(hk.RT(f32, TILE, TILE), "col") + (past + first + 1), n)
        tiles = hk.minimum(hk.minimum(hk.cdiv(n, TILE), hk.cdiv(past + top + span, TILE)),
                           hk.maximum(count - top, 0) * (n + TILE))
        extra = () if fp8 is None else (scales,)
        OT, m, l = attend(q_lds, OT, m, l, k_lds, v_lds, k, v, tables, seq, h // GROUP, n, end, tiles,
                          scale * LOG2E, True, *extra, qw=w)
        finish(o, queries, OT, l)

    def grid(p):  # (workgroups of `span` tokens, sequences x groups of HEADS query heads)
        return hk.cdiv(p.max_query_len, span), p.lens.cols * (p.k.cols // (D * KV) * GROUP // HEADS)

    name = "paged_prefill_d%d_g%d_b%d%s%s%s" % (D, GROUP, BS, _suffix(KV, fp8), "" if HEADS == 1 else "_h%d" % HEADS,
                                               "" if TILES == 1 else "_t%d" % TILES)
    C, F, I = hk.Tensor[_cache_type(fp8)], hk.Tensor[hk.fp32], hk.Tensor[hk.i32]
    if fp8 is None:
        def prefill(q: hk.Tensor[bf16], k: C, v: C, tables: I, lens: I, starts: I, o: hk.Tensor[bf16], scale: float,
                    max_query_len: int):
            body(q, k, v, tables, lens, starts, o, scale, None)
    else:
        def prefill(q: hk.Tensor[bf16], k: C, v: C, tables: I, lens: I, starts: I, o: hk.Tensor[bf16], scale: float,
                    max_query_len: int, kv_scales: F):
            body(q, k, v, tables, lens, starts, o, scale, kv_scales)
    return hk.kernel(grid=grid, name=name, warps=waves)(prefill)


def _check_paged(op, query, key_cache, value_cache, out, query_shape):
    """The checks decode and prefill share: dtypes, devices, shapes; (heads, d, bs, kv_heads)."""
    for name, t in (("query", query), ("key_cache", key_cache), ("value_cache", value_cache), ("out", out)):
        if t.dtype != torch.bfloat16 and not (name.endswith("cache") and t.dtype in FP8_CACHES):
            raise registry.LaunchError("hk.ops.%s: %s is %s" % (op, name, t.dtype),
                                       hint="pass bfloat16 tensors (the caches bfloat16, or e4m3 bytes: uint8 or "
                                            "float8_e4m3fn, with k_scale and v_scale)")
        if t.device != query.device:
            raise registry.LaunchError("hk.ops.%s: %s is on %s, query on %s" % (op, name, t.device, query.device))
    if value_cache.dtype != key_cache.dtype:
        raise registry.LaunchError("hk.ops.%s: key_cache is %s and value_cache %s; they must be one dtype"
                                   % (op, key_cache.dtype, value_cache.dtype))
    if query.dim() != 3 or key_cache.dim() != 4 or value_cache.shape != key_cache.shape or out.shape != query.shape:
        raise registry.LaunchError(
            "hk.ops.%s: query %s, key_cache %s, value_cache %s, out %s: query and out are %s, the caches "
            "[blocks, block_size, kv_heads, head_size]" % (op, tuple(query.shape), tuple(key_cache.shape),
                                                           tuple(value_cache.shape), tuple(out.shape), query_shape))
    _, heads, d = query.shape
    _, bs, kv_heads, dk = key_cache.shape
    if dk != d or d % 16 or d > 256 or bs % TILE or heads % kv_heads:
        raise registry.LaunchError(
            "hk.ops.%s: head size %d (cache %d), block size %d, %d heads on %d K/V heads are not supported"
            % (op, d, dk, bs, heads, kv_heads),
            hint="head sizes are multiples of 16 up to 256, block sizes multiples of 16, and heads a multiple of "
                 "K/V heads")
    return heads, d, bs, kv_heads


def _check_indices(op, query, tensors):
    """int32 index tensors of the given lengths along their first dimension, on query's device."""
    for name, t, rows in tensors:
        if t.dtype != torch.int32 or t.dim() not in (1, 2) or t.shape[0] != rows or t.device != query.device:
            raise registry.LaunchError("hk.ops.%s: %s is %s %s on %s; it must be int32 with %d rows on %s"
                                       % (op, name, t.dtype, tuple(t.shape), t.device, rows, query.device))


def _fp8_scales(op, key_cache, query, k_scale, v_scale):
    """(the fp8 kernels' name for the launch target, [k_scale, v_scale]) for an e4m3 cache, None
    for a bf16 one (whose scales, as vLLM passes them, are not read)."""
    if key_cache.dtype not in FP8_CACHES:
        return None
    scales = []
    for name, t in (("k_scale", k_scale), ("v_scale", v_scale)):
        if t is None:
            raise registry.LaunchError("hk.ops.%s: key_cache is %s (e4m3 bytes) and %s is missing"
                                       % (op, key_cache.dtype, name),
                                       hint="pass k_scale and v_scale, float32 tensors of one element (the scales "
                                            "the cache was written with)")
        if t.dtype != torch.float32 or t.numel() != 1 or t.device != query.device:
            raise registry.LaunchError("hk.ops.%s: %s is %s %s on %s; it must be float32 of one element on %s"
                                       % (op, name, t.dtype, list(t.shape), t.device, query.device))
        scales.append(t.reshape(1))
    raw = facts.target(registry.launch_arch()).fp8_format == "fnuz"
    # One tensor of the two (a tensor argument costs the kernel 12 SGPRs, which gfx950's lack).
    return ("raw fp8e4m3" if raw else "fp8e4m3"), torch.cat(scales)


def _as_stored(cache, fp8):
    """An e4m3 cache as its kernel reads it: float8_e4m3fn, or int8 bytes (raw)."""
    return cache.view(torch.int8 if fp8.startswith("raw ") else torch.float8_e4m3fn)


def launch_decode(query, key_cache, value_cache, block_tables, seq_lens, scale, out, k_scale=None, v_scale=None):
    op = "paged_attention_decode"
    heads, d, bs, kv_heads = _check_paged(op, query, key_cache, value_cache, out, "[seqs, heads, head_size]")
    fp8 = _fp8_scales(op, key_cache, query, k_scale, v_scale)
    seqs = query.shape[0]
    _check_indices(op, query, (("block_tables", block_tables, seqs), ("seq_lens", seq_lens, seqs)))
    if block_tables.dim() != 2 or seq_lens.dim() != 1:
        raise registry.LaunchError("hk.ops.%s: block_tables is [seqs, max_blocks] and seq_lens [seqs]; got %s and %s"
                                   % (op, tuple(block_tables.shape), tuple(seq_lens.shape)))
    if seqs == 0:
        return
    k2, v2, kv = caches(op, key_cache, value_cache)
    q2 = registry.rows(op, "query", query, d)
    o2 = registry.rows(op, "out", out, d, writable=True)
    if fp8 is not None:
        k2, v2 = _as_stored(k2, fp8[0]), _as_stored(v2, fp8[0])
    fmt = None if fp8 is None else fp8[0]
    operands = (q2, k2, v2, block_tables.contiguous(), seq_lens.contiguous())
    extra = () if fp8 is None else (fp8[1],)
    # The parts each sequence's keys are cut into are the bucket's tuned choice on the launch's
    # target (by sequences, heads and head size), else one.
    shape = (seqs, block_tables.shape[1] * bs, heads, kv_heads, d, bs)
    arch = tuned.launch_arch()

    def run(knobs):
        for launch in decode_launches(d, heads // kv_heads, bs, kv, fmt, operands, o2, float(scale), extra,
                                       decode_parts(knobs)):
            launch.kernel(*launch.args, arch=arch, **launch.constants)

    tuned.launch(PAGED_DECODE, shape, run, arch)


def decode_launches(d, group, bs, kv, fmt, operands, o2, scale, extra, parts):
    """[Launch] of a decode: the one-pass kernel, or (parts > 1) the split kernel and the merge of
    its parts. operands: (q, k, v, tables, lens) as the kernels take them; extra: an fp8 cache's
    (kv_scales,)."""
    config = (d, group, bs, kv) + (() if fmt is None else (fmt,))  # (as the kernels' callers key them)
    if parts == 1:
        return [Launch(decode_kernel(*config), {}, operands + (o2, scale) + extra)]
    rows = o2.shape[0]
    partial = torch.empty(parts, 1, rows, d, dtype=torch.float32, device=o2.device)
    lse = torch.empty(parts, 1, rows, TILE, dtype=torch.float32, device=o2.device)
    return [Launch(decode_split_kernel(*config), {}, operands + (partial, lse, scale) + extra),
            Launch(merge_kernel(d), {}, (partial, lse, o2))]


# Tuning -----------------------------------------------------------------------------------------

# Decode's parts per sequence as a candidate of its launches (the one-pass kernel, or the split
# kernel and the merge), per bucket of sequences by heads, K/V heads and head size: a few
# sequences leave most of a large GPU idle with a workgroup per K/V head and sequence. A shape
# is (SEQS, CONTEXT, HEADS, KV_HEADS, D[, BS]): SEQS sequences of CONTEXT keys each in a bf16
# cache of BS-slot blocks (16 by default); the bucket does not depend on CONTEXT (a launch knows
# its block table's width, not its sequences' lengths, without waiting for the device).
SEQ_BUCKETS = (1, 4, 16, 64, 256)


def decode_space(target):
    return space(parts=[1, 2, 4, 8, 16, 32])


def _count(knobs, name, what):
    """Knob `name` of `knobs` ({} or None: 1), a positive number of `what`."""
    value = dict(knobs or {}).get(name, 1)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError("%s is a positive number of %s, not %r" % (name, what, value))
    return value


def decode_parts(knobs):
    """The parts of `knobs` ({} or None: one)."""
    return _count(knobs, "parts", "parts per sequence")


def paged_shape(shape):
    """(seqs, context or tokens, heads, kv_heads, d, bs) of a decode's or a prefill's shape (the
    block size 16 unless given)."""
    seqs, count, heads, kv_heads, d, *rest = (int(x) for x in shape)
    return seqs, count, heads, kv_heads, d, rest[0] if rest else TILE


def _bucket(heads, kv_heads, d, bs, what, count, highs):
    """The bucket of `count` (of `what`) among the ranges ending at `highs`, by heads, head size
    and block size."""
    low = 0
    for high in highs:
        if count <= high:
            return "H=%d KVH=%d D=%d BS=%d %s=%d-%d" % (heads, kv_heads, d, bs, what, low + 1, high)
        low = high
    return "H=%d KVH=%d D=%d BS=%d %s>%d" % (heads, kv_heads, d, bs, what, highs[-1])


def decode_bucket(shape):
    seqs, _, heads, kv_heads, d, bs = paged_shape(shape)
    return _bucket(heads, kv_heads, d, bs, "seqs", seqs, SEQ_BUCKETS)


def _tuning_cache(seqs, keys, kv_heads, d, bs):
    """(K and V caches, meta bf16, block tables, lengths) of `seqs` sequences of `keys` keys
    each, their blocks in order (the tables and lengths as values: they steer the kernels)."""
    used = -(-keys // bs)
    k = torch.empty(seqs * used, 1, bs, kv_heads * d, dtype=torch.bfloat16, device="meta")
    tables = torch.arange(seqs * used, dtype=torch.int32).view(seqs, used)
    return k, torch.empty_like(k), tables, torch.full((seqs,), keys, dtype=torch.int32)


def _tuning_launches(config, shape):
    seqs, context, heads, kv_heads, d, bs = paged_shape(shape)
    k, v, tables, lens = _tuning_cache(seqs, context, kv_heads, d, bs)
    rows = torch.empty(seqs * heads, d, dtype=torch.bfloat16, device="meta")
    return decode_launches(d, heads // kv_heads, bs, 1, None, (rows, k, v, tables, lens),
                           torch.empty_like(rows), d ** -0.5, (), decode_parts(config.as_dict()))


PAGED_DECODE = Tunable(
    name="paged_attention_decode", space=decode_space, knobs=frozenset(("parts",)), launches=_tuning_launches,
    default=lambda arch: {"parts": 1}, bucket=decode_bucket,
    describe=lambda shape: "seqs=%d context=%d H=%d KVH=%d D=%d BS=%d" % paged_shape(shape),
    sources=(os.path.abspath(__file__),))


def launch_prefill(query, key_cache, value_cache, block_tables, seq_lens, query_start_loc, max_query_len, scale,
                   out, k_scale=None, v_scale=None):
    op = "paged_attention_prefill"
    heads, d, bs, kv_heads = _check_paged(op, query, key_cache, value_cache, out, "[tokens, heads, head_size]")
    fp8 = _fp8_scales(op, key_cache, query, k_scale, v_scale)
    if seq_lens.dim() != 1 or block_tables.dim() != 2 or query_start_loc.dim() != 1:
        raise registry.LaunchError("hk.ops.%s: block_tables is [seqs, max_blocks], seq_lens [seqs] and "
                                   "query_start_loc [seqs + 1]; got %s, %s and %s"
                                   % (op, tuple(block_tables.shape), tuple(seq_lens.shape),
                                      tuple(query_start_loc.shape)))
    seqs = seq_lens.shape[0]
    _check_indices(op, query, (("block_tables", block_tables, seqs), ("seq_lens", seq_lens, seqs),
                               ("query_start_loc", query_start_loc, seqs + 1)))
    if isinstance(max_query_len, bool) or not isinstance(max_query_len, int) or max_query_len < 0:
        raise registry.LaunchError("hk.ops.%s: max_query_len is %r; it must be an int >= 0" % (op, max_query_len))
    if seqs == 0 or query.shape[0] == 0 or max_query_len == 0:
        return
    k2, v2, kv = caches(op, key_cache, value_cache)
    args = [registry.rows(op, "query", query, d), k2, v2, block_tables.contiguous(), seq_lens.contiguous(),
            query_start_loc.contiguous(), registry.rows(op, "out", out, d, writable=True), float(scale),
            int(max_query_len)]
    if fp8 is None:
        # The waves per workgroup are the bucket's tuned choice on the launch's target (by
        # tokens per sequence, heads and head size), else one.
        shape = (seqs, int(max_query_len), heads, kv_heads, d, bs)
        arch = tuned.launch_arch()
        tuned.launch(PAGED_PREFILL, shape,
                     lambda knobs: prefill_of(d, heads // kv_heads, bs, kv, knobs)(*args, arch=arch), arch)
        return
    args[1], args[2] = _as_stored(k2, fp8[0]), _as_stored(v2, fp8[0])
    prefill_kernel(d, heads // kv_heads, bs, kv, fp8[0])(*args, fp8[1])


# Prefill's waves per workgroup as a candidate: HEADS query heads of a K/V head times TILES
# tiles of 16 tokens share each 16 keys' copy into LDS, per bucket of tokens per sequence by
# heads, K/V heads and head size. A shape is (SEQS, TOKENS, HEADS, KV_HEADS, D[, BS]): SEQS
# sequences of TOKENS new tokens each, nothing cached before them, in a bf16 cache of BS-slot
# blocks (16 by default). The bucket is the launch's max_query_len's (known without waiting for
# the device), whatever the sequences' cached context.
PREFILL_BUCKETS = (16, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768)


def prefill_space(target):
    """A workgroup of up to 8 waves; HEADS must divide a shape's query heads per K/V head (the
    others are refused at that shape)."""
    return space(HEADS=[1, 2, 4, 8], TILES=[1, 2, 4, 8], where=[lambda c: c.HEADS * c.TILES <= 8])


def prefill_waves(knobs, group):
    """(HEADS, TILES) of `knobs` ({} or None: one wave) for GROUP query heads per K/V head."""
    heads, tiles = _count(knobs, "HEADS", "waves"), _count(knobs, "TILES", "waves")
    if group % heads:
        raise ValueError("HEADS=%d does not divide the %d query heads per K/V head" % (heads, group))
    return heads, tiles


def prefill_of(d, group, bs, kv, knobs):
    heads, tiles = prefill_waves(knobs, group)
    # One wave is the kernel the default launch makes (one Kernel, one trace).
    return prefill_kernel(d, group, bs, kv) if heads == tiles == 1 else prefill_kernel(d, group, bs, kv, None,
                                                                                      heads, tiles)


def prefill_bucket(shape):
    _, tokens, heads, kv_heads, d, bs = paged_shape(shape)
    return _bucket(heads, kv_heads, d, bs, "tokens", tokens, PREFILL_BUCKETS)


def prefill_arguments(shape):
    """The launch's arguments at a shape (meta tensors; the tables and lengths as values, which
    steer the kernel)."""
    seqs, tokens, heads, kv_heads, d, bs = paged_shape(shape)
    k, v, tables, lens = _tuning_cache(seqs, tokens, kv_heads, d, bs)
    starts = torch.arange(seqs + 1, dtype=torch.int32) * tokens
    rows = torch.empty(seqs * tokens * heads, d, dtype=torch.bfloat16, device="meta")
    return rows, k, v, tables, lens, starts, torch.empty_like(rows), d ** -0.5, tokens


def _prefill_candidate(config, shape):
    _, _, heads, kv_heads, d, bs = paged_shape(shape)
    return prefill_of(d, heads // kv_heads, bs, 1, config.as_dict()), {}


PAGED_PREFILL = Tunable(
    name="paged_attention_prefill", space=prefill_space, knobs=frozenset(("HEADS", "TILES")),
    kernel=_prefill_candidate, arguments=prefill_arguments, default=lambda arch: {"HEADS": 1, "TILES": 1},
    bucket=prefill_bucket, describe=lambda shape: "seqs=%d tokens=%d H=%d KVH=%d D=%d BS=%d" % paged_shape(shape),
    sources=(os.path.abspath(__file__),))


def interleaved(key_cache, value_cache):
    """The one cache [blocks, block_size, kv_heads * 2 * head_size] that `key_cache` and
    `value_cache` are the two halves of (each head's K, then its V: vLLM's KV cache, split along
    its last dimension), viewed as [blocks, 1, block_size, ...]; None when they are not."""
    blocks, bs, kv_heads, d = key_cache.shape
    es = key_cache.element_size()
    if (value_cache.shape != key_cache.shape or value_cache.stride() != key_cache.stride()
            or value_cache.dtype != key_cache.dtype or key_cache.numel() == 0
            or key_cache.untyped_storage().data_ptr() != value_cache.untyped_storage().data_ptr()
            or value_cache.data_ptr() - key_cache.data_ptr() != d * es):
        return None
    row = kv_heads * 2 * d
    if key_cache.stride()[1:] != (row, 2 * d, 1):
        return None  # the slots and heads of a block are not one run of rows
    return key_cache.as_strided((blocks, 1, bs, row), (key_cache.stride(0), key_cache.stride(0), row, 1))


def caches(op, key_cache, value_cache):
    """(K, V, KV) as the kernels take them: one cache passed twice with KV 2 when the two are
    halves of one (interleaved), else each as [blocks, 1, block_size, kv_heads * head_size]."""
    both = interleaved(key_cache, value_cache)
    if both is not None:
        return both, both, 2
    return _blocks(op, "key_cache", key_cache), _blocks(op, "value_cache", value_cache), 1


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


def decode_reference(query, key_cache, value_cache, block_tables, seq_lens, scale):
    """Decode attention in torch (float32, then query's dtype) on each sequence's keys and values
    gathered through its block table: what the kernels compute, for tests."""
    seqs, heads, d = query.shape
    _, bs, kv_heads, _ = key_cache.shape
    out = torch.zeros(seqs, heads, d)
    for s in range(seqs):
        n = int(seq_lens[s])
        if n == 0:
            continue
        blocks = block_tables[s, :(n + bs - 1) // bs].long()
        k, v = (c[blocks].reshape(-1, kv_heads, d)[:n].float().repeat_interleave(heads // kv_heads, 1)
                for c in (key_cache, value_cache))
        p = torch.softmax(torch.einsum("hd,nhd->hn", query[s].float(), k) * scale, -1)
        out[s] = torch.einsum("hn,nhd->hd", p, v)
    return out.to(query.dtype)


def _decode(query, key_cache, value_cache, block_tables, seq_lens, scale, k_scale=None, v_scale=None):
    out = torch.empty(query.shape, dtype=query.dtype, device=query.device)
    launch_decode(query, key_cache, value_cache, block_tables, seq_lens, scale, out, k_scale, v_scale)
    return out


def _decode_out(out, query, key_cache, value_cache, block_tables, seq_lens, scale, k_scale=None, v_scale=None):
    launch_decode(query, key_cache, value_cache, block_tables, seq_lens, scale, out, k_scale, v_scale)


def _prefill(query, key_cache, value_cache, block_tables, seq_lens, query_start_loc, max_query_len, scale,
             k_scale=None, v_scale=None):
    out = torch.empty(query.shape, dtype=query.dtype, device=query.device)
    launch_prefill(query, key_cache, value_cache, block_tables, seq_lens, query_start_loc, max_query_len, scale, out,
                   k_scale, v_scale)
    return out


def _prefill_out(out, query, key_cache, value_cache, block_tables, seq_lens, query_start_loc, max_query_len, scale,
                 k_scale=None, v_scale=None):
    launch_prefill(query, key_cache, value_cache, block_tables, seq_lens, query_start_loc, max_query_len, scale, out,
                   k_scale, v_scale)


SCALES = "Tensor? k_scale=None, Tensor? v_scale=None"  # an fp8 cache's (after the arguments callers pass today)
PREFILL_ARGS = ("Tensor query, Tensor key_cache, Tensor value_cache, Tensor block_tables, Tensor seq_lens, "
                "Tensor query_start_loc, int max_query_len, float scale, " + SCALES)
DECODE_ARGS = ("Tensor query, Tensor key_cache, Tensor value_cache, Tensor block_tables, Tensor seq_lens, "
               "float scale, " + SCALES)


def _like_query(query, *args, **kwargs):
    return torch.empty(query.shape, dtype=query.dtype, device=query.device)


OPS = {
    "paged_attention_prefill": registry.define(
        "paged_attention_prefill", "(%s) -> Tensor" % PREFILL_ARGS, _prefill, _like_query),
    "paged_attention_prefill_out": registry.define(
        "paged_attention_prefill_out", "(Tensor(a!) out, %s) -> ()" % PREFILL_ARGS, _prefill_out,
        lambda out, *args, **kwargs: None, mutates=("out",)),
    "paged_attention_decode": registry.define(
        "paged_attention_decode", "(%s) -> Tensor" % DECODE_ARGS, _decode, _like_query),
    "paged_attention_decode_out": registry.define(
        "paged_attention_decode_out", "(Tensor(a!) out, %s) -> ()" % DECODE_ARGS, _decode_out,
        lambda out, *args, **kwargs: None, mutates=("out",)),
}
