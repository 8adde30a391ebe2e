"""An embedding lookup: rows of a table gathered by index, 16 tokens per wave. A negative index
(padding) reads zeros. The kernel is the library's (`hk.ops.indexed.embedding_kernel`, behind
`hk.ops.embedding`): an hk.gather of 16 rows by the ids, one 64-column tile per wave. The ids
are int64 here, as the engines pass them, read with no copy (hk.ops.indices).
"""

import torch

import hk
from common import check, run, timed
from hk.ops import indices
from hk.ops.indexed import embedding_kernel

embedding = embedding_kernel(hk.bf16)


SHAPES = [(1000, 256, 64), (50, 100, 37)]  # (vocabulary, dim, tokens); the second is ragged


def checks(device, repeat):
    for vocab, dim, tokens in SHAPES:
        table = torch.randn(vocab, dim, device=device).to(torch.bfloat16)
        ids = torch.randint(0, vocab, (tokens,), device=device)
        ids[3] = -1  # a padding token
        out = torch.empty(tokens, dim, dtype=torch.bfloat16, device=device)
        words = indices.view("embedding", "ids", ids)
        embedding(table, words, out)
        expected = table[ids.clamp(min=0).long()]
        expected[3] = 0
        check("embedding %dx%d, %d tokens" % (vocab, dim, tokens), out, expected, rtol=0, atol=0)
        if repeat:
            print("  %.1f us" % (timed(lambda: embedding(table, words, out), repeat) * 1e6))


if __name__ == "__main__":
    run([(embedding, {})], checks)
