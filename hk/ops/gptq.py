"""The W4A16 GEMM for GPTQ checkpoints: out = x · W with W dequantized from 4-bit weights on the
fly, act-order (g_idx) included, as vLLM's gptq_gemm computes it on a checkpoint's tensors.

    gptq_gemm(x, qweight, qzeros, scales, g_idx, use_v2_format=False) -> out
        x [..., K] fp16 or bf16; qweight [K/8, N] int32, row k of W in the nibble at bits
        4·(k % 8) of word row k / 8; qzeros [G, N/8] int32, the zero point of column n at bits
        4·(n % 8) of word n / 8; scales [G, N] in x's dtype; g_idx [K] int32, the group of each
        row of W (act-order), or empty for groups of K / G consecutive rows.
        W[k, n] = (q[k, n] - z[g, n]) · s[g, n], g = g_idx[k], where z is the stored zero plus
        one (GPTQ's v1 checkpoints) or as stored (use_v2_format).
    gptq_gemm_out(out, x, qweight, qzeros, scales, g_idx, use_v2_format=False)

The nibble p of a word row holds the rows 8i + p of W, so W's rows in plane p multiply x's
columns 8i + p: the op reads x as 8 planes of K/8 columns (x is a decode's few rows: the copy is
small next to the weight) and a wave sums all 8 planes into one accumulator. A wave owns 16
rows of x and 16 columns of out; each step reads a 16 x 16 tile of packed words (128 rows of W)
once, in row layout (a lane per column, as the dequantized operand's col layout has them, so
the conversion stays in the lane), and for each plane extracts the nibbles, dequantizes and
multiplies. Consecutive groups (an empty g_idx) put each word row in one group, so the 8 planes
share a step's zero points and scales (gptq_kernel); act-order gathers them per plane by g_idx.
The zero points and scales are read from an fp32 table [2, G, N] the op makes (1/G of the
weight's words, twice), and the dequantization is exactly the reference's: (q - z) · s in fp32,
rounded to x's dtype. gfx942 and gfx950 take consecutive groups of a multiple of 128 rows only
(ONE_GROUP_PER_STEP); the op says so for others.
"""

import functools

import torch

import hk
from hk.ops import indices, registry

TILE = 16
WORDS = 16  # word rows (128 rows of W) per step
# How many planes a step's loop holds per iteration, by target (default: all 8, unrolled): the
# CDNA targets' 102 SGPRs do not hold the addresses of 8 planes' loads.
PLANES = {"gfx942": 2, "gfx950": 2}
# Where only one group per step fits the SGPRs (consecutive groups of a multiple of 128 rows):
# several groups' vectors, or act-order's gathers, spill there, which the gate refuses.
ONE_GROUP_PER_STEP = ("gfx942", "gfx950")


@hk.func
def _groups(groups, p):
    """Column p of a step's g_idx tile (the groups of W's rows 8i + p) as an i32 "col" vector
    distributed as an fp32 row-layout tile's rows; indices.NONE past the end."""
    return hk.row_max(hk.where(hk.iota(groups.spec, "col") == p, groups, indices.NONE))


