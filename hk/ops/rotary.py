"""Rotary position embedding in place on q and k, as vLLM's rotary_embedding takes it:

    rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox)

query [tokens, heads * head_size] (or [tokens, heads, head_size], or any leading shape whose
product is the tokens), key the same with its own number of heads (or None); both may be views
with padded rows (q and k sliced out of one qkv tensor). cos_sin_cache [max_position, rot] holds
cos in its first rot/2 columns and sin in the rest; each token's row is gathered by its position
(int32 or int64, read with no copy; a position outside the cache reads zeros). The first rot columns of each head
rotate, the rest are left as they are:

    neox         x1, x2 = halves of the rotated part:  (x1 cos - x2 sin, x2 cos + x1 sin)
    interleaved  pairs (x[2i], x[2i+1]):              (x[2i] cos_i - x[2i+1] sin_i, x[2i+1] cos_i + x[2i] sin_i)

computed in fp32 and rounded once. A kernel is one wave per (16 tokens, head). The interleaved
form moves each pair's partner and spreads cos and sin over the pairs with matrix instructions
against constant 0/±1 matrices (exact: each output is one product), so it takes 16-bit q and k
and a cache of the same dtype; the neox form takes any float dtype and an fp32 cache.
"""

import functools

import torch

import hk
from hk.ops import indices, registry

TOKENS = 16


