"""Rows by index: an embedding lookup (a gather) and vLLM's flash-layout KV cache write (a
scatter), 16 indices by 64 columns per wave, the indices read as hk.ops.indices reads them
(int32 or int64, no copy; past the end none).

    embedding(weight, indices)        weight [vocab, dim], indices int32 or int64 of any shape
                                      -> [*indices.shape, dim]; an index outside [0, vocab)
                                      reads zeros (padding, or another shard's token under
                                      vocabulary parallelism)
    embedding_out(out, weight, indices)

The KV cache write of vLLM's flash layout: each new token's key and value rows to their slot,
padding tokens (slot -1) dropped, the slots nobody writes left as they are.

    reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping)
        key, value [tokens, kv_heads, head_size] (or [tokens, kv_heads * head_size]; rows may
        be padded), key_cache, value_cache [blocks, block_size, kv_heads, head_size], written in
        place; slot_mapping int64 or int32 [tokens]: slot s is row s % block_size of block
        s // block_size. The cache's dtype is the keys'. The two caches may be the halves of
        one [blocks, block_size, kv_heads, 2 * head_size] cache (each head's K, then its V:
        vLLM 0.33's layout), written with one scatter.

    reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype,
                            k_scale, v_scale)
        vLLM's fp8 KV cache: with kv_cache_dtype "fp8" (or "fp8_e4m3") the caches hold OCP e4m3
        bytes (torch.uint8, as vLLM allocates them, or torch.float8_e4m3fn), each element
        x / scale in fp32 rounded to nearest even and saturated to +-448 (infinities too; NaN
        stays NaN), as vLLM's scaled conversion stores it; k_scale and v_scale are float32
        tensors of one element, read on the device. Keys and values bf16, fp16 or fp32. On
        gfx942, whose fp8 is FNUZ, the bytes are computed by fp32 selects and
        rounding (encode_e4m3). "auto" (or a 16-bit name) is the path above; "fp8_e5m2" is
        refused.
"""

import functools

import torch

import hk
from hk.ops import indices, paged, registry
from hk.target import facts

DIM_TILE = 64
E4M3_MAX = 448.0
# kv_cache_dtype names whose cache holds the keys' own type; the fp8 ones hk writes.
NATIVE = ("auto", "bfloat16", "float16", "float32", "half", "float")
FP8 = ("fp8", "fp8_e4m3")


@functools.lru_cache(maxsize=None)
def embedding_kernel(dtype):
    """out[i] = table[ids[i]] for `dtype` rows, the ids as hk.ops.indices reads them."""

    @hk.kernel(grid=lambda p: (hk.cdiv(p.table.cols, DIM_TILE), hk.cdiv(p.out.rows, indices.TILE)),
               name="embedding_%s" % dtype.name)
    def embedding(table: hk.Tensor[dtype], ids: hk.Tensor[hk.i32], out: hk.Tensor[dtype]):
        d, t = hk.arch.block_idx.x, hk.arch.block_idx.y
        rows = indices.load(ids, t, dtype)
        out[0, 0, t, d] = hk.gather(table, hk.tile_coord(0, 0, 0, d), rows, hk.RT(dtype, indices.TILE, DIM_TILE))

    return embedding


def launch_embedding(weight, ids, out):
    op = "embedding"
    dtype = registry.dtype_of(op, weight)
    registry.same(op, "out", out, weight)
    if weight.dim() != 2:
        raise registry.LaunchError("hk.ops.%s: weight has shape %s; it must be [vocab, dim]" % (op, tuple(weight.shape)))
    dim = weight.shape[1]
    if tuple(out.shape) != tuple(ids.shape) + (dim,):
        raise registry.LaunchError("hk.ops.%s: out has shape %s, not %s" % (op, tuple(out.shape),
                                                                           tuple(ids.shape) + (dim,)))
    flat = indices.view(op, "indices", ids)
    if out.numel() == 0:
        return
    table = registry.rows(op, "weight", weight, dim)
    embedding_kernel(dtype)(table, flat, registry.rows(op, "out", out, dim, writable=True))


def _embedding(weight, ids):
    out = torch.empty(tuple(ids.shape) + (weight.shape[-1],), dtype=weight.dtype, device=weight.device)
    launch_embedding(weight, ids, out)
    return out


def _embedding_out(out, weight, ids):
    launch_embedding(weight, ids, out)


