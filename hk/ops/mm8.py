"""8-bit GEMMs with scales: W8A8 int8 as vLLM's cutlass_scaled_mm and cutlass_scaled_mm_azp
compute it, and fp8 (OCP e4m3 and e5m2) as torch._scaled_mm does, with DeepSeek's 128 x 128
block scales as vLLM's w8a8_block_fp8_matmul takes them, and fp8 weights with 16-bit
activations (W8A16).

    int8_scaled_mm(a, b, scale_a, scale_b, out_dtype, bias=None, azp_adj=None, azp=None)
        a int8 [..., K]; b int8 [K, N] (vLLM passes the weight's transpose: b.t() contiguous,
        read in place; another layout is copied); scale_a fp32 per tensor (one element) or per
        token ([M, 1]); scale_b fp32 per tensor or per channel ([1, N], [N, 1] or [N]); out_dtype
        bf16 or fp16; bias [N] in out_dtype; azp_adj int32 [N] ([1, N]), azp int32 per token
        ([M] or [M, 1]). With p = a @ b exactly in int32:
            out = scale_a * scale_b * (p - azp * azp_adj) + bias
        (azp_adj alone: p - azp_adj, the per-tensor zero point folded in, as vLLM passes it; the
        correction is subtracted in int32, then the epilogue is fp32).
    scaled_mm(a, b, scale_a, scale_b, out_dtype, bias=None)
        a fp8 [..., K] (torch.float8_e4m3fn or float8_e5m2; on gfx942 also float8_e4m3fnuz or
        float8_e5m2fnuz), or bf16 / fp16 with fp8 weights; b fp8 [K, N] (torch._scaled_mm's:
        column-major, read in place); out_dtype bf16, fp16 or fp32, bias [N] in out_dtype; scale_a
        None, per tensor or per token ([M, 1]) and scale_b None, per tensor or per column ([1, N]
        or [N]): out = (a @ b) * scale_a * scale_b + bias, a @ b
        accumulated in fp32. Block scales: scale_a [M, K/128] (per token per 128 columns of K),
        scale_b [K/128, N/128] (b's shape / 128: the [N/128, K/128] weight scales of
        w8a8_block_fp8_matmul transposed, as vLLM passes them to cutlass_scaled_mm), K and N
        multiples of 128: each 128-wide group of K's product is scaled by its two scales in fp32
        and summed. One operand's scales may be block and the other's not (applied after).
    Also int8_scaled_mm_out(out, ...) and scaled_mm_out(out, ...), which write out in place.

The matrix instruction: int8 everywhere (gfx950 in steps of 64); fp8 with fp8 of the same format
where the target's matrix cores read it: OCP on gfx1201 and gfx950, FNUZ (torch.float8_*fnuz, what
vLLM stores on MI300X) on gfx942. Elsewhere (gfx1100, mixed formats, 16-bit activations) the fp8
tiles are converted to the 16-bit type in the kernel (bf16 for two fp8 operands, else the
activations' type: exact, every e4m3 and e5m2 value, OCP or FNUZ, is one of both) and multiplied
as 16-bit. On gfx942 the kernel reads OCP bytes as int8 and decodes them itself (decode_ocp), so
OCP fp8 runs on every target; FNUZ runs on gfx942 only, and OCP with FNUZ in one product nowhere.

Two kernels. mm8_fast_kernel, for rows of 16-byte multiples without zero points: the bf16 GEMM's
LDS-staged schedule (gemm.accumulate), each operand staged as stored and, where it is not the
instruction's own, its register tiles converted to 16-bit after each LDS read (OCP fp8 in a few
bit operations per element; FNUZ operands of a converted product are left to the other kernel);
with 128 x 128 block scales each group of K's product (one step of 128 for the instruction's
own operands, several of 32 for converted ones) scaled and added to the sum. mm8_kernel, for the
rest (zero points, FNUZ operands of converted products, rows in pieces): a workgroup of 4 waves
owns 64 x 64 of out, each wave 32 x 32 (with block scales 32 x 64, each wave 16 x 32: a group's
product is held beside the sum), reading its operands from global memory (past the edges they
read zeros) straight into the matrix fragments: correct, not fast (no LDS staging; see
docs/performance.md).

The fast kernel's schedule (C's tile BM x BN, K's step BK in bytes, steps per loop iteration) is
tuned per target and bucket of M for the products with per-tensor or per-token/channel scales:
INT8_SCALED_MM and SCALED_MM are the Tunables hk-tune searches and hk/tuned/<arch>.json ships.
"""

import functools
import os

import torch

import hk
from hk import tuned
from hk.autotune.space import space
from hk.autotune.tunable import Tunable
from hk.ops import gemm, registry
from hk.target import facts