@functools.lru_cache(maxsize=None)
def rope_kernel(dtype, cache_dtype, head, rot, neox):
    """Rotates the first `rot` columns of each `head`-wide head of x in place (neox or
    interleaved), one wave per 16 tokens and head, the positions as hk.ops.indices reads them.
    The interleaved kernel also takes its constant matrices (`interleave_consts`)."""
    half = rot // 2
    f32 = hk.fp32
    grid = lambda p: (p.x.cols // head, hk.cdiv(p.x.rows, TOKENS))  # noqa: E731
    name = "rope_%s_%s_%s_d%d_r%d" % ("neox" if neox else "interleaved", dtype.name, cache_dtype.name, head, rot)

    # neox: W columns of each half at a time (whole 16 x half tiles do not fit gfx11's registers).
    W = 32 if half % 32 == 0 else 16

    @hk.func
    def rows_of(ids, cache, col, width):
        return hk.gather(cache, hk.tile_coord(0, 0, 0, col), ids, hk.RT(cache_dtype, TOKENS, width))

    if neox:
        @hk.kernel(grid=grid, name=name)
        def rope(pos: hk.Tensor[hk.i32], cache: hk.Tensor[cache_dtype], x: hk.Tensor[dtype]):
            t = hk.arch.block_idx.y
            ids = indices.load(pos, t, cache_dtype)
            for m in range(half // W):
                cos = rows_of(ids, cache, m, W).to(f32)
                sin = rows_of(ids, cache, half // W + m, W).to(f32)
                c1 = hk.arch.block_idx.x * (head // W) + m
                c2 = c1 + half // W
                x1 = x[0, 0, t, c1].load(hk.RT(dtype, TOKENS, W)).to(f32)
                x2 = x[0, 0, t, c2].load(hk.RT(dtype, TOKENS, W)).to(f32)
                x[0, 0, t, c1] = (x1 * cos - x2 * sin).to(dtype)
                x[0, 0, t, c2] = (x2 * cos + x1 * sin).to(dtype)
    else:
        @hk.kernel(grid=grid, name=name)
        def rope(pos: hk.Tensor[hk.i32], cache: hk.Tensor[cache_dtype], consts: hk.Tensor[dtype],
                 x: hk.Tensor[dtype]):
            t = hk.arch.block_idx.y
            ids = indices.load(pos, t, cache_dtype)
            # consts rows 0-31: the partner matrix P (x Pᵀ puts -x[2i+1] at 2i and x[2i] at
            # 2i+1); rows 32-63, columns 0-15: the spread S (c Sᵀ puts c[i] at 2i and 2i+1).
            partner = consts[0, 0, 0, 0].load(hk.RT(dtype, 32, 32))
            spread = consts[0, 0, 1, 0].load(hk.RT(dtype, 32, 16))
            zero = hk.zeros(hk.RT(f32, TOKENS, 32))
            for m in range(rot // 32):  # 32 columns (16 pairs) at a time
                c = hk.arch.block_idx.x * (head // 32) + m
                xm = x[0, 0, t, c].load(hk.RT(dtype, TOKENS, 32))
                cos = hk.mma_ABt(rows_of(ids, cache, m, 16), spread, zero)
                sin = hk.mma_ABt(rows_of(ids, cache, half // 16 + m, 16), spread, zero)
                x[0, 0, t, c] = (xm.to(f32) * cos + hk.mma_ABt(xm, partner, zero) * sin).to(dtype)

    return rope


@functools.lru_cache(maxsize=None)
def interleave_consts(dtype, device):
    """The interleaved kernel's constant matrices (see rope_kernel), made once per dtype and
    device."""
    m = torch.zeros(64, 32)
    i = torch.arange(16)
    m[2 * i, 2 * i + 1] = -1.0
    m[2 * i + 1, 2 * i] = 1.0
    n = torch.arange(32)
    m[32 + n, n // 2] = 1.0
    return m.to(dtype=dtype, device=device)


def _heads_view(op, name, t, tokens, head_size):
    """`t` as [tokens, heads * head_size], written in place."""
    if t.numel() % max(tokens, 1) or (t.numel() // max(tokens, 1)) % head_size:
        raise registry.LaunchError("hk.ops.%s: %s has shape %s, which is not %d tokens of heads of %d"
                                   % (op, name, tuple(t.shape), tokens, head_size))
    cols = t.numel() // max(tokens, 1)
    try:
        flat = t.view(tokens, cols)
    except RuntimeError:
        flat = None
    if flat is None or (flat.numel() and flat.stride(-1) != 1):
        raise registry.LaunchError("hk.ops.%s: %s (shape %s, strides %s) has no [tokens, heads * head_size] "
                                   "view with contiguous rows, so it cannot be rotated in place"
                                   % (op, name, tuple(t.shape), t.stride()),
                                   hint="pass q and k with each token's heads contiguous (slices of qkv are)")
    return flat


def launch_rotary(positions, query, key, head_size, cos_sin_cache, is_neox):
    op = "rotary_embedding"
    dtype = registry.dtype_of(op, query)
    if key is not None:
        registry.same(op, "key", key, query)
    pos = indices.view(op, "positions", positions)
    if cos_sin_cache.dim() != 2 or cos_sin_cache.device != query.device:
        raise registry.LaunchError("hk.ops.%s: cos_sin_cache has shape %s on %s; it must be [max_position, rot] "
                                   "on %s" % (op, tuple(cos_sin_cache.shape), cos_sin_cache.device, query.device))
    rot = cos_sin_cache.shape[1]
    step = 32 if not is_neox or rot % 64 == 0 else 16  # the columns a kernel moves at a time
    if rot % 32 or rot > head_size or head_size % step:
        raise registry.LaunchError(
            "hk.ops.%s: a rotary width of %d in heads of %d is not supported" % (op, rot, head_size),
            hint="the rotated width must be a multiple of 32 and at most the head size, and the head size a "
                 "multiple of %d" % step)
    cache_dtype = cos_sin_cache.dtype
    if is_neox:
        if cache_dtype not in (query.dtype, torch.float32):
            raise registry.LaunchError("hk.ops.%s: cos_sin_cache is %s for %s q and k" % (op, cache_dtype, query.dtype),
                                       hint="pass it in q's dtype or in float32")
    elif query.dtype not in (torch.bfloat16, torch.float16) or cache_dtype != query.dtype:
        raise registry.LaunchError(
            "hk.ops.%s: the interleaved form takes bf16 or fp16 q and k and a cache of their dtype, not %s and %s"
            % (op, query.dtype, cache_dtype), hint="convert the cache once with cos_sin_cache.to(query.dtype)")
    tokens = positions.numel()
    views = [(name, _heads_view(op, name, t, tokens, head_size)) for name, t in (("query", query), ("key", key))
             if t is not None]
    if tokens == 0:
        return
    cache = registry.rows(op, "cos_sin_cache", cos_sin_cache, rot)
    kernel = rope_kernel(dtype, hk.types.from_torch(cache_dtype), head_size, rot, is_neox)
    for _, x in views:
        if is_neox:
            kernel(pos, cache, x)
        else:
            kernel(pos, cache, interleave_consts(query.dtype, query.device), x)



def reference(positions, x, head_size, cos_sin_cache, is_neox):
    """What rotary_embedding makes of x, computed in torch (fp32, rounded once) as vLLM's
    forward_native computes it: the oracle of the tests and of examples/validate.py."""
    rot, tokens = cos_sin_cache.shape[1], positions.numel()
    cos, sin = cos_sin_cache[positions.reshape(-1).long()].float().chunk(2, -1)
    h = x.float().reshape(tokens, -1, head_size)
    turned, kept = h[..., :rot], h[..., rot:]
    c, s = cos[:, None], sin[:, None]
    if is_neox:
        x1, x2 = turned.chunk(2, -1)
        out = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    else:
        x1, x2 = turned[..., 0::2], turned[..., 1::2]
        out = torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], -1).flatten(-2)
    return torch.cat([out, kept], -1).reshape(x.shape).to(x.dtype)

def _rotary(positions, query, key, head_size, cos_sin_cache, is_neox):
    launch_rotary(positions, query, key, head_size, cos_sin_cache, is_neox)


OPS = {
    "rotary_embedding": registry.define(
        "rotary_embedding",
        "(Tensor positions, Tensor(a!) query, Tensor(b!)? key, int head_size, Tensor cos_sin_cache, "
        "bool is_neox) -> ()",
        _rotary, lambda positions, query, key, head_size, cos_sin_cache, is_neox: None,
        mutates=("query", "key")),
}