@functools.lru_cache(maxsize=None)
def kv_write_kernel(dtype):
    """cache[slots[i]] = rows[i] for `dtype` rows, negative slots dropped, the slots as
    hk.ops.indices reads them."""

    @hk.kernel(grid=lambda p: (hk.cdiv(p.rows.cols, DIM_TILE), hk.cdiv(p.rows.rows, indices.TILE)),
               name="kv_write_%s" % dtype.name)
    def kv_write(rows: hk.Tensor[dtype], slots: hk.Tensor[hk.i32], cache: hk.Tensor[dtype]):
        d, t = hk.arch.block_idx.x, hk.arch.block_idx.y
        tile = rows[0, 0, t, d].load(hk.RT(dtype, indices.TILE, DIM_TILE))
        hk.scatter(cache, hk.tile_coord(0, 0, 0, d), indices.load(slots, t, dtype), tile)

    return kv_write


def _cache_rows(op, name, cache, width):
    """`cache` [blocks, block_size, heads, head_size] as [slots, heads * head_size] in place."""
    if cache.dim() != 4 or cache.shape[2] * cache.shape[3] != width:
        raise registry.LaunchError("hk.ops.%s: %s has shape %s; it must be [blocks, block_size, heads, head_size] "
                                   "with heads * head_size = %d" % (op, name, tuple(cache.shape), width))
    try:
        flat = cache.view(-1, width)
    except RuntimeError:
        flat = None
    if flat is None or (flat.numel() and flat.stride(-1) != 1):
        raise registry.LaunchError("hk.ops.%s: %s (strides %s) has no [slots, heads * head_size] view, so it "
                                   "cannot be written in place" % (op, name, cache.stride()),
                                   hint="pass each cache with its blocks, slots and heads contiguous")
    return flat


@hk.func
def encode_e4m3(v):
    """fp32 values as OCP e4m3 bytes (an i8 tile), in arithmetic every target has: |v| on the
    grid of its binade (k 0 .. 14, the subnormals' with the first; quantum 2^(k - 9)) rounded to
    nearest even, the byte 8k + |v| / quantum (which carries into the next binade on its own),
    the sign from v or, for -0, from 1 / v; beyond 448 (infinities too) 448, NaN 0x7f."""
    f32 = hk.fp32
    a = hk.math.abs(v)
    a = hk.where(a > E4M3_MAX, hk.full(a.spec, E4M3_MAX), a)  # (NaN fails the test: kept)
    k = hk.zeros(a.spec)
    inv = hk.full(a.spec, 2.0 ** 9)
    for e in range(-5, 9):  # the binade [2^e, 2^(e+1)) is k = e + 6
        above = a >= 2.0 ** e
        k = hk.where(above, hk.full(a.spec, float(e + 6)), k)
        inv = hk.where(above, hk.full(a.spec, 2.0 ** (3 - e)), inv)
    mag = (k * 8.0 + hk.math.round(a * inv)).to(hk.i32)
    byte = hk.where(v < 0.0, mag - 128, mag)  # bytes 128 .. 255 as the int8 they are
    byte = hk.where(1.0 / v < 0.0, mag - 128, byte)
    byte = hk.where(a >= 0.0, byte, hk.full(byte.spec, 127))  # NaN (no ordered test holds)
    return byte.to(hk.i8, "row")