@functools.lru_cache(maxsize=None)
def gptq_kernel(dtype, G=None):
    """x's dtype (bf16 or fp16) and the group size G of consecutive groups, a multiple of 8;
    G None: any g_idx (act-order), each plane's zero points and scales gathered by group.

    With consecutive groups, word row i's 8 rows of W are in one group (G a multiple of 8), so
    all 8 planes share a step's zero points and scales: a vector each when the step's 128 rows
    are in one group (G a multiple of 128), else a tile made once per step of its few groups'
    vectors."""
    if G is None:
        return _act_order_kernel(dtype)
    if G % 8:
        raise ValueError("consecutive groups are a multiple of 8 rows, not %d" % G)
    m = G // 8  # word rows per group

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, TILE), hk.cdiv(p.out.rows, TILE)),
               name="gptq_gemm_%s_g%d" % (dtype.name, G))
    def gptq_gemm(xp: hk.Tensor[dtype], q: hk.Tensor[hk.i32], zs: hk.Tensor[hk.fp32], out: hk.Tensor[dtype]):
        # xp [8, M, K/8] (plane p: x's columns 8i + p); q [K/8, N]; zs [2, G, N] (the zero
        # points, then the scales: one tensor, one buffer resource's SGPRs); out [M, N].
        bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
        acc = hk.zeros(hk.RT(hk.fp32, TILE, TILE))
        # The words pass through LDS, issued a step ahead: read back in row layout (a lane
        # per column, as the dequantized operand's col layout has them, so its conversion
        # stays in the lane), where a load in that layout would be a load per word.
        q_lds = hk.lds.alloc(hk.ST(hk.i32, WORDS, TILE))
        hk.lds.commit(q_lds, 0, hk.lds.issue(q_lds, q, hk.tile_coord(0, 0, 0, bx)))
        hk.arch.barrier()
        for kt in hk.range(hk.cdiv(q.rows, WORDS)):
            words = q_lds[0].load(hk.RT(hk.i32, WORDS, TILE, "row"))
            following = hk.lds.issue(q_lds, q, hk.tile_coord(0, 0, kt + 1, bx))
            if G % (8 * WORDS) == 0:
                g = kt // (G // (8 * WORDS))
                zv = zs[0, 0, g, bx].load(hk.RV(hk.fp32, TILE, "row"))
                sv = zs[1, 0, g, bx].load(hk.RV(hk.fp32, TILE, "row"))
            else:  # word row WORDS·kt + i is in group (WORDS·kt + i) / m: a few groups per step
                spec, tile = hk.RT(hk.i32, WORDS, 16, "row"), hk.RT(hk.fp32, WORDS, TILE, "row")
                group = (hk.iota(spec, "row") + kt * WORDS) / m
                first = kt * WORDS // m
                zt, st = hk.zeros(tile), hk.zeros(tile)
                for j in range(WORDS // m if WORDS % m == 0 else WORDS // m + 2):
                    rows = group == first + j
                    zt = hk.where(rows, hk.broadcast(zs[0, 0, first + j, bx].load(hk.RV(hk.fp32, TILE, "row")), tile), zt)
                    st = hk.where(rows, hk.broadcast(zs[1, 0, first + j, bx].load(hk.RV(hk.fp32, TILE, "row")), tile), st)
            for p in hk.range(8, unroll=PLANES.get(hk.arch.target().arch, True)):
                nibbles = ((words >> 4 * p) & 0xF).to(hk.fp32)
                if G % (8 * WORDS) == 0:
                    w = hk.mul_col(hk.sub_col(nibbles, zv), sv)
                else:
                    w = (nibbles - zt) * st
                xa = xp[p, 0, by, kt].load(hk.RT(dtype, TILE, WORDS))
                acc = hk.mma_AB(xa, w.to(dtype, "col", finite=True), acc)  # (the weights are finite)
            hk.arch.barrier()
            hk.lds.commit(q_lds, 0, following)
            hk.arch.barrier()
        out[0, 0, by, bx] = acc.to(dtype)

    return gptq_gemm


@functools.lru_cache(maxsize=None)
def _act_order_kernel(dtype):
    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, TILE), hk.cdiv(p.out.rows, TILE)),
               name="gptq_gemm_%s_act_order" % dtype.name)
    def gptq_gemm(xp: hk.Tensor[dtype], q: hk.Tensor[hk.i32], gidx: hk.Tensor[hk.i32], zs: hk.Tensor[hk.fp32],
                  out: hk.Tensor[dtype]):
        # As above, and gidx [K/8, 8]: g_idx as it is (row i, column p: the group of W's row
        # 8i + p).
        bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
        acc = hk.zeros(hk.RT(hk.fp32, TILE, TILE))
        for kt in hk.range(hk.cdiv(q.rows, WORDS)):
            words = q[0, 0, kt, bx].load(hk.RT(hk.i32, WORDS, TILE, "row"))
            spec = hk.RT(hk.i32, WORDS, 16, "row")
            groups = hk.where(hk.iota(spec, "row") < gidx.rows - kt * WORDS, gidx[0, 0, kt, 0].load(spec),
                              indices.NONE)
            for p in hk.range(8):  # (a device loop: unrolled, every plane's gathers stay live)
                g = _groups(groups, p)
                zp = hk.gather(zs, hk.tile_coord(0, 0, 0, bx), g, hk.RT(hk.fp32, WORDS, TILE, "row"))
                sp = hk.gather(zs, hk.tile_coord(1, 0, 0, bx), g, hk.RT(hk.fp32, WORDS, TILE, "row"))
                w = (((words >> 4 * p) & 0xF).to(hk.fp32) - zp) * sp
                xa = xp[p, 0, by, kt].load(hk.RT(dtype, TILE, WORDS))
                acc = hk.mma_AB(xa, w.to(dtype, "col", finite=True), acc)
        out[0, 0, by, bx] = acc.to(dtype)

    return gptq_gemm


