"""The W4A16 GEMM for AWQ checkpoints: out = x · W with W dequantized from 4-bit weights on the
fly, as vLLM's awq_gemm computes it.

    awq_gemm(x, qweight, scales, qzeros) -> out
        x [..., K] fp16 or bf16; qweight [K, N/8] int32, each word 8 columns' 4-bit weights in
        AWQ's order (column 8j + c in the nibble at bits 4·REVERSE_ORDER[c]); qzeros [K/G, N/8]
        int32, the zero points packed the same way; scales [K/G, N] in x's dtype; group size G
        = K / scales.shape[0], a multiple of 16 (AWQ's are 32 to 128).
        W[k, n] = (q[k, n] - z[k/G, n]) · s[k/G, n].
    awq_gemm_out(out, x, qweight, scales, qzeros)

A wave owns 16 rows of x and 16 packed columns (128 columns of out). It loads each 16 x 16 tile
of packed words once (16 rows of K per step keep the 8 accumulators and the dequantized tiles
within gfx11's registers), through LDS into the row layout (a lane per column, so that the
conversion to the col layout of a matrix operand stays in the lane), and for each of the 8 nibble
positions extracts, dequantizes (fp32, then rounded to x's dtype, as the reference dequantizes)
and multiplies: 8 accumulators, one per position c, hold out's columns 8j + c. They are written
as 8 planes ([8, M, N/8]) that the op interleaves into out. A group's zero points and scales are
read once for its steps.

A decode (up to 32 rows of x) splits K into parts of whole groups, one workgroup per part and
tile, writing fp32 planes that a second kernel adds in one order: a single part leaves a few
dozen workgroups to stream the whole weight, which hk.perf predicts to be latency-bound (4.8 ms
for Qwen3-8B's four linears at one token on gfx1100, 0.33 ms split). How many parts is a
schedule choice: AWQ_GEMM is the Tunable hk-tune searches (per target and bucket of M 1-32 by N,
K and G) and hk/tuned/<arch>.json ships; without a tuned choice, split_k's rule.
"""

import functools
import os

import torch

import hk
from hk import tuned
from hk.autotune.space import space
from hk.autotune.tunable import Launch, Tunable
from hk.ops import gemm, registry

# The nibble of column 8j + c of a packed word is at bits 4 * REVERSE_ORDER[c] (AWQ packs
# columns 0, 2, 4, 6, 1, 3, 5, 7 into nibbles 0..7).
REVERSE_ORDER = (0, 4, 1, 5, 2, 6, 3, 7)
BK = 16  # K per step: a group is a whole number of steps
# Decode's split-K: up to DECODE_ROWS rows of x, K in parts of whole groups, enough parts for
# about SPLIT_WORKGROUPS single-wave workgroups in all (of 512 to 4096, hk.perf's best for
# Qwen3-8B's linears at one token on gfx1100).
DECODE_ROWS, SPLIT_WORKGROUPS = 32, 1024
# The sum of the parts: 16 x SUM_COLS tiles, SUM_UNROLL parts' loads in flight at once.
SUM_COLS, SUM_UNROLL = 16, 4


