"""Dropout as in Triton's tutorial: keep x / (1 - p) where hk.rand(seed, offset) > p, else 0.
hk.rand is Philox 4x32-10 as Triton draws it, so for the same seed and offsets the same
elements are kept as with tl.rand (tests/hk/rand_triton_test.py checks the draws bit for bit).
The kernel is the library's (`hk.ops.training.dropout_kernel`, behind `hk.ops.dropout`): each
element's offset is its index in the row-major tensor, the draws compared with p in a 16 x 64
tile per wave.
"""

import torch

import hk
from common import check, run, timed
from hk.interp import philox
from hk.ops.training import dropout_kernel

dropout = dropout_kernel(hk.fp32)


def reference(x, p, seed):
    u = philox.uniform(seed, torch.arange(x.numel(), dtype=torch.int32)).reshape(x.shape)
    return torch.where(u > p, x / (1 - p), torch.zeros_like(x))


SHAPES = [(64, 256), (37, 100)]  # the second is ragged in rows and columns


def checks(device, repeat):
    for rows, cols in SHAPES:
        x = torch.randn(rows, cols, device=device)
        out = torch.empty_like(x)
        dropout(x, out, 0.5, 42)
        check("dropout %dx%d" % (rows, cols), out, reference(x.cpu(), 0.5, 42).to(device))
        kept = (out != 0).float().mean().item()
        assert 0.4 < kept < 0.6, kept
        if repeat:
            print("  %.1f us" % (timed(lambda: dropout(x, out, 0.5, 42), repeat) * 1e6))


if __name__ == "__main__":
    run([(dropout, {})], checks)
