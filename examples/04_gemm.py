"""C = A·Bᵀ (and A·B) on the matrix cores (WMMA on RDNA, MFMA on CDNA), in two forms.

A is M x K and B is N x K (or K x N), both row-major 16-bit; C is M x N, accumulated in fp32 and
written in C's dtype. The fast form is the schedule that reaches the hardware's instruction budget, with
its knobs as constants:

  - a workgroup of 4 waves owns a BM x BN tile of C, each wave a (BM/2) x (BN/2) quarter;
  - K advances BK at a time through two LDS buffers: while the waves multiply the tile in one
    buffer, the next tile's global loads are in flight (hk.lds.issue), and they are written
    into the other buffer (hk.lds.commit) before the barrier that ends the step;
  - each step reads its operands from LDS KSTEP columns at a time, in row layout (the 128-bit
    LDS reads), and runs mma_ABt;
  - hk.range(..., unroll=2) holds two steps per loop iteration, so the buffer index k % 2 is a
    constant in each and every LDS address is a register plus an immediate.

Every wait is derived. The tensors' divisors (what a call knows of their alignment) pick the
loads: 16-byte rows move in one 128-bit load per chunk, and when K is a multiple of BK no column
is ever tested.

The short form is the same product in a dozen lines: one LDS buffer, the copies and the MMA one
after the other.
"""

import functools

import torch

import hk
from common import check, run, timed


@functools.lru_cache(maxsize=None)
def gemm_kernel(dtype=hk.bf16, out=hk.fp32, form="ABt"):
    """The fast kernel for `dtype` operands (bf16 or fp16) and an `out` C: C = A·Bᵀ with B N x K
    (form "ABt"), or C = A·B with B K x N (form "AB"). A·B needs B's columns along each lane:
    where the target reads LDS transposed (gfx950) B's tiles are stored as they are and read in
    col layout; elsewhere they are written into LDS transposed, one 16-bit write per element,
    and the MMAs are those of A·Bᵀ. Its wave tiles are half as wide, for the registers those
    writes take."""
    if form not in ("ABt", "AB"):
        raise ValueError("form is 'ABt' or 'AB', not %r" % (form,))
    name = "gemm" if (dtype, out, form) == (hk.bf16, hk.fp32, "ABt") else "gemm_%s_%s_%s" % (
        form, dtype.name, out.name)
    b_major = form == "AB"

    def b_tile(k, bx):
        return hk.tile_coord(0, 0, k, bx) if b_major else hk.tile_coord(0, 0, bx, k)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM)), warps=4, name=name)
    def gemm(a: hk.Tensor[dtype], b: hk.Tensor[dtype], c: hk.Tensor[out], *,
             BM=128, BN=64 if b_major else 128, BK=32, KSTEP=16):
        bx = hk.arch.block_idx.x
        by = hk.arch.block_idx.y
        w = hk.arch.warp_id()
        wm = w // 2
        wn = w % 2
        # B as stored (K x N), read in col layout by the transposing LDS read.
        b_cols = b_major and hk.arch.target().lds_transpose_read is not None
        a_lds = hk.lds.alloc(hk.ST(dtype, BM, BK, 2))
        b_lds = hk.lds.alloc(hk.ST(dtype, BK, BN, 2) if b_cols else hk.ST(dtype, BN, BK, 2))
        transpose = b_major and not b_cols
        acc = hk.zeros(hk.RT(hk.fp32, BM // 2, BN // 2))
        steps = hk.cdiv(a.cols, BK)
        hk.lds.commit(a_lds, 0, hk.lds.issue(a_lds, a, hk.tile_coord(0, 0, by, 0)))
        hk.lds.commit(b_lds, 0, hk.lds.issue(b_lds, b, b_tile(0, bx), transpose=transpose))
        hk.arch.barrier()
        for k in hk.range(steps, unroll=2):
            buf = k % 2
            # The next step's tiles (zeros past the last), in flight while this step multiplies.
            a_next = hk.lds.issue(a_lds, a, hk.tile_coord(0, 0, by, k + 1))
            b_next = hk.lds.issue(b_lds, b, b_tile(k + 1, bx), transpose=transpose)
            for kk in range(BK // KSTEP):
                ta = a_lds[buf].subtile(BM // 2, KSTEP, wm, kk).load(hk.RT(dtype, BM // 2, KSTEP))
                if b_cols:
                    tb = b_lds[buf].subtile(KSTEP, BN // 2, kk, wn).load(hk.RT(dtype, KSTEP, BN // 2, "col"))
                    acc = hk.mma_AB(ta, tb, acc)
                else:
                    tb = b_lds[buf].subtile(BN // 2, KSTEP, wn, kk).load(hk.RT(dtype, BN // 2, KSTEP))
                    acc = hk.mma_ABt(ta, tb, acc)
            hk.lds.commit(a_lds, 1 - buf, a_next)
            hk.lds.commit(b_lds, 1 - buf, b_next)
            hk.arch.barrier()
        c[0, 0, by * 2 + wm, bx * 2 + wn] = acc if out == hk.fp32 else acc.to(out)

    return gemm


gemm = gemm_kernel()
gemm_fp16 = gemm_kernel(hk.fp16, hk.fp16)
gemm_ab = gemm_kernel(hk.bf16, hk.bf16, "AB")

# A·B's schedule on CDNA (kernels/BUILD.bazel builds gemm_ab so for gfx942 and gfx950): 128 x 128
# tiles, K 64 at a time.
AB_WIDE = {"BN": 128, "BK": 64}

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
    # A·B with B stored K x N, ragged in N, and bf16 out.
    m, n, k = 64, 200, 96
    a = torch.randn(m, k, dtype=torch.bfloat16, device=device)
    b = torch.randn(k, n, dtype=torch.bfloat16, device=device)
    c = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    for constants in ({}, AB_WIDE):
        try:
            gemm_ab(a, b, c, **constants)
        except hk.errors.ResourceError as e:
            # The wide tiles' registers fit CDNA only (RDNA's transposed LDS writes take more).
            assert constants and "spills" in str(e), e
            print("%-40s refused by the resource gate (spills)" % ("%s %s" % (gemm_ab.name, constants)))
            continue
        check("%s %dx%dx%d %s" % (gemm_ab.name, m, n, k, constants or ""), c, (a.float() @ b.float()).to(torch.bfloat16))


if __name__ == "__main__":
    run([(gemm, {}), (gemm_fp16, {}), (gemm_ab, {}), (gemm_simple, {})], checks)