@functools.lru_cache(maxsize=None)
def awq_kernel(dtype, G, split=False):
    """x's dtype (bf16 or fp16) and the group size G (a multiple of BK). split=True gives the
    split-K kernel: the fp32 planes of `per` groups of K at each batch index of its output, which
    split_sum_kernel adds (a decode's few rows of x over a long K, spread over many workgroups)."""
    if G % BK:
        raise ValueError("the group size is a multiple of %d, not %d" % (BK, G))

    @hk.func
    def product(x, q, z, s, planes, split=None):
        # x [M, K]; q [K, N/8]; z [K/G, N/8]; s [8, K/G, N/8] (plane c: the scales of columns
        # 8j + c); planes [8, M, N/8] (plane c: out's columns 8j + c), or with split = (its
        # index, groups of K per part): [parts, 8, M, N/8] fp32, this part's at its index.
        bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
        per_group = G // BK  # steps of K per group
        g0, groups = gemm.split_part(hk.cdiv(x.cols, G), split)
        accs = [hk.zeros(hk.RT(hk.fp32, 16, 16)) for _ in range(8)]
        # The words pass through LDS, issued a step ahead: read back in row layout (a lane per
        # column, as the dequantized operand's col layout has them, so its conversion stays in
        # the lane), where a load in that layout would be a load per word.
        q_lds = hk.lds.alloc(hk.ST(hk.i32, BK, 16))
        hk.lds.commit(q_lds, 0, hk.lds.issue(q_lds, q, hk.tile_coord(0, 0, g0 * per_group, bx)))
        hk.arch.barrier()
        for gi in hk.range(groups):
            # A group's zero points and scales, read once for its steps.
            g = g0 + gi
            zeros = z[0, 0, g, bx].load(hk.RV(hk.i32, 16, "row"))
            zcs = [((zeros >> 4 * r) & 0xF).to(hk.fp32) for r in REVERSE_ORDER]
            scs = [s[c, 0, g, bx].load(hk.RV(dtype, 16, "row")).to(hk.fp32) for c in range(8)]
            for step in hk.range(per_group):
                kt = g * per_group + step
                xa = x[0, 0, by, kt].load(hk.RT(dtype, 16, BK))
                words = q_lds[0].load(hk.RT(hk.i32, BK, 16, "row"))
                following = hk.lds.issue(q_lds, q, hk.tile_coord(0, 0, kt + 1, bx))
                products = []  # (a new list: the loop carries the name accs)
                for c, r in enumerate(REVERSE_ORDER):
                    w = ((words >> 4 * r) & 0xF).to(hk.fp32)
                    w = hk.mul_col(hk.sub_col(w, zcs[c]), scs[c]).to(dtype, "col", finite=True)  # (finite weights)
                    products.append(hk.mma_AB(xa, w, accs[c]))
                accs = products
                hk.arch.barrier()
                hk.lds.commit(q_lds, 0, following)
                hk.arch.barrier()
        for c in range(8):
            if split is None:
                planes[c, 0, by, bx] = accs[c].to(dtype)
            else:
                planes[split[0], c, by, bx] = accs[c]

    name = "awq_gemm_%s_g%d" % (dtype.name, G)
    if split:
        @hk.kernel(grid=lambda p: (hk.cdiv(p.parts.cols, 16), hk.cdiv(p.parts.rows, 16), p.parts.batch),
                   name=name + "_split")
        def awq_gemm_split(x: hk.Tensor[dtype], q: hk.Tensor[hk.i32], z: hk.Tensor[hk.i32], s: hk.Tensor[dtype],
                           parts: hk.Tensor[hk.fp32], per: int):
            product(x, q, z, s, parts, split=(hk.arch.block_idx.z, per))

        return awq_gemm_split

    @hk.kernel(grid=lambda p: (hk.cdiv(p.planes.cols, 16), hk.cdiv(p.planes.rows, 16)), name=name)
    def awq_gemm(x: hk.Tensor[dtype], q: hk.Tensor[hk.i32], z: hk.Tensor[hk.i32], s: hk.Tensor[dtype],
                 planes: hk.Tensor[dtype]):
        product(x, q, z, s, planes)

    return awq_gemm


@functools.lru_cache(maxsize=None)
def sum_kernel(dtype):
    """planes = the sum of parts [splits, 8 * M, N/8] over the splits, in `dtype`, in one fixed
    order. Narrow tiles and an unrolled loop: a decode's planes are a few rows, and each
    workgroup's loads of its parts are in flight together."""

    @hk.kernel(grid=lambda p: (hk.cdiv(p.planes.cols, SUM_COLS), hk.cdiv(p.planes.rows, 16)),
               name="awq_sum_%s" % dtype.name)
    def awq_sum(parts: hk.Tensor[hk.fp32], planes: hk.Tensor[dtype]):
        bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
        acc = hk.zeros(hk.RT(hk.fp32, 16, SUM_COLS))
        for i in hk.range(parts.batch, unroll=SUM_UNROLL):
            acc = acc + parts[i, 0, by, bx].load(hk.RT(hk.fp32, 16, SUM_COLS))
        planes[0, 0, by, bx] = acc.to(dtype)

    return awq_sum