WM = WN = 32   # a wave's part of out
WAVES = 4      # 2 x 2 waves: a workgroup's 64 x 64 of out
GROUP = 128    # K (and N) of a block scale
# K per matrix step: gfx950's int8 instruction takes 64; 16-bit and fp8 tiles take 32 (fp8 to
# 16-bit conversions at 64 spill on gfx1100).
KSTEP = {8: 64, 16: 32}
FP8 = {torch.float8_e4m3fn: hk.fp8e4m3, torch.float8_e5m2: hk.fp8e5m2}
# The FNUZ formats: gfx942's fp8 matrix instructions read them (and only gfx942's).
FNUZ = {torch.float8_e4m3fnuz: hk.fp8e4m3fnuz, torch.float8_e5m2fnuz: hk.fp8e5m2fnuz}
HALF = {torch.bfloat16: hk.bf16, torch.float16: hk.fp16}
# scaled_mm's outputs: torch._scaled_mm's float32 besides the 16-bit types (int8_scaled_mm keeps
# vLLM's cutlass_scaled_mm's bf16 / fp16).
FLOAT_OUT = {**HALF, torch.float32: hk.fp32}
# An OCP fp8 format's (exponent bits, mantissa bits, bias).
OCP = {"fp8e4m3": (4, 3, 7), "fp8e5m2": (5, 2, 15)}
# Scale modes (a kernel argument): none (1), one per tensor, one per row of a (column of b), per
# 128-group (block kernels only).
NONE, TENSOR, LINE, BLOCK = 0, 1, 2, 3
# mm8_fast_kernel's schedules for converted operands. Converting B alone (W8A16), each wave owns
# a tall part of out (BM/2 x 32), so that each converted element of B serves more matrix
# instructions (at 64 x 64 gfx1100 ran 23.1 instructions per WMMA, at 96 x 32 17.7); RDNA runs
# K 16 at a time through LDS (the staging of more spills), gfx1100 192 rows (256 spill); gfx942
# K 16 too, so that three workgroups share a CU's 64 KiB of LDS (predicted 23% of bf16's peak
# at 4096^3, 17% at K 32, one workgroup).
CONVERT_B_SCHEDULE = {"gfx1100": {"BM": 192, "BN": 64, "BK": 16}, "gfx1201": {"BM": 256, "BN": 64, "BK": 16},
                      "gfx942": {"BM": 256, "BN": 64, "BK": 16}, "gfx950": {"BM": 256, "BN": 64}}
CONVERT_SCHEDULE = {"gfx1100": {"BK": 16}, "gfx1201": {"BK": 16}}


@hk.func
def decode_ocp(t, fmt, dtype, layout="row"):
    """An int8 tile holding OCP fp8 bytes of format `fmt` as `dtype` in `layout` (row: a matrix
    operand), its fields taken apart by integer operations: (2^m + mantissa) * 2^(e - bias - m)
    with m the mantissa's bits, e = 0 subnormal (mantissa * 2^(1 - bias - m)), the power of two
    made of exact fp32 products; e4m3's S.1111.111 is NaN, e5m2's exponent 31 infinity (mantissa
    0) or NaN. How the kernels read OCP bytes on gfx942 (whose fp8 MFMAs read FNUZ)."""
    ebits, mbits, bias = OCP[fmt]
    # The 32-bit work in the layout whose lanes hold what t's do (an 8-bit row tile has a row in
    # each lane, as a 32-bit col tile does): no element changes lanes on the way in.
    u = t.to(hk.i32, "col" if t.spec.layout == "row" else "row") & 255
    e = (u >> mbits) & ((1 << ebits) - 1)
    m = u & ((1 << mbits) - 1)
    mant = (m + hk.where(e != 0, hk.full(e.spec, 1 << mbits), 0)).to(hk.fp32)
    e = hk.maximum(e, hk.full(e.spec, 1))
    p = hk.full(mant.spec, 2.0 ** (-bias - mbits))  # times 2^e, built bit by bit of e: exact
    for i in range(ebits):
        p = hk.where((e & (1 << i)) != 0, p * float(2 ** (2 ** i)), p)
    v = mant * p
    if fmt == "fp8e4m3":
        v = hk.where((u & 127) == 127, hk.full(v.spec, float("nan")), v)
    else:
        v = hk.where((u & 124) == 124, hk.where(m == 0, hk.full(v.spec, float("inf")), float("nan")), v)
    v = hk.where(u >= 128, -v, v)
    return v.to(dtype, layout)


@hk.func
def epilogue(acc, sa, sb, bias, adj, azp_, c, r, cc, a_mode, b_mode, azp, out):
    """c's tile (r, cc) (in units of acc's shape) from a wave's accumulator: the zero-point
    correction (int8; azp None, "adj" or "token"), then scale_b, scale_a (NONE, TENSOR or LINE
    modes), then the bias, in vLLM's order, in fp32; written as `out`."""
    rows, cols = acc.spec.rows, acc.spec.cols
    if azp == "adj":
        acc = hk.sub_col(acc, adj[0, 0, 0, cc].load(hk.RV(hk.i32, cols, "row")))
    elif azp == "token":
        correction = hk.broadcast(adj[0, 0, 0, cc].load(hk.RV(hk.i32, cols, "row")), hk.RT(hk.i32, rows, cols))
        acc = acc - hk.mul_row(correction, azp_[0, 0, 0, r].load(hk.RV(hk.i32, rows, "col")))
    v = acc.to(hk.fp32) if acc.spec.dtype == hk.i32 else acc
    if b_mode == LINE:
        v = hk.mul_col(v, sb[0, 0, 0, cc].load(hk.RV(hk.fp32, cols, "row")))
    if b_mode == TENSOR:
        v = v * sb.load_scalar(0, 0, 0, 0)
    if a_mode == LINE:
        v = hk.mul_row(v, sa[0, 0, 0, r].load(hk.RV(hk.fp32, rows, "col")))
    if a_mode == TENSOR:
        v = v * sa.load_scalar(0, 0, 0, 0)
    if bias is not None:
        v = hk.add_col(v, bias[0, 0, 0, cc].load(hk.RV(out, cols, "row")).to(hk.fp32))
    c[0, 0, r, cc] = v.to(out)


