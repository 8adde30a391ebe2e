"""The Triton kernels of the emulator's corpus: the programs Triton's tutorials teach (vector add,
fused softmax, a tiled matmul, LayerNorm forward and backward, dropout, math), written
here in that style. Each SPECS entry is one specialization that the build compiles ahead of time
for every target; corpus_test.py runs them on the emulator against numpy.
"""

import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    y = tl.load(y_ptr + offsets, mask=inside)
    tl.store(out_ptr + offsets, x + y, mask=inside)


@triton.jit
def softmax(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    # Programs stride over the rows; each row is one block, its max subtracted for stability.
    cols = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
        x = x.to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr, LEAKY: tl.constexpr):
    # Tiles are visited GROUP rows of tiles at a time so that neighbouring programs share A and B.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    rows_here = min(tiles_m - first_m, GROUP)
    tile_m = first_m + (pid % per_group) % rows_here
    tile_n = (pid % per_group) // rows_here
    # Wrapped rows and columns stay in bounds; the hints let Triton vectorise the loads anyway.
    rm = tl.max_contiguous(tl.multiple_of((tile_m * BM + tl.arange(0, BM)) % M, BM), BM)
    rn = tl.max_contiguous(tl.multiple_of((tile_n * BN + tl.arange(0, BN)) % N, BN), BN)
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_tile, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_tile, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK * stride_ak
        b_tile += BK * stride_bk
    if LEAKY:
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    cm = tile_m * BM + tl.arange(0, BM)
    cn = tile_n * BN + tl.arange(0, BN)
    c = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def layernorm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, N, eps, BLOCK: tl.constexpr):
    # One program per row; the row is read in BLOCK-wide chunks three times (mean, variance, out).
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        sq += d * d
    rstd = 1 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < N
        x = tl.load(x_ptr + cols, mask=inside, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=inside)
        b = tl.load(b_ptr + cols, mask=inside)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + cols, y.to(y_ptr.dtype.element_ty), mask=inside)


@triton.jit
def layernorm_bwd_dx(dx_ptr, dy_ptr, dw_part, db_part, x_ptr, w_ptr, mean_ptr, rstd_ptr, locks, stride, N,
                     GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    # dx for one row, and this row's dw/db added into one of GROUPS partial rows under a spin lock
    # (locks[g] the lock, locks[GROUPS + g] whether the partial row holds data yet).
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=inside, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride + cols, mask=inside, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=inside).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(inside, (x - mean) * rstd, 0.0)
    wdy = tl.where(inside, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=inside)
    g = row % GROUPS
    lock = locks + g
    filled = locks + GROUPS + g
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    pdw = (dy * xhat).to(w.dtype)
    pdb = dy.to(w.dtype)
    if tl.load(filled) == 0:
        tl.atomic_xchg(filled, 1)
    else:
        pdw += tl.load(dw_part + g * N + cols, mask=inside)
        pdb += tl.load(db_part + g * N + cols, mask=inside)
    tl.store(dw_part + g * N + cols, pdw, mask=inside)
    tl.store(db_part + g * N + cols, pdb, mask=inside)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def layernorm_bwd_dwdb(dw_part, db_part, dw_ptr, db_ptr, groups, N, BG: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    dw = tl.zeros((BG, BN), dtype=tl.float32)
    db = tl.zeros((BG, BN), dtype=tl.float32)
    for first in range(0, groups, BG):
        rows = first + tl.arange(0, BG)
        inside = (rows[:, None] < groups) & (cols[None, :] < N)
        at = rows[:, None] * N + cols[None, :]
        dw += tl.load(dw_part + at, mask=inside, other=0.0)
        db += tl.load(db_part + at, mask=inside, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=cols < N)
    tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=cols < N)


@triton.jit
def dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    # Each element keeps with probability 1 - p, scaled up; the draw is Philox of (seed, index).
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    keep = tl.rand(seed, offsets) > p
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=inside)


