"""A KV cache write: each new token's key row goes to its slot in the cache; padding tokens
(slot -1) are dropped, and the cache rows nobody writes keep their contents.

As in the serving engines' slot mappings, `slots` is padded with -1 to a multiple of 16: a
vector read past a tensor's end gives 0, which is a real slot.
"""

import torch

import hk
from common import check, run, timed

DIM_TILE = 64


@hk.kernel(grid=lambda p: (hk.cdiv(p.keys.cols, DIM_TILE), hk.cdiv(p.keys.rows, 16)))
def kv_write(keys: hk.Tensor[hk.bf16], slots: hk.Tensor[hk.i32], cache: hk.Tensor[hk.bf16]):
    d, t = hk.arch.block_idx.x, hk.arch.block_idx.y
    tile = keys[0, 0, t, d].load(hk.RT(hk.bf16, 16, DIM_TILE))
    where = slots[0, 0, 0, t].load(hk.RV(hk.i32, 16, "col"))
    hk.scatter(cache, hk.tile_coord(0, 0, 0, d), where, tile)


SHAPES = [(64, 128, 512), (21, 72, 100)]  # (tokens, dim, cache slots); the second is ragged


def checks(device, repeat):
    for tokens, dim, cache_slots in SHAPES:
        keys = torch.randn(tokens, dim, device=device).to(torch.bfloat16)
        slots = torch.full((-(-tokens // 16) * 16,), -1, dtype=torch.int32, device=device)
        slots[:tokens] = torch.randperm(cache_slots, device=device)[:tokens].to(torch.int32)
        slots[1:tokens:5] = -1  # padding tokens
        cache = torch.randn(cache_slots, dim, device=device).to(torch.bfloat16)
        expected = cache.clone()
        for i, s in enumerate(slots[:tokens].tolist()):
            if s >= 0:
                expected[s] = keys[i]
        kv_write(keys, slots, cache)
        check("kv scatter %d tokens, %d slots" % (tokens, cache_slots), cache, expected, rtol=0, atol=0)
        if repeat:
            print("  %.1f us" % (timed(lambda: kv_write(keys, slots, cache), repeat) * 1e6))


if __name__ == "__main__":
    run([(kv_write, {})], checks)