@functools.lru_cache(maxsize=None)
def mm8_kernel(a_type, b_type, compute, out, with_bias=False, azp=None, block=False):
    """out = a · btᵀ, scaled, for a [M, K] and bt [N, K] (b's transpose): operands of `a_type`
    and `b_type` (hk dtypes; an fp8 type's name prefixed "raw " for OCP bytes passed as int8 and
    decoded in the kernel) multiplied as `compute` (i8, an fp8 type, or bf16 / fp16 to which the
    other types are converted), written as `out`. int8 takes azp None, "adj" (azp_adj alone) or
    "token" (azp per row times azp_adj). `block`: the K loop runs 128-wide groups, each scaled by
    the modes' BLOCK scales (sa [K/128, M], sb [N/128, K/128]).

    Arguments: a, bt, sa, sb[, bias][, azp_adj][, azp], c, a_mode, b_mode (NONE, TENSOR, LINE or
    BLOCK)."""
    integer = compute == hk.i8
    acc_type = hk.i32 if integer else hk.fp32
    if azp and not integer:
        raise ValueError("azp is int8's")
    ks = KSTEP[compute.bits]
    wm = WM // 2 if block else WM  # a block kernel holds each group's product beside the sum
    stored = [hk.i8 if isinstance(t, str) else t for t in (a_type, b_type)]
    name = "mm8_%s_%s_%s_%s%s%s%s" % (
        _tname(a_type), _tname(b_type), compute.name, out.name, "_bias" if with_bias else "",
        "_azp_" + azp if azp else "", "_block" if block else "")

    def operand(t, kind):  # (a Python function: its branches are on Python values)
        if isinstance(kind, str):
            return decode_ocp(t, kind[4:], compute)
        if kind != compute:
            return t.to(compute, "row")
        return t

    @hk.func
    def step(a, bt, r, c, k, acc):
        ta = operand(a[0, 0, r, k].load(hk.RT(stored[0], wm, ks)), a_type)
        tb = operand(bt[0, 0, c, k].load(hk.RT(stored[1], WN, ks)), b_type)
        return hk.mma_ABt(ta, tb, acc)

    @hk.func
    def body(a, bt, sa, sb, bias, adj, azp_, c, a_mode, b_mode):
        w = hk.arch.warp_id()
        r = hk.arch.block_idx.y * 2 + w // 2
        cc = hk.arch.block_idx.x * 2 + w % 2
        acc = hk.zeros(hk.RT(acc_type, wm, WN))
        if block:
            per = GROUP // ks
            nb = cc * WN // GROUP  # the wave's 32 columns lie in one 128-group of N
            part = hk.zeros(hk.RT(acc_type, wm, WN))
            # One loop over K's steps (a loop per group spills SGPRs on gfx942): each group's
            # product is scaled and added at its last step.
            for k in hk.range(hk.cdiv(a.cols, ks)):
                part = step(a, bt, r, cc, k, part)
                if k % per == per - 1:
                    g = k // per
                    if a_mode == BLOCK:
                        part = hk.mul_row(part, sa[0, 0, g, r].load(hk.RV(hk.fp32, wm, "col")))
                    if b_mode == BLOCK:
                        part = part * sb.load_scalar(0, 0, nb, g)
                    acc = acc + part
                    part = hk.zeros(hk.RT(acc_type, wm, WN))
        else:
            for k in hk.range(hk.cdiv(a.cols, ks)):
                acc = step(a, bt, r, cc, k, acc)
        epilogue(acc, sa, sb, bias, adj, azp_, c, r, cc, a_mode, b_mode, azp, out)

    grid = lambda p: (hk.cdiv(p.c.cols, 2 * WN), hk.cdiv(p.c.rows, 2 * wm))  # noqa: E731
    A, B, F = hk.Tensor[stored[0]], hk.Tensor[stored[1]], hk.Tensor[hk.fp32]
    C, I = hk.Tensor[out], hk.Tensor[hk.i32]
    # One signature per set of optional tensors (a kernel's arguments are its annotations).
    if with_bias and azp == "token":
        def mm8(a: A, bt: B, sa: F, sb: F, bias: C, adj: I, azp_: I, c: C, a_mode: int, b_mode: int):
            body(a, bt, sa, sb, bias, adj, azp_, c, a_mode, b_mode)
    elif with_bias and azp == "adj":
        def mm8(a: A, bt: B, sa: F, sb: F, bias: C, adj: I, c: C, a_mode: int, b_mode: int):
            body(a, bt, sa, sb, bias, adj, None, c, a_mode, b_mode)
    elif azp == "token":
        def mm8(a: A, bt: B, sa: F, sb: F, adj: I, azp_: I, c: C, a_mode: int, b_mode: int):
            body(a, bt, sa, sb, None, adj, azp_, c, a_mode, b_mode)
    elif azp == "adj":
        def mm8(a: A, bt: B, sa: F, sb: F, adj: I, c: C, a_mode: int, b_mode: int):
            body(a, bt, sa, sb, None, adj, None, c, a_mode, b_mode)
    elif with_bias:
        def mm8(a: A, bt: B, sa: F, sb: F, bias: C, c: C, a_mode: int, b_mode: int):
            body(a, bt, sa, sb, bias, None, None, c, a_mode, b_mode)
    else:
        def mm8(a: A, bt: B, sa: F, sb: F, c: C, a_mode: int, b_mode: int):
            body(a, bt, sa, sb, None, None, None, c, a_mode, b_mode)
    return hk.kernel(grid=grid, warps=WAVES, name=name)(mm8)


