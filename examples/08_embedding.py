"""An embedding lookup: rows of a table gathered by index, 16 tokens per wave. A negative index
(padding) reads zeros."""

import torch

import hk
from common import check, run, timed

DIM_TILE = 64


@hk.kernel(grid=lambda p: (hk.cdiv(p.table.cols, DIM_TILE), hk.cdiv(p.ids.cols, 16)))
def embedding(table: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.i32], out: hk.Tensor[hk.bf16]):
    d, t = hk.arch.block_idx.x, hk.arch.block_idx.y
    rows = ids[0, 0, 0, t].load(hk.RV(hk.i32, 16, "col"))
    tile = hk.gather(table, hk.tile_coord(0, 0, 0, d), rows, hk.RT(hk.bf16, 16, DIM_TILE))
    out[0, 0, t, d] = tile


SHAPES = [(1000, 256, 64), (50, 100, 37)]  # (vocabulary, dim, tokens); the second is ragged


def checks(device, repeat):
    for vocab, dim, tokens in SHAPES:
        table = torch.randn(vocab, dim, device=device).to(torch.bfloat16)
        ids = torch.randint(0, vocab, (tokens,), dtype=torch.int32, device=device)
        ids[3] = -1  # a padding token
        out = torch.empty(tokens, dim, dtype=torch.bfloat16, device=device)
        embedding(table, ids, out)
        expected = table[ids.clamp(min=0).long()]
        expected[3] = 0
        check("embedding %dx%d, %d tokens" % (vocab, dim, tokens), out, expected, rtol=0, atol=0)
        if repeat:
            print("  %.1f us" % (timed(lambda: embedding(table, ids, out), repeat) * 1e6))


if __name__ == "__main__":
    run([(embedding, {})], checks)
