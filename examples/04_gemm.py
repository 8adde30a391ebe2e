"""C = A·Bᵀ with LDS staging and the matrix cores (WMMA on RDNA, MFMA on CDNA).

A is M x K, B is N x K (both bf16, row-major), C is M x N in fp32. A workgroup of 4 waves owns
a 64 x 64 tile of C; each wave accumulates 16 x 64 of it. Per step of K the workgroup copies
A's four 16 x 32 tiles and B's 64 x 32 tile into LDS together, waits at a barrier, and each
wave reads its operands back into registers in row layout (the 128-bit LDS reads) and runs
mma_ABt. The wait between the LDS reads and the MMA is derived by the waits pass: nothing
in the kernel names it.
"""

import torch

import hk
from common import check, run, timed

K_STEP = 32


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, 64), hk.cdiv(p.c.rows, 64)), warps=4)
def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    bx = hk.arch.block_idx.x
    by = hk.arch.block_idx.y
    warp = hk.arch.warp_id()
    a_tiles = hk.lds.alloc(hk.ST(hk.bf16, 16, K_STEP, 4))   # one 16-row strip of A per wave
    b_tile = hk.lds.alloc(hk.ST(hk.bf16, 64, K_STEP))

    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    for k in hk.range(hk.cdiv(a.cols, K_STEP)):
        for w in range(4):
            hk.lds.copy_to(a_tiles, w, a, hk.tile_coord(0, 0, by * 4 + w, k))
        hk.lds.copy_to(b_tile, 0, b, hk.tile_coord(0, 0, bx, k))
        hk.arch.barrier()
        ta = a_tiles[warp].load(hk.RT(hk.bf16, 16, K_STEP))
        tb = b_tile[0].load(hk.RT(hk.bf16, 64, K_STEP))
        acc = hk.mma_ABt(ta, tb, acc)
        hk.arch.barrier()   # the next step's copies overwrite what this one read
    c[0, 0, by * 4 + warp, bx] = acc


SHAPES = [(128, 128, 64), (100, 72, 40)]  # (M, N, K); the second is ragged in all three


def checks(device, repeat):
    for m, n, k in SHAPES:
        a = torch.randn(m, k, dtype=torch.bfloat16, device=device)
        b = torch.randn(n, k, dtype=torch.bfloat16, device=device)
        c = torch.empty(m, n, device=device)
        gemm(a, b, c)
        # fp32 accumulation of bf16 products: only the order of the sums differs from torch.
        check("gemm %dx%dx%d" % (m, n, k), c, a.float() @ b.float().t(), rtol=1e-4, atol=1e-3)
        if repeat:
            seconds = timed(lambda: gemm(a, b, c), repeat)
            print("  %.1f us, %.1f TFLOP/s" % (seconds * 1e6, 2 * m * n * k / seconds / 1e12))


if __name__ == "__main__":
    run([(gemm, {})], checks)