# The block-scaled LDS-staged kernel's waves: 8 (a wave's part of out 32 x 64), so that the
# group's product fits beside the sum in each wave's registers.
BLOCK_WAVES = 8
# ... and on gfx1201, whose fp8 instruction takes K 16 at a time (8 per group, each operand's
# fragments in flight), 16 x 64 (64 rows per workgroup).
BLOCK_SCHEDULE = {"gfx1201": {"BM": 64}}
# Converted operands with block scales: a group of K is several steps of 32 (4 of the 16-bit
# instruction's K per step), since the compiler hoists a step's LDS reads and conversions
# together, and a step of 128 would hold them all at once (it spills).
CONVERT_BLOCK_BK = 32


@functools.lru_cache(maxsize=None)
def mm8_fast_kernel(dtype, out, with_bias=False, a_type=None, b_type=None, block=""):
    """out = a · btᵀ scaled (modes NONE, TENSOR or LINE) on gemm_kernel's schedule
    (gemm.accumulate: 4 waves, 128 x 128 of out per workgroup, K through two LDS buffers with
    the next step's loads in flight), the epilogue mm8_kernel's. Rows of a and bt must be 16-byte
    multiples. With a_type and b_type None the operands are `dtype`, which the target's 8-bit
    matrix instruction reads as stored (int8; fp8 in the target's format): each tile is read
    from LDS straight into the matrix fragments. Otherwise (mm8_kernel's types: fp8, "raw "
    fp8 for OCP bytes passed as int8, or `dtype` itself) each operand is staged in LDS as
    stored and its register tiles converted to `dtype` (bf16 or fp16) after each LDS read:
    W8A16, and fp8 where the target has no instruction for it.

    `block` names the operands with 128 x 128 block scales ("a", "b" or "ab"; mode BLOCK, sa
    [K/128, M], sb [N/128, K/128], K a multiple of 128): each group of K's product (held beside
    the sum; one step of 128, or CONVERT_BLOCK_BK steps for converted operands) scaled by its
    scales and added; the other operand's scales, if any, are applied after; 8 waves
    (BLOCK_WAVES), each 32 x 64 of out.

    Arguments: a, bt, sa, sb[, bias], c, a_mode, b_mode."""
    if set(block) - set("ab"):
        raise ValueError("block names operands 'a' and 'b', not %r" % (block,))
    # OCP bytes a kernel would read as int8 ("raw ", gfx942) are staged typed here: the library's
    # conversion to 16-bit is the same software on every target.
    types = tuple(getattr(hk, t[4:]) if isinstance(t, str) else t for t in (a_type or dtype, b_type or dtype))
    stored = types
    name = "mm8_fast_%s_%s%s" % (dtype.name, out.name, "_bias" if with_bias else "")
    if a_type is not None or b_type is not None:
        name = "mm8_fast_%s_%s_%s_%s%s" % (_tname(types[0]), _tname(types[1]), dtype.name, out.name,
                                           "_bias" if with_bias else "")

    def converter(kind):  # (a Python function of a register tile, or None: read as the instruction's)
        if kind != dtype:
            return lambda t: t.to(dtype, "row")
        return None

    convert = None if types == (dtype, dtype) else (converter(types[0]), converter(types[1]))
    schedule = None
    if block:
        schedule = BLOCK_SCHEDULE if convert is None else None
        name += "_block_" + block
    elif convert is not None and convert[0] is None:  # B alone converted (W8A16)
        schedule = CONVERT_B_SCHEDULE
    elif convert is not None:
        schedule = CONVERT_SCHEDULE
    a_block, b_block = "a" in block, "b" in block

    @hk.func
    def scale_group(sa, sb, r, nb, part, g):
        # group g's product times its scales: a's per row of the wave's part (hk.ops passes sa
        # transposed, a group's scales along a row), b's one per 128 x 128 block.
        if a_block:
            s = sa[0, 0, g, r].load(hk.RV(hk.fp32, part.spec.rows, "col"))
            if b_block:
                s = s * sb.load_scalar(0, 0, nb, g)
            part = hk.mul_row(part, s)
        else:
            part = part * sb.load_scalar(0, 0, nb, g)
        return part

    waves = BLOCK_WAVES if block else WAVES

    @hk.func
    def body(a, bt, sa, sb, bias, c, a_mode, b_mode, BM, BN, BK, KSTEP, UNROLL):
        bx, by, w = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id()
        r = by * (waves // 2) + w // 2
        cc = bx * 2 + w % 2
        group = functools.partial(scale_group, sa, sb, r, bx * BN // GROUP) if block else None
        if block and GROUP % BK:
            raise ValueError("a block-scaled kernel's BK divides the block's %d, not %d" % (GROUP, BK))
        acc = gemm.accumulate(a, bt, dtype, waves, False, BM, BN, BK, KSTEP, UNROLL, bx, by, w // 2, w % 2,
                              convert=convert, group=group, group_steps=GROUP // BK)
        epilogue(acc, sa, sb, bias, None, None, c, r, cc, a_mode, b_mode, None, out)

    grid = lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM))  # noqa: E731
    A, B, F, C = hk.Tensor[stored[0]], hk.Tensor[stored[1]], hk.Tensor[hk.fp32], hk.Tensor[out]
    # BK: 64 bytes, as the 16-bit GEMM's; a block scale's group with block scales (BN too: a
    # workgroup's columns lie in one group of N), or a part of it for converted operands.
    BK = (GROUP if convert is None else CONVERT_BLOCK_BK) if block else 64
    if with_bias:
        def mm8_fast(a: A, bt: B, sa: F, sb: F, bias: C, c: C, a_mode: int, b_mode: int, *,
                     BM=128, BN=128, BK=BK, KSTEP=0, UNROLL=2):
            body(a, bt, sa, sb, bias, c, a_mode, b_mode, BM, BN, BK, KSTEP, UNROLL)
    else:
        def mm8_fast(a: A, bt: B, sa: F, sb: F, c: C, a_mode: int, b_mode: int, *,
                     BM=128, BN=128, BK=BK, KSTEP=0, UNROLL=2):
            body(a, bt, sa, sb, None, c, a_mode, b_mode, BM, BN, BK, KSTEP, UNROLL)
    return hk.kernel(grid=grid, warps=waves, name=name, schedule=schedule)(mm8_fast)


# Tuning -----------------------------------------------------------------------------------------
# mm8_fast_kernel's schedule for the instruction's own operands (int8; e4m3 or e5m2 in the
# target's format), per bucket of M by N and K as the 16-bit linear's (gemm.M_BUCKETS). A shape
# is (M, N, K, the operands' hk type name). Block-scaled and converted kernels keep theirs.

def mm8_space(target):
    """The kernel's knobs (its 2 x 2 waves fixed, each a quarter of C's tile): C's tile, K's step
    in bytes, steps per loop iteration; constrained as the 16-bit GEMM's."""
    return space(
        BM=[64, 128, 256], BN=[64, 128, 256], BK=[64, 128], UNROLL=[2, 4],
        where=[
            # two buffers of A's and B's tiles (a byte an element) in the LDS
            lambda c: 2 * (c.BM + c.BN) * c.BK <= target.lds_bytes,
            # a wave's quarter of C (int32 or fp32) in at most half of a lane's 256 VGPRs
            lambda c: (c.BM // 2) * (c.BN // 2) // target.wave_size <= 128,
        ])


def _mm8_shape(shape, default):
    m, n, k, *rest = shape
    return int(m), int(n), int(k), rest[0] if rest else default


def _mm8_arguments(shape, default):
    m, n, k, dtype = _mm8_shape(shape, default)
    t = getattr(torch, getattr(hk, dtype).torch_name)
    meta = dict(device="meta")
    return (torch.empty(m, k, dtype=t, **meta), torch.empty(n, k, dtype=t, **meta),
            torch.empty(m, dtype=torch.float32, **meta), torch.empty(n, dtype=torch.float32, **meta),
            torch.empty(m, n, dtype=torch.bfloat16, **meta), LINE, LINE)


def _mm8_kernel(config, shape, default):
    dtype = _mm8_shape(shape, default)[3]
    # Called as the launches call it (one Kernel, one trace).
    return mm8_fast_kernel(getattr(hk, dtype), hk.bf16, False), dict(config.items())


def _mm8_default(arch):
    constants = mm8_fast_kernel(hk.i8, hk.bf16, False)._constants({}, arch)
    return {k: constants[k] for k in ("BM", "BN", "BK", "UNROLL")}


def _mm8_tunable(name, default_type, what):
    return Tunable(
        name=name, space=mm8_space, knobs=frozenset(("BM", "BN", "BK", "KSTEP", "UNROLL")),
        kernel=lambda config, shape: _mm8_kernel(config, shape, default_type),
        arguments=lambda shape: _mm8_arguments(shape, default_type), default=_mm8_default,
        bucket=lambda shape: gemm.linear_bucket(_mm8_shape(shape, default_type)),
        describe=lambda shape: "%s M=%d N=%d K=%d (%s)" % (
            _mm8_shape(shape, default_type)[3], *_mm8_shape(shape, default_type)[:3], what),
        sources=(os.path.abspath(__file__), gemm.__file__))


# int8_scaled_mm's W8A8 (per-token and per-channel scales), and scaled_mm's fp8 x fp8 of one
# format the target's instruction reads (its shape names the format: fp8e4m3, fp8e4m3fnuz, ...).
INT8_SCALED_MM = _mm8_tunable("int8_scaled_mm", "i8", "int8 W8A8")
SCALED_MM = _mm8_tunable("scaled_mm", "fp8e4m3", "fp8 rowwise")


def native_fp8(arch, fmt="e4m3"):
    """The hk type name of `fmt` (e4m3 or e5m2) in the target's own fp8 format, which its matrix
    instruction reads (as fp8_plan decides), or None where it reads none (gfx1100)."""
    target = facts.target(arch)
    if target.fp8_format is None or not any(s.a == "fp8" + fmt for s in target.mma_shapes):
        return None
    return "fp8%s%s" % (fmt, "fnuz" if target.fp8_format == "fnuz" else "")


def _launch_tuned(tunable, kernel, operands, modes, m, n, k, dtype):
    """kernel(*operands, *modes) with the tuned schedule of its bucket on the launch's target."""
    arch = tuned.launch_arch()
    tuned.launch(tunable, (m, n, k, dtype.name),
                 lambda knobs: kernel(*operands, *modes, arch=arch, **(knobs or {})), arch)


def _tname(t):
    return t.replace(" ", "_") if isinstance(t, str) else t.name


# torch operators ---------------------------------------------------------------------------------

def _fail(op, what, hint=None):
    raise registry.LaunchError("hk.ops.%s: %s" % (op, what), hint=hint)


def _names(dtypes):
    return " or ".join(str(d).replace("torch.", "") for d in dtypes)


def _describe(t):
    return "%s %s" % (str(t.dtype).replace("torch.", ""), list(t.shape))


def _operands(op, a, b, a_dtypes, b_dtypes):
    """(a as [M, K], b's transpose [N, K], M, N, K) after the checks of dtypes and shapes."""
    if a.dtype not in a_dtypes:
        _fail(op, "a is %s; it must be %s" % (_describe(a), _names(a_dtypes)))
    if b.dtype not in b_dtypes:
        _fail(op, "b is %s; it must be %s" % (_describe(b), _names(b_dtypes)))
    if a.dim() < 1 or b.dim() != 2 or b.shape[0] != a.shape[-1]:
        _fail(op, "a is %s and b %s; they must be [..., K] and [K, N]" % (_describe(a), _describe(b)),
              hint="pass the weight [N, K] transposed, as vLLM does: b = weight.t()")
    if b.device != a.device:
        _fail(op, "b is on %s and a on %s" % (b.device, a.device))
    k, n = b.shape
    if k == 0:
        _fail(op, "K is 0: a and b have no columns to multiply")
    m = a.numel() // k
    return registry.rows(op, "a", a, k), b.t(), m, n, k


def _out_dtype(op, out_dtype, allowed=HALF):
    if out_dtype not in allowed:
        _fail(op, "out_dtype is %s; it must be %s" % (out_dtype, _names(allowed)))
    return allowed[out_dtype]


def _vector(op, name, t, length, dtype, like, what):
    """A per-row or per-column tensor flattened, refused unless it has `length` elements of
    `dtype` on `like`'s device."""
    if t.dtype != dtype or t.numel() != length or t.device != like.device or t.dim() > 2:
        _fail(op, "%s is %s on %s; it must be %s %s on %s" % (name, _describe(t), t.device,
                                                            str(dtype).replace("torch.", ""), what, like.device))
    return t.reshape(-1).contiguous()


def _scale(op, name, s, a, lines, line_shapes, what, block_shape=None, block_what=None):
    """(mode, the scale as the kernel reads it) of scale_a or scale_b: None, one element, one per
    row of a or column of b (`lines` of them, in one of `line_shapes`), or a block shape."""
    if s is None:
        return NONE, None
    if s.dtype != torch.float32 or s.device != a.device:
        _fail(op, "%s is %s on %s; it must be float32 on %s" % (name, _describe(s), s.device, a.device))
    if s.numel() == 1:
        return TENSOR, s.reshape(1)
    shape = tuple(s.shape)
    if shape in line_shapes:
        return LINE, s.reshape(-1).contiguous()
    if block_shape is not None and s.dim() == 2 and shape[0] == block_shape[0] and shape != (lines, 1):
        return BLOCK, s
    expected = "one element (per tensor) or %s" % what
    if block_what:
        expected += ", or %s" % block_what
    _fail(op, "%s has shape %s; it must be %s" % (name, list(shape), expected))


def _bias(op, bias, n, out_dtype, a):
    if bias is None:
        return None
    return _vector(op, "bias", bias, n, out_dtype, a, "[N] = [%d]" % n)


def _output(op, out, a, n, out_dtype):
    want = tuple(a.shape[:-1]) + (n,)
    if tuple(out.shape) != want or out.dtype != out_dtype or out.device != a.device:
        _fail(op, "out is %s on %s; it must be %s %s on %s" % (_describe(out), out.device,
                                                             str(out_dtype).replace("torch.", ""), list(want),
                                                             a.device))
    return registry.rows(op, "out", out, n, writable=True)


def _transposed(bt):
    """b's transpose as the kernel reads it: [N, K] with unit stride along K (vLLM's column-major
    b is that already)."""
    return bt if bt.stride(-1) == 1 else bt.contiguous()


def launch_int8(a, b, scale_a, scale_b, bias, azp_adj, azp, out):
    op = "int8_scaled_mm"
    out_type = _out_dtype(op, out.dtype)
    a2, bt, m, n, k = _operands(op, a, b, (torch.int8,), (torch.int8,))
    c = _output(op, out, a, n, out.dtype)
    a_mode, sa = _scale(op, "scale_a", scale_a, a, m, ((m, 1), (m,)), "per token ([M, 1] = [%d, 1])" % m)
    b_mode, sb = _scale(op, "scale_b", scale_b, a, n, ((1, n), (n, 1), (n,)),
                        "per channel ([1, N], [N, 1] or [N], N = %d)" % n)
    bias = _bias(op, bias, n, out.dtype, a)
    if azp is not None and azp_adj is None:
        _fail(op, "azp is given without azp_adj", hint="pass azp_adj (the weight's column sums, int32 [N])")
    extra = []
    if azp_adj is not None:
        extra.append(_vector(op, "azp_adj", azp_adj, n, torch.int32, a, "[N] = [%d] (or [1, N])" % n))
    if azp is not None:
        extra.append(_vector(op, "azp", azp, m, torch.int32, a, "per token ([M] or [M, 1], M = %d)" % m))
    if m == 0 or n == 0:
        return
    bt = _transposed(bt)
    operands = [a2, bt, sa, sb] + ([bias] if bias is not None else []) + extra + [c]
    if azp_adj is None and not gemm.in_pieces(a2, bt):
        _launch_tuned(INT8_SCALED_MM, mm8_fast_kernel(hk.i8, out_type, bias is not None), operands,
                      (a_mode, b_mode), m, n, k, hk.i8)
        return
    kernel = mm8_kernel(hk.i8, hk.i8, hk.i8, out_type, bias is not None,
                        None if azp_adj is None else "adj" if azp is None else "token")
    kernel(*operands, a_mode, b_mode)


def fp8_plan(a_dtype, b_dtype, arch):
    """(a's kernel type, b's kernel type, the type multiplied) for fp8 or 16-bit `a_dtype` and
    fp8 `b_dtype` on `arch`: the fp8 instruction for two operands of one format where the target
    has it in that format (OCP on gfx1201 and gfx950, FNUZ on gfx942), else the 16-bit
    instruction on converted tiles (OCP decoded from raw bytes on gfx942). FNUZ operands are
    the caller's to have refused elsewhere (check_fnuz)."""
    target = facts.target(arch)
    raw = target.fp8_format == "fnuz"

    def kind(dtype):
        if dtype in FNUZ:
            return FNUZ[dtype]
        t = FP8[dtype]
        return "raw " + t.name if raw else t

    if a_dtype in HALF:
        return HALF[a_dtype], kind(b_dtype), HALF[a_dtype]
    fp8 = FNUZ.get(a_dtype) or FP8[a_dtype]
    if a_dtype == b_dtype and native_fp8(arch, fp8.name[3:].replace("fnuz", "")) == fp8.name:
        return fp8, fp8, fp8
    return kind(a_dtype), kind(b_dtype), hk.bf16


def _fnuz_hint(dtype):
    ocp, tiny = {torch.float8_e4m3fnuz: ("float8_e4m3fn", "2^-9"), torch.float8_e5m2fnuz: ("float8_e5m2", "2^-16")}[dtype]
    return ("convert it to OCP (.float().to(torch.%s) keeps every value from %s up) or to bfloat16" % (ocp, tiny))


def check_fnuz(op, a, b, arch):
    """Refuses FNUZ fp8 on a target whose fp8 is not FNUZ, and OCP with FNUZ in one product."""
    target = facts.target(arch)
    for name, t in (("a", a), ("b", b)):
        if t.dtype in FNUZ and target.fp8_format != "fnuz":
            _fail(op, "%s is %s, an FNUZ fp8 format, which only gfx942's matrix instructions read; %s %s"
                  % (name, _describe(t), arch, "takes OCP fp8 (float8_e4m3fn, float8_e5m2)" if target.fp8_format
                     else "has no fp8 instructions: hk converts OCP fp8 (float8_e4m3fn, float8_e5m2) there"),
                  hint=_fnuz_hint(t.dtype))
    if a.dtype in FP8 and b.dtype in FNUZ or a.dtype in FNUZ and b.dtype in FP8:
        fnuz = a if a.dtype in FNUZ else b
        _fail(op, "a is %s and b %s: one OCP, the other FNUZ; both must be one family"
              % (_describe(a), _describe(b)), hint=_fnuz_hint(fnuz.dtype) + ", or quantize both to FNUZ")


def launch_fp8(a, b, scale_a, scale_b, bias, out):
    op = "scaled_mm"
    out_type = _out_dtype(op, out.dtype, FLOAT_OUT)
    a2, bt, m, n, k = _operands(op, a, b, tuple(FP8) + tuple(FNUZ) + tuple(HALF), tuple(FP8) + tuple(FNUZ))
    check_fnuz(op, a, b, registry.launch_arch())
    c = _output(op, out, a, n, out.dtype)
    a_mode, sa = _scale(op, "scale_a", scale_a, a, m, ((m, 1), (m,)), "per token ([M, 1] = [%d, 1])" % m,
                        (m,), "block scales [M, K/128] (M = %d, K = %d)" % (m, k))
    b_mode, sb = _scale(op, "scale_b", scale_b, a, n, ((1, n), (n,)), "per column ([1, N] = [1, %d])" % n,
                        (-(-k // GROUP),), "block scales [K/128, N/128] (b's shape / 128: [%d, %d] / 128)" % (k, n))
    block = BLOCK in (a_mode, b_mode)
    if block:
        if k % GROUP:
            _fail(op, "block scales need K a multiple of %d, not %d" % (GROUP, k),
                  hint="pad K to a multiple of 128 (zeros), or scale per tensor or per token")
        if a_mode == BLOCK and tuple(sa.shape) != (m, k // GROUP):
            _fail(op, "scale_a has shape %s; block scales are [M, K/128] = [%d, %d]" % (list(sa.shape), m, k // GROUP))
        if b_mode == BLOCK and (n % GROUP or tuple(sb.shape) != (k // GROUP, n // GROUP)):
            if n % GROUP:
                _fail(op, "block scales need N a multiple of %d, not %d" % (GROUP, n),
                      hint="pad N to a multiple of 128, or scale per tensor or per column")
            _fail(op, "scale_b has shape %s; block scales are [K/128, N/128] = [%d, %d]"
                  % (list(sb.shape), k // GROUP, n // GROUP))
        # (A copy with unit strides: torch's contiguous() keeps the transpose's strides where a
        # dimension is 1, as a decode's one row of scale_a.)
        if a_mode == BLOCK:
            sa = sa.t().clone(memory_format=torch.contiguous_format)  # [K/128, M]: a group's scales along a row
        if b_mode == BLOCK:
            sb = sb.t().clone(memory_format=torch.contiguous_format)  # [N/128, K/128]
    bias = _bias(op, bias, n, out.dtype, a)
    if m == 0 or n == 0:
        return
    a_type, b_type, compute = fp8_plan(a.dtype, b.dtype, registry.launch_arch())
    bt = _transposed(bt)
    one = None
    if sa is None or sb is None:  # the kernel reads a tensor it is told to ignore
        one = torch.ones(1, dtype=torch.float32, device=a.device)
    # The LDS-staged kernel: the instruction's own operands (block scales too), or OCP fp8
    # converted to 16-bit (FNUZ operands of a converted product keep the direct kernel's decode).
    native = a_type == b_type == compute
    staged = not gemm.in_pieces(a2, bt) and (native or not (a.dtype in FNUZ or b.dtype in FNUZ))
    blocks = ("a" if a_mode == BLOCK else "") + ("b" if b_mode == BLOCK else "")
    named = {"block": blocks} if blocks else {}
    if staged and native:
        kernel = mm8_fast_kernel(compute, out_type, bias is not None, **named)
    elif staged:  # (OCP bytes staged typed: converted in software on every target)
        typed = [getattr(hk, t[4:]) if isinstance(t, str) else t for t in (a_type, b_type)]
        kernel = mm8_fast_kernel(compute, out_type, bias is not None, *typed, **named)
    else:
        a2 = a2.view(torch.int8) if isinstance(a_type, str) else a2
        bt = bt.view(torch.int8) if isinstance(b_type, str) else bt
        kernel = mm8_kernel(a_type, b_type, compute, out_type, bias is not None, None, block)
    operands = [a2, bt, one if sa is None else sa, one if sb is None else sb] + ([bias] if bias is not None else [])
    if staged and native and not blocks:
        _launch_tuned(SCALED_MM, kernel, operands + [c], (a_mode, b_mode), m, n, k, compute)
        return
    kernel(*operands, c, a_mode, b_mode)


def _empty(a, b, out_dtype):
    return torch.empty(tuple(a.shape[:-1]) + (b.shape[-1],), dtype=out_dtype, device=a.device)


def _int8(a, b, scale_a, scale_b, out_dtype, bias=None, azp_adj=None, azp=None):
    _out_dtype("int8_scaled_mm", out_dtype)
    out = _empty(a, b, out_dtype)
    launch_int8(a, b, scale_a, scale_b, bias, azp_adj, azp, out)
    return out


def _fp8(a, b, scale_a, scale_b, out_dtype, bias=None):
    _out_dtype("scaled_mm", out_dtype, FLOAT_OUT)
    out = _empty(a, b, out_dtype)
    launch_fp8(a, b, scale_a, scale_b, bias, out)
    return out


OPS = {
    "int8_scaled_mm": registry.define(
        "int8_scaled_mm", "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, ScalarType out_dtype, "
                          "Tensor? bias=None, Tensor? azp_adj=None, Tensor? azp=None) -> Tensor", _int8,
        lambda a, b, scale_a, scale_b, out_dtype, bias=None, azp_adj=None, azp=None: _empty(a, b, out_dtype)),
    "int8_scaled_mm_out": registry.define(
        "int8_scaled_mm_out", "(Tensor(a!) out, Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
                              "Tensor? bias=None, Tensor? azp_adj=None, Tensor? azp=None) -> ()",
        lambda out, a, b, scale_a, scale_b, bias=None, azp_adj=None, azp=None:
            launch_int8(a, b, scale_a, scale_b, bias, azp_adj, azp, out),
        lambda out, a, b, scale_a, scale_b, bias=None, azp_adj=None, azp=None: None, mutates=("out",)),
    "scaled_mm": registry.define(
        "scaled_mm", "(Tensor a, Tensor b, Tensor? scale_a, Tensor? scale_b, ScalarType out_dtype, "
                     "Tensor? bias=None) -> Tensor", _fp8,
        lambda a, b, scale_a, scale_b, out_dtype, bias=None: _empty(a, b, out_dtype)),
    "scaled_mm_out": registry.define(
        "scaled_mm_out", "(Tensor(a!) out, Tensor a, Tensor b, Tensor? scale_a, Tensor? scale_b, "
                         "Tensor? bias=None) -> ()",
        lambda out, a, b, scale_a, scale_b, bias=None: launch_fp8(a, b, scale_a, scale_b, bias, out),
        lambda out, a, b, scale_a, scale_b, bias=None: None, mutates=("out",)),
}