def split_k(m, n, k, g):
    """(parts, groups per part) of an m x n x k product with groups of g: (1, all) unless it is
    a decode's."""
    groups = k // g
    if m > DECODE_ROWS:
        return 1, groups
    tiles = -(-m // 16) * -(-n // 128)
    want = max(1, min(SPLIT_WORKGROUPS // tiles, groups))
    per = -(-groups // want)
    return -(-groups // per), per


# Tuning -----------------------------------------------------------------------------------------

# Decode's split of K as a candidate of its launches (the split product and the sum of its parts,
# or one unsplit product), per bucket of M 1-32 by N, K and the group size. `parts` 0 is
# split_k's rule (today's choice), P > 0 cuts K's groups into P runs (fewer when a run would be
# empty; 1 is the unsplit kernel). A shape is (M, N, K, G) or (M, N, K, G, "bf16"): AWQ's
# checkpoints run in fp16.

def awq_space(target):
    """The decode's parts of K (the rule's choice at 0): the only schedule choice of a kernel
    whose tile is fixed by gfx11's registers."""
    return space(parts=[0, 1, 2, 4, 8, 16, 32, 64, 128])


def awq_shape(shape):
    """(M, N, K, G, dtype name) of an AWQ product's shape."""
    m, n, k, g, *rest = shape
    return int(m), int(n), int(k), int(g), rest[0] if rest else "fp16"


def awq_bucket(shape):
    m, n, k, g, dtype = awq_shape(shape)
    return gemm.linear_bucket((m, n, k, dtype)).replace(dtype, "%s G=%d" % (dtype, g), 1)


def split_plan(knobs, shape):
    """(parts, groups of K per part) of a decode's product under `knobs` ({} or None: split_k's
    rule) at an AWQ shape."""
    m, n, k, g, _ = awq_shape(shape)
    if m > DECODE_ROWS:
        raise ValueError("AWQ's split of K is a decode's: M up to %d rows, not %d" % (DECODE_ROWS, m))
    return gemm.split_runs(dict(knobs or {}).get("parts", 0), k // g, lambda: split_k(m, n, k, g))


def _launches(dtype, g, operands, planes, splits, per):
    """[Launch] of a product: one unsplit kernel, or the split kernel and the sum of its parts
    (which it reads as [splits, 1, 8 * M, N/8]: one tensor, viewed)."""
    if splits == 1:
        return [Launch(awq_kernel(dtype, g), {}, operands + (planes,))]
    x = operands[0]
    eight, m, packed = planes.shape
    parts = torch.empty(splits, eight, m, packed, dtype=torch.float32, device=x.device)
    return [Launch(awq_kernel(dtype, g, split=True), {}, operands + (parts, per)),
            Launch(sum_kernel(dtype), {}, (parts.view(splits, 1, eight * m, packed), planes.view(eight * m, packed)))]


def _tuning_launches(config, shape):
    m, n, k, g, name = awq_shape(shape)
    dtype, meta = getattr(hk, name), dict(device="meta")
    t = getattr(torch, dtype.torch_name)
    operands = (torch.empty(m, k, dtype=t, **meta), torch.empty(k, n // 8, dtype=torch.int32, **meta),
                torch.empty(k // g, n // 8, dtype=torch.int32, **meta), torch.empty(8, k // g, n // 8, dtype=t, **meta))
    planes = torch.empty(8, m, n // 8, dtype=t, **meta)
    return _launches(dtype, g, operands, planes, *split_plan(config.as_dict(), shape))


AWQ_GEMM = Tunable(
    name="awq_gemm", space=awq_space, knobs=frozenset(("parts",)), launches=_tuning_launches,
    default=lambda arch: {"parts": 0}, bucket=awq_bucket,
    describe=lambda shape: "%s M=%d N=%d K=%d G=%d" % (awq_shape(shape)[4], *awq_shape(shape)[:4]),
    sources=(os.path.abspath(__file__), gemm.__file__))


# torch operators -------------------------------------------------------------------------------

def launch_awq(x, qweight, scales, qzeros, out):
    op = "awq_gemm"
    dtype = registry.dtype_of(op, x, (torch.bfloat16, torch.float16))
    registry.same(op, "scales", scales, x)
    registry.same(op, "out", out, x)
    k = registry.columns(op, "x", x)
    for name, t in (("qweight", qweight), ("qzeros", qzeros)):
        if t.dtype != torch.int32 or t.dim() != 2 or t.device != x.device:
            raise registry.LaunchError("hk.ops.awq_gemm: %s is %s %s on %s; it must be 2-D int32 on %s"
                                       % (name, t.dtype, tuple(t.shape), t.device, x.device))
    packed = qweight.shape[1]
    n = packed * 8
    groups = scales.shape[0] if scales.dim() == 2 else 0
    if (qweight.shape[0] != k or scales.dim() != 2 or scales.shape[1] != n or tuple(qzeros.shape) != (groups, packed)
            or groups == 0 or k % groups or (k // groups) % BK):
        raise registry.LaunchError(
            "hk.ops.awq_gemm: x [..., %d], qweight %s, scales %s, qzeros %s: qweight is [K, N/8], scales "
            "[K/G, N] and qzeros [K/G, N/8], with the group size G a multiple of %d"
            % (k, tuple(qweight.shape), tuple(scales.shape), tuple(qzeros.shape), BK))
    if tuple(out.shape) != tuple(x.shape[:-1]) + (n,):
        raise registry.LaunchError("hk.ops.awq_gemm: out has shape %s, not %s"
                                   % (tuple(out.shape), tuple(x.shape[:-1]) + (n,)))
    m = out.numel() // n if n else 0
    if m == 0:
        return
    planes = torch.empty(8, m, packed, dtype=x.dtype, device=x.device)
    # The scales of position c as a plane [K/G, N/8], so that a row vector of 16 reads 16 packed
    # columns' scales (a copy of 1/(4G) of the weight's bytes).
    scale_planes = scales.view(groups, packed, 8).permute(2, 0, 1).contiguous()
    operands = (registry.rows(op, "x", x, k), qweight.contiguous(), qzeros.contiguous(), scale_planes)
    g = k // groups
    if m > DECODE_ROWS:
        awq_kernel(dtype, g)(*operands, planes)
    else:
        # Decode: the planes of each part of K in fp32, added by a second kernel in one order;
        # the parts are the bucket's tuned choice on the launch's target, else split_k's rule.
        shape = (m, n, k, g, dtype.name)
        arch = tuned.launch_arch()

        def run(knobs):
            for launch in _launches(dtype, g, operands, planes, *split_plan(knobs, shape)):
                launch.kernel(*launch.args, arch=arch, **launch.constants)

        tuned.launch(AWQ_GEMM, shape, run, arch)
    out.view(m, n).copy_(planes.permute(1, 2, 0).reshape(m, n))


def reference(x, qweight, scales, qzeros):
    """The dequantized product in torch: W in fp32, rounded to x's dtype, then x · W in fp32."""
    shifts = torch.tensor(REVERSE_ORDER, dtype=torch.int32, device=qweight.device) * 4

    def unpack(t):
        return ((t.unsqueeze(-1) >> shifts) & 0xF).reshape(t.shape[0], -1)

    g = qweight.shape[0] // scales.shape[0]
    zeros = unpack(qzeros).repeat_interleave(g, 0).float()
    w = ((unpack(qweight).float() - zeros) * scales.float().repeat_interleave(g, 0)).to(x.dtype)
    return (x.float() @ w.float()).to(x.dtype)


def _awq(x, qweight, scales, qzeros):
    out = torch.empty(tuple(x.shape[:-1]) + (qweight.shape[1] * 8,), dtype=x.dtype, device=x.device)
    launch_awq(x, qweight, scales, qzeros, out)
    return out


def _awq_out(out, x, qweight, scales, qzeros):
    launch_awq(x, qweight, scales, qzeros, out)


OPS = {
    "awq_gemm": registry.define(
        "awq_gemm", "(Tensor x, Tensor qweight, Tensor scales, Tensor qzeros) -> Tensor", _awq,
        lambda x, qweight, scales, qzeros: torch.empty(tuple(x.shape[:-1]) + (qweight.shape[1] * 8,), dtype=x.dtype,
                                                       device=x.device)),
    "awq_gemm_out": registry.define(
        "awq_gemm_out", "(Tensor(a!) out, Tensor x, Tensor qweight, Tensor scales, Tensor qzeros) -> ()", _awq_out,
        lambda out, x, qweight, scales, qzeros: None, mutates=("out",)),
}
