"""A KV cache write: each new token's key row goes to its slot in the cache; padding tokens
(slot -1) are dropped, and the cache rows nobody writes keep their contents. The kernel is the
library's (`hk.ops.indexed.kv_write_kernel`, behind `hk.ops.reshape_and_cache_flash`): an
hk.scatter of a 16 x 64 tile to the rows its slots name. The slots are read as
hk.ops.indices reads them: past the vector's end they are negative, so the last, partial tile of
16 tokens writes nothing more.
"""

import torch

import hk
from common import check, run, timed
from hk.ops import indices
from hk.ops.indexed import kv_write_kernel

kv_write = kv_write_kernel(hk.bf16)


SHAPES = [(64, 128, 512), (21, 72, 100)]  # (tokens, dim, cache slots); the second is ragged


def checks(device, repeat):
    for tokens, dim, cache_slots in SHAPES:
        keys = torch.randn(tokens, dim, device=device).to(torch.bfloat16)
        slots = torch.randperm(cache_slots, device=device)[:tokens].to(torch.int32)
        slots[1::5] = -1  # padding tokens
        cache = torch.randn(cache_slots, dim, device=device).to(torch.bfloat16)
        expected = cache.clone()
        for i, s in enumerate(slots.tolist()):
            if s >= 0:
                expected[s] = keys[i]
        words = indices.view("kv_write", "slots", slots)
        kv_write(keys, words, cache)
        check("kv scatter %d tokens, %d slots" % (tokens, cache_slots), cache, expected, rtol=0, atol=0)
        if repeat:
            print("  %.1f us" % (timed(lambda: kv_write(keys, words, cache), repeat) * 1e6))


if __name__ == "__main__":
    run([(kv_write, {})], checks)