@functools.lru_cache(maxsize=None)
def kv_write_fp8_kernel(dtype, raw, width):
    """cache[slots[i]] = e4m3(rows[i] / scale) for `dtype` rows, `width` columns a wave: the
    scale scales[(column // period) % 2] (period the head size of a cache whose rows alternate
    K and V heads; a tile of `width` lies in one). `raw`: the bytes as int8, encoded by
    encode_e4m3 (gfx942), else converted by the target's fp8e4m3 conversion."""
    stored = hk.i8 if raw else hk.fp8e4m3

    @hk.kernel(grid=lambda p: (hk.cdiv(p.rows.cols, width), hk.cdiv(p.rows.rows, indices.TILE)),
               name="kv_write_%s_fp8e4m3%s_w%d" % (dtype.name, "_raw" if raw else "", width))
    def kv_write(rows: hk.Tensor[dtype], slots: hk.Tensor[hk.i32], cache: hk.Tensor[stored],
                 scales: hk.Tensor[hk.fp32], period: int):
        d, t = hk.arch.block_idx.x, hk.arch.block_idx.y
        s = scales.load_scalar(0, 0, 0, (d * width // period) % 2)
        # fp32 in the col layout: each row stays in its lane from the bf16 rows to the bytes.
        v = rows[0, 0, t, d].load(hk.RT(dtype, indices.TILE, width)).to(hk.fp32, "col") / s
        if raw:
            q = encode_e4m3(v)
        else:
            # The conversion saturates finite values and keeps NaN; an infinity saturates too.
            q = hk.where(hk.math.abs(v) > E4M3_MAX, hk.minimum(hk.maximum(v, -E4M3_MAX), E4M3_MAX), v)
            q = q.to(hk.fp8e4m3, "row")
        hk.scatter(cache, hk.tile_coord(0, 0, 0, d), indices.load(slots, t, stored), q)

    return kv_write


def _scale(op, name, t, like):
    if t is None:
        raise registry.LaunchError("hk.ops.%s: %s is missing; an fp8 cache needs it" % (op, name),
                                   hint="pass %s, a float32 tensor of one element (the layer's _%s)" % (name, name))
    if t.dtype != torch.float32 or t.numel() != 1 or t.device != like.device:
        raise registry.LaunchError("hk.ops.%s: %s is %s %s on %s; it must be float32 of one element on %s"
                                   % (op, name, t.dtype, list(t.shape), t.device, like.device))
    return t.reshape(1)


def cache_format(op, kv_cache_dtype, key_cache, value_cache, like=None):
    """True for an fp8 cache (kv_cache_dtype "fp8" or "fp8_e4m3", uint8 or float8_e4m3fn
    caches), False for one of `like`'s dtype; anything else refused."""
    if kv_cache_dtype in FP8:
        for name, t in (("key_cache", key_cache), ("value_cache", value_cache)):
            if t.dtype not in (torch.uint8, torch.float8_e4m3fn):
                raise registry.LaunchError("hk.ops.%s: %s is %s; with kv_cache_dtype=%r it must be torch.uint8 or "
                                           "torch.float8_e4m3fn" % (op, name, t.dtype, kv_cache_dtype))
        return True
    if kv_cache_dtype == "fp8_e5m2":
        raise registry.LaunchError("hk.ops.%s: kv_cache_dtype 'fp8_e5m2' is not supported" % op,
                                   hint="use kv_cache_dtype 'fp8' (e4m3 with k_scale and v_scale) or 'auto'")
    if kv_cache_dtype not in NATIVE:
        raise registry.LaunchError("hk.ops.%s: kv_cache_dtype is %r; it must be one of %s"
                                   % (op, kv_cache_dtype, ", ".join(repr(n) for n in NATIVE + FP8)))
    if like is not None and key_cache.dtype in (torch.uint8, torch.float8_e4m3fn) and like.dtype != key_cache.dtype:
        raise registry.LaunchError("hk.ops.%s: key_cache is %s but kv_cache_dtype is %r, which stores the keys' "
                                   "%s" % (op, key_cache.dtype, kv_cache_dtype, like.dtype),
                                   hint="pass kv_cache_dtype='fp8' with k_scale and v_scale for an fp8 cache")
    return False


def launch_kv_write(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="auto", k_scale=None,
                    v_scale=None):
    op = "reshape_and_cache_flash"
    dtype = registry.dtype_of(op, key)
    if cache_format(op, kv_cache_dtype, key_cache, value_cache, key):
        return _write_fp8(op, dtype, key, value, key_cache, value_cache, slot_mapping,
                          _scale(op, "k_scale", k_scale, key), _scale(op, "v_scale", v_scale, key))
    for name, t in (("value", value), ("key_cache", key_cache), ("value_cache", value_cache)):
        registry.same(op, name, t, key)
    tokens = slot_mapping.numel()
    slots = indices.view(op, "slot_mapping", slot_mapping)
    for name, t in (("key", key), ("value", value)):
        if t.shape[0] != tokens:
            raise registry.LaunchError("hk.ops.%s: %s has %d tokens, slot_mapping %d" % (op, name, t.shape[0], tokens))
    kernel = kv_write_kernel(dtype)
    both = paged.interleaved(key_cache, value_cache)
    if both is not None:
        # One cache holding each head's K then its V: one scatter of rows laid out the same.
        blocks, _, bs, row = both.shape
        if both.stride(0) != bs * row:
            raise registry.LaunchError("hk.ops.%s: the blocks of the KV cache (strides %s) are not one run of "
                                       "rows, so it cannot be written in place" % (op, tuple(key_cache.stride())),
                                       hint="lay the cache out with each layer's blocks contiguous")
        if tokens:
            kv_heads, d = key_cache.shape[2:]
            rows = torch.cat((key.reshape(tokens, kv_heads, d), value.reshape(tokens, kv_heads, d)), dim=-1)
            kernel(rows.view(tokens, row), slots, both.view(blocks * bs, row))
        return
    for name, rows, cache_name, cache in (("key", key, "key_cache", key_cache),
                                          ("value", value, "value_cache", value_cache)):
        width = rows[0].numel() if tokens else rows.shape[1:].numel()
        flat_cache = _cache_rows(op, cache_name, cache, width)
        if tokens:
            kernel(registry.rows(op, name, rows.reshape(tokens, width), width), slots, flat_cache)


def _width(raw):
    # encode_e4m3's selects hold a 16 x 64 tile's fp32 many times over: 260 VGPRs on gfx942, 76
    # at 16 columns.
    return indices.TILE if raw else DIM_TILE


def _write_fp8(op, dtype, key, value, key_cache, value_cache, slot_mapping, k_scale, v_scale):
    for name, t in (("value", value), ("key_cache", key_cache), ("value_cache", value_cache),
                    ("k_scale", k_scale), ("v_scale", v_scale)):
        if t.device != key.device:
            raise registry.LaunchError("hk.ops.%s: %s is on %s, key on %s" % (op, name, t.device, key.device))
    registry.same(op, "value", value, key)
    if value_cache.dtype != key_cache.dtype:
        raise registry.LaunchError("hk.ops.%s: key_cache is %s and value_cache %s; they must be one dtype"
                                   % (op, key_cache.dtype, value_cache.dtype))
    tokens = slot_mapping.numel()
    slots = indices.view(op, "slot_mapping", slot_mapping)
    for name, t in (("key", key), ("value", value)):
        if t.shape[0] != tokens:
            raise registry.LaunchError("hk.ops.%s: %s has %d tokens, slot_mapping %d" % (op, name, t.shape[0], tokens))
    raw = facts.target(registry.launch_arch()).fp8_format == "fnuz"
    as_stored = torch.int8 if raw else torch.float8_e4m3fn
    both = paged.interleaved(key_cache, value_cache)
    if both is not None:
        blocks, _, bs, row = both.shape
        if both.stride(0) != bs * row:
            raise registry.LaunchError("hk.ops.%s: the blocks of the KV cache (strides %s) are not one run of "
                                       "rows, so it cannot be written in place" % (op, tuple(key_cache.stride())),
                                       hint="lay the cache out with each layer's blocks contiguous")
        kv_heads, d = key_cache.shape[2:]
        if d % indices.TILE:
            raise registry.LaunchError("hk.ops.%s: head size %d of an fp8 cache holding K and V together is not a "
                                       "multiple of 16" % (op, d), hint="pad the head size to a multiple of 16")
        if tokens:
            rows = torch.cat((key.reshape(tokens, kv_heads, d), value.reshape(tokens, kv_heads, d)), dim=-1)
            width = _width(raw) if d % DIM_TILE == 0 else indices.TILE  # a tile in one head's K or V
            kv_write_fp8_kernel(dtype, raw, width)(rows.view(tokens, row), slots,
                                                   both.view(as_stored).view(blocks * bs, row),
                                                   torch.cat((k_scale, v_scale)), d)
        return
    for name, rows, cache_name, cache, scale in (("key", key, "key_cache", key_cache, k_scale),
                                                 ("value", value, "value_cache", value_cache, v_scale)):
        width = rows[0].numel() if tokens else rows.shape[1:].numel()
        flat_cache = _cache_rows(op, cache_name, cache, width)
        if tokens:
            flat_rows = registry.rows(op, name, rows.reshape(tokens, width), width)
            kv_write_fp8_kernel(dtype, raw, _width(raw))(flat_rows, slots, flat_cache.view(as_stored), scale, 2 * width)


OPS = {
    "embedding": registry.define(
        "embedding", "(Tensor weight, Tensor indices) -> Tensor", _embedding,
        lambda weight, ids: torch.empty(tuple(ids.shape) + (weight.shape[-1],), dtype=weight.dtype,
                                        device=weight.device)),
    "embedding_out": registry.define(
        "embedding_out", "(Tensor(a!) out, Tensor weight, Tensor indices) -> ()", _embedding_out,
        lambda out, weight, ids: None, mutates=("out",)),
    "reshape_and_cache_flash": registry.define(
        "reshape_and_cache_flash",
        "(Tensor key, Tensor value, Tensor(a!) key_cache, Tensor(b!) value_cache, Tensor slot_mapping, "
        "str kv_cache_dtype=\"auto\", Tensor? k_scale=None, Tensor? v_scale=None) -> ()",
        launch_kv_write, lambda key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="auto", k_scale=None,
        v_scale=None: None,
        mutates=("key_cache", "value_cache")),
}
