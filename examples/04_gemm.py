"""C = A·Bᵀ (and A·B) on the matrix cores (WMMA on RDNA, MFMA on CDNA), in two forms.

A is M x K and B is N x K (or K x N), both row-major 16-bit; C is M x N, accumulated in fp32 and
written in C's dtype. The fast form is the library's GEMM, `hk.ops.gemm.gemm_kernel` (its
schedule is described there): 128 x 128 tiles of C per workgroup of four waves (A·B: 256 x 128
per eight), K through two LDS buffers with split copies, two steps per loop iteration (A·B on
gfx950: four, K 64 at a time, its schedule for that target), the loads picked by the tensors'
divisors. Here it is instantiated and checked: A·Bᵀ with fp32 out, fp16 in and out with a
row-strided A, and A·B in its own tiles and in smaller ones.

The short form is the same product in a dozen lines: one LDS buffer, the copies and the MMA one
after the other.
"""

import torch

import hk
from common import check, run, timed
from hk.ops.gemm import gemm_kernel


gemm = gemm_kernel()
gemm_fp16 = gemm_kernel(hk.fp16, hk.fp16)
gemm_ab = gemm_kernel(hk.bf16, hk.bf16, "AB")

K_STEP = 32


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, 64), hk.cdiv(p.c.rows, 64)), warps=4)
def gemm_simple(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
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


# (M, N, K): whole tiles; ragged in all three; K not a multiple of BK; K shorter than BK.
SHAPES = [(128, 128, 64), (100, 72, 40), (200, 136, 96), (64, 32, 16)]


def checks(device, repeat):
    for m, n, k in SHAPES:
        a = torch.randn(m, k, dtype=torch.bfloat16, device=device)
        b = torch.randn(n, k, dtype=torch.bfloat16, device=device)
        ref = a.float() @ b.float().t()
        for kernel in (gemm, gemm_simple):
            c = torch.empty(m, n, device=device)
            kernel(a, b, c)
            # fp32 accumulation of bf16 products: only the order of the sums differs from torch.
            check("%s %dx%dx%d" % (kernel.name, m, n, k), c, ref, rtol=1e-4, atol=1e-3)
            if repeat:
                seconds = timed(lambda: kernel(a, b, c), repeat)
                print("  %.1f us, %.1f TFLOP/s" % (seconds * 1e6, 2 * m * n * k / seconds / 1e12))
    # fp16 in, fp16 out, and a row-strided A (a view of a wider buffer, as vLLM pads weights).
    m, n, k = 136, 128, 64
    a = torch.randn(m, k + 64, dtype=torch.float16, device=device)[:, :k]
    b = torch.randn(n, k, dtype=torch.float16, device=device)
    c = torch.empty(m, n, dtype=torch.float16, device=device)
    gemm_fp16(a, b, c)
    check("%s %dx%dx%d, strided A" % (gemm_fp16.name, m, n, k), c, (a.float() @ b.float().t()).half(),
          rtol=2e-3, atol=2e-3)
    # A·B with B stored K x N, ragged in M, N and (for gfx950's K 64) K, and bf16 out.
    m, n, k = 300, 200, 96
    a = torch.randn(m, k, dtype=torch.bfloat16, device=device)
    b = torch.randn(k, n, dtype=torch.bfloat16, device=device)
    c = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    for constants in ({}, {"BM": 128, "BN": 64}):
        gemm_ab(a, b, c, **constants)
        check("%s %dx%dx%d %s" % (gemm_ab.name, m, n, k, constants or ""), c, (a.float() @ b.float()).to(torch.bfloat16))

if __name__ == "__main__":
    run([(gemm, {}), (gemm_fp16, {}), (gemm_ab, {}), (gemm_simple, {})], checks)