@triton.jit
def math_fns(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # out holds six rows of n: exp, log, sin, tanh, erf and pow of the inputs.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside, other=1.0)
    y = tl.load(y_ptr + offsets, mask=inside, other=1.0)
    tl.store(out_ptr + offsets, tl.exp(x), mask=inside)
    tl.store(out_ptr + n + offsets, tl.log(tl.abs(x) + 1.0), mask=inside)
    tl.store(out_ptr + 2 * n + offsets, tl.sin(x), mask=inside)
    tl.store(out_ptr + 3 * n + offsets, libdevice.tanh(x), mask=inside)
    tl.store(out_ptr + 4 * n + offsets, libdevice.erf(x), mask=inside)
    tl.store(out_ptr + 5 * n + offsets, libdevice.pow(tl.abs(x) + 0.5, y), mask=inside)


@triton.jit
def math_more(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # out holds twelve rows of n: more of libdevice and of Triton's own math, one row each.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside, other=1.0)
    a = tl.abs(x)
    rows = (tl.cos(x), tl.sqrt(a), tl.rsqrt(a + 0.25), libdevice.atan(x), libdevice.sinh(x), libdevice.log1p(a),
            libdevice.expm1(x), libdevice.asinh(x), x / (a + 1.0), libdevice.fmod(x, 1.5),
            tl.exp2(x) + tl.log2(a + 1.0), tl.sin(x * 1000.0))
    for i in tl.static_range(12):
        tl.store(out_ptr + i * n + offsets, rows[i], mask=inside)


# The unit strides are constants, as the JIT makes an argument equal to 1.
_MM = {"a_ptr": "*{t}", "b_ptr": "*{t}", "c_ptr": "*{o}", "M": "i32", "N": "i32", "K": "i32",
       "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
       "stride_cm": "i32", "stride_cn": "constexpr"}
_UNIT = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}


_MM_ALIGNED = ("K", "stride_am", "stride_bk", "stride_cm")


def _mm(t, o):
    return {k: v.format(t=t, o=o) for k, v in _MM.items()}


def _ln_fwd(t):
    return {"x_ptr": "*" + t, "y_ptr": "*" + t, "w_ptr": "*" + t, "b_ptr": "*" + t, "mean_ptr": "*fp32",
            "rstd_ptr": "*fp32", "stride": "i32", "N": "i32", "eps": "fp32"}


class Spec:
    """One specialization: the kernel, its argument types, its constants and Triton's options.
    Pointers are declared 16-byte aligned and the integers in `aligned` divisible by 16, as the JIT
    does when a launch's values are: that is what makes Triton vectorise."""

    def __init__(self, fn, signature, constexprs, warps=4, stages=None, aligned=()):
        self.fn, self.signature, self.constexprs, self.aligned = fn, signature, constexprs, set(aligned)
        self.options = {"num_warps": warps}
        if stages is not None:
            self.options["num_stages"] = stages


_SOFTMAX = {"out_ptr": "*{t}", "in_ptr": "*{t}", "in_stride": "i32", "out_stride": "i32", "n_rows": "i32",
            "n_cols": "i32"}


def _softmax(t):
    return {k: v.format(t=t) for k, v in _SOFTMAX.items()}


def _mm_spec(t, o, bm, bn, bk, group=1, leaky=False, warps=4, stages=None, aligned=()):
    return Spec(matmul, _mm(t, o), dict(_UNIT, BM=bm, BN=bn, BK=bk, GROUP=group, LEAKY=leaky), warps, stages,
                aligned)


SPECS = {
    "vector_add": Spec(vector_add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                       {"BLOCK": 256}, aligned=("n",)),
    "softmax_f32": Spec(softmax, _softmax("fp32"), {"BLOCK": 128}),
    "softmax_f16_w8": Spec(softmax, _softmax("fp16"), {"BLOCK": 512}, warps=8),
    "matmul_f16_32x32x32_w4": _mm_spec("fp16", "fp16", 32, 32, 32, group=2),
    "matmul_f16_64x64x32_w4": _mm_spec("fp16", "fp32", 64, 64, 32, group=2, leaky=True, aligned=_MM_ALIGNED),
    "matmul_f16_64x32x64_w8": _mm_spec("fp16", "fp16", 64, 32, 64, warps=8),
    # Three stages: a global->LDS copy stays in flight across the barrier on purpose (gfx950).
    "matmul_f16_32x64x32_w4_s3": _mm_spec("fp16", "fp32", 32, 64, 32, stages=3, aligned=_MM_ALIGNED),
    "matmul_bf16_32x32x32_w4": _mm_spec("bf16", "fp32", 32, 32, 32, group=2),
    "matmul_bf16_64x64x16_w8": _mm_spec("bf16", "bf16", 64, 64, 16, warps=8, aligned=_MM_ALIGNED),
    "layernorm_fwd_f16": Spec(layernorm_fwd, _ln_fwd("fp16"), {"BLOCK": 256}, aligned=("stride",)),
    "layernorm_fwd_f32": Spec(layernorm_fwd, _ln_fwd("fp32"), {"BLOCK": 128}, warps=2),
    "layernorm_bwd_dx_f16": Spec(layernorm_bwd_dx,
                                 {"dx_ptr": "*fp16", "dy_ptr": "*fp16", "dw_part": "*fp32", "db_part": "*fp32",
                                  "x_ptr": "*fp16", "w_ptr": "*fp32", "mean_ptr": "*fp32", "rstd_ptr": "*fp32",
                                  "locks": "*i32", "stride": "i32", "N": "i32"}, {"GROUPS": 4, "BLOCK": 256}),
    "layernorm_bwd_dwdb": Spec(layernorm_bwd_dwdb,
                               {"dw_part": "*fp32", "db_part": "*fp32", "dw_ptr": "*fp32", "db_ptr": "*fp32",
                                "groups": "i32", "N": "i32"}, {"BG": 16, "BN": 64}),
    "dropout": Spec(dropout, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "p": "fp32", "seed": "i32"},
                    {"BLOCK": 256}),
    "math_fns": Spec(math_fns, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                     {"BLOCK": 128}, warps=2),
    "math_more": Spec(math_more, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 128}, warps=2),
}

ARCHS = {"gfx1100": 32, "gfx1201": 32, "gfx942": 64, "gfx950": 64}
