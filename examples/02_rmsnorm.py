"""RMSNorm: a runtime loop over column tiles, a row reduction, a cross-warp combine through
LDS, and a broadcast of the per-row scale and of the weight.

    y = x / sqrt(mean(x^2) + eps) * w        (per row)

Each workgroup owns 16 rows; its WARPS waves split the column tiles between them, add up
their partial sums of squares in LDS, and then normalise their own tiles.
"""

import torch

import hk
from common import check, run, timed

BLOCK = 64


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)), warps=4)
def rmsnorm(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], eps: float,
            *, WARPS=4):
    row = hk.arch.block_idx.y
    warp = hk.arch.warp_id()
    tile = hk.RT(hk.bf16, 16, BLOCK)
    rows_vec = hk.RV(hk.fp32, 16, "col")
    tiles = hk.cdiv(x.cols, BLOCK)

    squares = hk.zeros(rows_vec)
    for j in hk.range(warp, tiles, WARPS):
        t = x[0, 0, row, j].load(tile).to(hk.fp32)
        squares = squares + hk.row_sum(t * t)

    partial = hk.lds.alloc(hk.SV(hk.fp32, 16, WARPS))
    partial[warp].store(squares)
    hk.arch.barrier()
    total = partial[0].load(rows_vec)
    for k in range(1, WARPS):
        total = total + partial[k].load(rows_vec)
    scale = hk.math.rsqrt(total / x.cols.to(hk.fp32) + eps)

    for j in hk.range(warp, tiles, WARPS):
        t = x[0, 0, row, j].load(tile).to(hk.fp32)
        weight = w[0, 0, 0, j].load(hk.RV(hk.bf16, BLOCK, "row")).to(hk.fp32)
        o[0, 0, row, j] = hk.mul_col(hk.mul_row(t, scale), weight).to(hk.bf16)


def reference(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


SHAPES = [(64, 1024), (37, 200)]  # the second is ragged in rows and columns


def checks(device, repeat):
    eps = 1e-6
    for rows, cols in SHAPES:
        x = torch.randn(rows, cols, dtype=torch.bfloat16, device=device)
        w = torch.randn(cols, dtype=torch.bfloat16, device=device)
        out = torch.empty_like(x)
        rmsnorm(x, w, out, eps)
        check("rmsnorm %dx%d" % (rows, cols), out, reference(x, w, eps))
        if repeat:
            print("  %.1f us" % (timed(lambda: rmsnorm(x, w, out, eps), repeat) * 1e6))


if __name__ == "__main__":
    run([(rmsnorm, {})], checks)
