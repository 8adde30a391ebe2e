"""Dropout as in Triton's tutorial: keep x / (1 - p) where hk.rand(seed, offset) > p, else 0.
hk.rand is Philox 4x32-10 as Triton draws it, so for the same seed and offsets the same
elements are kept as with tl.rand (tests/hk/rand_triton_test.py checks the draws bit for bit).
"""

import torch

import hk
from common import check, run, timed
from hk.interp import philox

T = hk.RT(hk.fp32, 16, 64)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16)))
def dropout(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], p: float, seed: int):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    # Each element's offset is its index in the row-major tensor, as in the tutorial.
    offsets = (hk.iota(T, "row") + r * 16) * x.cols + hk.iota(T, "col") + c * 64
    keep = hk.rand(seed, offsets) > p
    o[0, 0, r, c] = hk.where(keep, x[0, 0, r, c].load(T) / (1.0 - p), 0.0)


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
