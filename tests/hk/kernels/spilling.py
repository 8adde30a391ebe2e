"""A kernel built to spill. Its register tiles fit the budget the passes check, but it asks
the compiler to fit everything in max_vgprs=96 (gfx1100: 16 waves per SIMD) while the code
needs about 140 VGPRs, so the compiler spills. The resource gate must refuse it, in build()
and in the Bazel gate test."""

import hk

BLOCK = 64


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)), warps=4, max_vgprs=96)
def spilling(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], eps: float):
    row = hk.arch.block_idx.y
    warp = hk.arch.warp_id()
    tile = hk.RT(hk.bf16, 16, BLOCK)
    rows_vec = hk.RV(hk.fp32, 16, "col")
    tiles = hk.cdiv(x.cols, BLOCK)
    squares = hk.zeros(rows_vec)
    for j in hk.range(warp, tiles, 4):
        t = x[0, 0, row, j].load(tile).to(hk.fp32)
        squares = squares + hk.row_sum(t * t)
    partial = hk.lds.alloc(hk.SV(hk.fp32, 16, 4))
    partial[warp].store(squares)
    hk.arch.barrier()
    total = partial[0].load(rows_vec) + partial[1].load(rows_vec) + partial[2].load(rows_vec) \
        + partial[3].load(rows_vec)
    scale = hk.math.rsqrt(total / x.cols.to(hk.fp32) + eps)
    for j in hk.range(warp, tiles, 4):
        t = x[0, 0, row, j].load(tile).to(hk.fp32)
        weight = w[0, 0, 0, j].load(hk.RV(hk.bf16, BLOCK, "row")).to(hk.fp32)
        o[0, 0, row, j] = hk.mul_col(hk.mul_row(t, scale), weight).to(hk.bf16)