# torch operators -------------------------------------------------------------------------------

def unpack_zeros(qzeros, n, use_v2_format):
    """[G, N/8] packed zero points -> [G, N] int32 (v1 checkpoints store the zero minus one)."""
    shifts = torch.arange(0, 32, 4, dtype=torch.int32, device=qzeros.device)
    zeros = ((qzeros.unsqueeze(-1) >> shifts) & 0xF).reshape(qzeros.shape[0], -1)[:, :n]
    return zeros if use_v2_format else zeros + 1


def launch_gptq(x, qweight, qzeros, scales, g_idx, use_v2_format, out):
    op = "gptq_gemm"
    dtype = registry.dtype_of(op, x, (torch.bfloat16, torch.float16))
    registry.same(op, "scales", scales, x)
    registry.same(op, "out", out, x)
    for name, t in (("qweight", qweight), ("qzeros", qzeros), ("g_idx", g_idx)):
        if t.dtype != torch.int32 or t.device != x.device:
            raise registry.LaunchError("hk.ops.gptq_gemm: %s is %s on %s; it must be int32 on %s"
                                       % (name, t.dtype, t.device, x.device))
    k = registry.columns(op, "x", x)
    n = qweight.shape[-1]
    groups = scales.shape[0] if scales.dim() == 2 else 0
    if (qweight.dim() != 2 or k % 8 or qweight.shape[0] != k // 8 or scales.dim() != 2 or scales.shape[1] != n
            or groups == 0 or qzeros.dim() != 2 or tuple(qzeros.shape) != (groups, (n + 7) // 8)):
        raise registry.LaunchError(
            "hk.ops.gptq_gemm: x [..., %d], qweight %s, scales %s, qzeros %s: qweight is [K/8, N] (K a multiple "
            "of 8), scales [G, N] and qzeros [G, N/8]" % (k, tuple(qweight.shape), tuple(scales.shape),
                                                          tuple(qzeros.shape)))
    consecutive = None  # the group size of consecutive groups the fast kernel takes
    if g_idx.numel() == 0:
        if k % groups:
            raise registry.LaunchError("hk.ops.gptq_gemm: %d groups do not divide K = %d; pass g_idx" % (groups, k))
        if (k // groups) % 8:
            raise registry.LaunchError("hk.ops.gptq_gemm: groups of %d rows; consecutive groups are a multiple of 8 "
                                       "rows" % (k // groups), hint="pass g_idx")
        consecutive = k // groups
    elif tuple(g_idx.shape) != (k,):
        raise registry.LaunchError("hk.ops.gptq_gemm: g_idx has shape %s; it is [K] = [%d] (or empty)"
                                   % (tuple(g_idx.shape), k))
    arch = registry.launch_arch()
    if arch in ONE_GROUP_PER_STEP and (consecutive is None or consecutive % (8 * WORDS)):
        raise registry.LaunchError(
            "hk.ops.gptq_gemm: on %s the groups are consecutive and a multiple of %d rows; these are %s"
            % (arch, 8 * WORDS, "by g_idx (act-order)" if consecutive is None else "of %d rows" % consecutive),
            hint="pass an empty g_idx where the groups are consecutive (desc_act=False), or dequantize once and "
                 "use hk.ops.linear")
    if tuple(out.shape) != tuple(x.shape[:-1]) + (n,):
        raise registry.LaunchError("hk.ops.gptq_gemm: out has shape %s, not %s"
                                   % (tuple(out.shape), tuple(x.shape[:-1]) + (n,)))
    m = out.numel() // n if n else 0
    if m == 0:
        return
    x2 = registry.rows(op, "x", x, k)
    planes = x2.view(m, k // 8, 8).permute(2, 0, 1).contiguous()          # [8, M, K/8]
    zs = torch.stack([unpack_zeros(qzeros, n, use_v2_format).float(), scales.float()])
    o = registry.rows(op, "out", out, n, writable=True)
    if consecutive:
        gptq_kernel(dtype, consecutive)(planes, qweight.contiguous(), zs, o)
        return
    gptq_kernel(dtype)(planes, qweight.contiguous(), g_idx.contiguous().view(k // 8, 8), zs, o)


def reference(x, qweight, qzeros, scales, g_idx, use_v2_format=False):
    """The dequantized product in torch: W in fp32, rounded to x's dtype, then x · W in fp32."""
    k, n = x.shape[-1], qweight.shape[1]
    if g_idx.numel() == 0:
        g_idx = torch.arange(k, device=x.device) // (k // scales.shape[0])
    shifts = torch.arange(0, 32, 4, dtype=torch.int32, device=qweight.device)
    q = ((qweight.unsqueeze(1) >> shifts.view(1, 8, 1)) & 0xF).reshape(k, n)
    g = g_idx.long()
    zeros = unpack_zeros(qzeros, n, use_v2_format)[g]
    w = ((q - zeros).float() * scales.float()[g]).to(x.dtype)
    return (x.float() @ w.float()).to(x.dtype)


def _shape(x, qweight):
    if qweight.dim() != 2:
        raise registry.LaunchError("hk.ops.gptq_gemm: qweight has shape %s; it must be [K / 8, N]"
                                   % (tuple(qweight.shape),))
    return tuple(x.shape[:-1]) + (qweight.shape[-1],)


def _gptq(x, qweight, qzeros, scales, g_idx, use_v2_format=False):
    out = torch.empty(_shape(x, qweight), dtype=x.dtype, device=x.device)
    launch_gptq(x, qweight, qzeros, scales, g_idx, use_v2_format, out)
    return out


def _gptq_out(out, x, qweight, qzeros, scales, g_idx, use_v2_format=False):
    launch_gptq(x, qweight, qzeros, scales, g_idx, use_v2_format, out)


OPS = {
    "gptq_gemm": registry.define(
        "gptq_gemm", "(Tensor x, Tensor qweight, Tensor qzeros, Tensor scales, Tensor g_idx, "
        "bool use_v2_format=False) -> Tensor", _gptq,
        lambda x, qweight, qzeros, scales, g_idx, use_v2_format=False: torch.empty(
            _shape(x, qweight), dtype=x.dtype, device=x.device)),
    "gptq_gemm_out": registry.define(
        "gptq_gemm_out", "(Tensor(a!) out, Tensor x, Tensor qweight, Tensor qzeros, Tensor scales, Tensor g_idx, "
        "bool use_v2_format=False) -> ()", _gptq_out,
        lambda out, x, qweight, qzeros, scales, g_idx, use_v2_format=False: None, mutates=("out",)),
}
