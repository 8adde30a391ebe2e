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
        s // block_size. The cache's dtype is the keys' (no fp8 cache here). The two caches
        may be the halves of one [blocks, block_size, kv_heads, 2 * head_size] cache (each
        head's K, then its V: vLLM 0.33's layout), written with one scatter.
"""

import functools

import torch

import hk
from hk.ops import indices, paged, registry

DIM_TILE = 64


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


def launch_kv_write(key, value, key_cache, value_cache, slot_mapping):
    op = "reshape_and_cache_flash"
    dtype = registry.dtype_of(op, key)
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
        "(Tensor key, Tensor value, Tensor(a!) key_cache, Tensor(b!) value_cache, Tensor slot_mapping) -> ()",
        launch_kv_write, lambda key, value, key_cache, value_cache, slot_mapping: None,
        mutates=("key_cache", "value_cache")),
}
