"""The GEMM: C = A·Bᵀ (and A·B) on the matrix cores (WMMA on RDNA, MFMA on CDNA) at the
hardware's instruction budget, with its schedule as constants; and the linear layer as an op.

A is M x K and B is N x K (or K x N), both row-major 16-bit with any row stride; C is M x N,
accumulated in fp32 and written in C's dtype, optionally plus a bias per column. The schedule:

  - a workgroup of `waves` waves owns a BM x BN tile of C, the waves in waves/2 rows of two,
    each a (BM / (waves/2)) x (BN/2) part (64 x 64 by default);
  - K advances BK at a time through two LDS buffers: while the waves multiply the tile in one
    buffer, the next tile's global loads are in flight (hk.lds.issue), and they are written
    into the other buffer (hk.lds.commit) before the barrier that ends the step;
  - each step reads its operands from LDS KSTEP columns at a time, in row layout (the 128-bit
    LDS reads), and runs mma_ABt;
  - hk.range(..., unroll=UNROLL) holds UNROLL (even) steps per loop iteration, so the buffer
    index k % 2 is a constant in each and every LDS address is a register plus an immediate.

Every wait is derived. The tensors' divisors (what a call knows of their alignment) pick the
loads: 16-byte rows move in one 128-bit load per chunk, and when K is a multiple of BK no column
is ever tested; narrower rows move in pieces of the divisor, and linear then runs BN = 64
(PIECES).

    linear(x, weight, bias=None)    x @ weightᵀ (+ bias): x [..., K], weight [N, K] (rows may be
                                    padded, as vLLM pads gfx11 weights to K + 64), bf16 or fp16

A decode's linear (up to 32 rows of x, a long K) would run a handful of workgroups, each reading
its columns of the weight over all of K: it runs split-K instead (split_k: K in parts over about
128 workgroups, 32 rows each), its fp32 parts (a workspace from torch's allocator) summed with
the bias by split_sum_kernel in one fixed order, so that results do not depend on timing.

The other linears take the schedule hk/tuned/<arch>.json records for their bucket (LINEAR: the
space searched, the buckets of M by N and K), else the default above; a decode's split-K takes
the parts and schedule recorded for its bucket (SPLIT_K: M 1-32 by N and K), else the rule of
split_k and the split kernel's defaults.
"""

import functools
import os

import torch

import hk
from hk import tuned
from hk.autotune.space import space
from hk.autotune.tunable import Launch, Tunable
from hk.ops import registry
from hk.runtime import device, launch
from hk.types import MAX_DIVISOR, divisor_of

# A·B's schedule by target (the defaults elsewhere): gfx950's 160 KiB of LDS hold K 64 at a time
# for 256 x 128 tiles, and four steps per iteration halve the loop's own instructions.
AB_SCHEDULE = {"gfx950": {"BK": 64, "UNROLL": 4}}
# The schedule for operands whose rows are not 16-byte multiples (K not a multiple of 8): the
# copies read them in pieces, whose offsets and column tests take the registers of half of C's
# tile.
PIECES = {"BN": 64}


def in_pieces(*tensors):
    """Whether a copy reads some of these tensors' rows in pieces (hk.types.divisor_of)."""
    for t in tensors:
        size = t.element_size()
        if _divisor(t.shape, t.stride(), t.data_ptr() & ALIGN_BITS, size) * size % 16:
            return True
    return False


# divisor_of reads an address modulo MAX_DIVISOR elements (of up to 8 bytes): these bits.
ALIGN_BITS = MAX_DIVISOR * 8 - 1
_divisor = functools.lru_cache(maxsize=4096)(divisor_of)  # a launch's layouts repeat


def widest_k(dtype):
    """The widest K of the traced target's 16 x 16 matrix instruction for `dtype` (CDNA4: 32).
    (The target's facts name an fp8 instruction by its format's OCP name.)"""
    name = dtype.name.replace("fnuz", "")
    return max(s.k for s in hk.arch.target().mma_shapes if s.a == name and s.m == 16)


@hk.func
def accumulate(a, b, dtype, waves, b_major, BM, BN, BK, KSTEP, UNROLL, bx, by, wm, wn, split=None,
               convert=None, group=None, group_steps=1):
    """gemm_kernel's K loop: the (BM / (waves/2)) x (BN/2) part (wm, wn) of C = A·Bᵀ (B N x K),
    or of A·B (`b_major`: B K x N), that wave (wm, wn) of workgroup (bx, by) (x along N, y
    along M) owns, accumulated in fp32 (int32 for int8 operands). `split` (its index, K steps
    per split): the part from those steps of K only. `convert` (A·Bᵀ only): a pair of functions
    (None: as read) taking A's and B's register tiles as read from LDS to `dtype` operands; each
    operand is then staged in its tensor's own dtype (an fp8 weight moves half the bytes of a
    16-bit one). `group(prod, g)`: the product of each group of `group_steps` steps of BK
    (block scales: a group of K), accumulated from zero, passes through it before it is added
    to the sum; K must then be a multiple of the group (no split). A group of several steps
    keeps each step's operand tiles few: the compiler hoists a step's LDS reads together."""
    KSTEP = KSTEP or widest_k(dtype)
    WM = waves // 2  # rows of waves
    # B as stored (K x N), read in col layout by the transposing LDS read.
    b_cols = b_major and hk.arch.target().lds_transpose_read is not None
    a_type, b_type = (dtype, dtype) if convert is None else (a.dtype, b.dtype)
    a_lds = hk.lds.alloc(hk.ST(a_type, BM, BK, 2))
    b_lds = hk.lds.alloc(hk.ST(dtype, BK, BN, 2) if b_cols else hk.ST(b_type, BN, BK, 2))
    transpose = b_major and not b_cols

    def b_tile(k):
        return hk.tile_coord(0, 0, k, bx) if b_major else hk.tile_coord(0, 0, bx, k)

    def step(k, kt, prod, then=None):
        # Step k of the loop (K step kt): its tiles' products added to prod (then passed through
        # `then`), the next step's tiles (zeros past the last) in flight while this step multiplies.
        buf = k % 2
        a_next = hk.lds.issue(a_lds, a, hk.tile_coord(0, 0, by, kt + 1))
        b_next = hk.lds.issue(b_lds, b, b_tile(kt + 1), transpose=transpose)
        for kk in range(BK // KSTEP):
            ta = a_lds[buf].subtile(BM // WM, KSTEP, wm, kk).load(hk.RT(a_type, BM // WM, KSTEP))
            if b_cols:
                tb = b_lds[buf].subtile(KSTEP, BN // 2, kk, wn).load(hk.RT(dtype, KSTEP, BN // 2, "col"))
                prod = hk.mma_AB(ta, tb, prod)
            else:
                tb = b_lds[buf].subtile(BN // 2, KSTEP, wn, kk).load(hk.RT(b_type, BN // 2, KSTEP))
                if convert is not None and convert[0] is not None:
                    ta = convert[0](ta)
                if convert is not None and convert[1] is not None:
                    tb = convert[1](tb)
                prod = hk.mma_ABt(ta, tb, prod)
        if then is not None:
            prod = then(prod)
        hk.lds.commit(a_lds, 1 - buf, a_next)
        hk.lds.commit(b_lds, 1 - buf, b_next)
        hk.arch.barrier()
        return prod

    acc = hk.zeros(hk.RT(hk.i32 if dtype == hk.i8 else hk.fp32, BM // WM, BN // 2))
    k0, steps = split_part(hk.cdiv(a.cols, BK), split)
    hk.lds.commit(a_lds, 0, hk.lds.issue(a_lds, a, hk.tile_coord(0, 0, by, k0)))
    hk.lds.commit(b_lds, 0, hk.lds.issue(b_lds, b, b_tile(k0), transpose=transpose))
    hk.arch.barrier()
    if group is None:
        for k in hk.range(steps, unroll=UNROLL):
            acc = step(k, k0 + k, acc)
    elif group_steps == 1:
        for k in hk.range(steps, unroll=UNROLL):
            acc = step(k, k0 + k, hk.zeros(acc.spec), lambda prod, acc=acc, k=k: acc + group(prod, k0 + k))
    else:
        if split is not None:
            raise ValueError("a group of several K steps takes no split")
        for g in hk.range(steps // group_steps):
            # (A barrier in this loop's own body: the race check then knows every wave is in the
            # same group between barriers.)
            hk.arch.barrier()
            prod = hk.zeros(acc.spec)
            for j in hk.range(group_steps, unroll=UNROLL):
                kt = g * group_steps + j
                prod = step(kt, kt, prod)
            acc = acc + group(prod, g)
    return acc


@functools.lru_cache(maxsize=None)
def gemm_kernel(dtype=hk.bf16, out=hk.fp32, form="ABt", with_bias=False, waves=None, split=False):
    """The fast kernel for `dtype` operands (bf16 or fp16) and an `out` C: C = A·Bᵀ with B N x K
    (form "ABt"), or C = A·B with B K x N (form "AB"). A·B needs B's columns along each lane:
    where the target reads LDS transposed (gfx950) B's tiles are stored as they are and read in
    col layout; elsewhere they are written into LDS transposed, one 16-bit write per element,
    and the MMAs are those of A·Bᵀ. A·B runs 8 waves (256 x 128 tiles) by default and A·Bᵀ 4
    (128 x 128): B's tile is shared by twice the waves, so each writes half as many of B's
    elements per MMA, and holds half the staging registers. With `with_bias` the kernel takes a
    bias after B (one value per column of C, in `dtype`), added in fp32 before C is written.
    KSTEP 0 is the widest K of the target's matrix instruction for `dtype`. Operands whose rows
    are not 16-byte multiples fit every target's registers with the constants PIECES.

    split=True gives the split-K kernel instead (out fp32, no bias): C's part from `per` K steps
    at each batch index of its output, 32 rows of C per workgroup by default; split_sum_kernel
    sums the parts. What decode (a few rows of A, a long K) needs to spread the weight's reads
    over many workgroups."""
    if form not in ("ABt", "AB"):
        raise ValueError("form is 'ABt' or 'AB', not %r" % (form,))
    if split and (with_bias or out != hk.fp32):
        raise ValueError("the split-K kernel writes fp32 parts with no bias (split_sum_kernel adds it)")
    name = "gemm" if (dtype, out, form, with_bias) == (hk.bf16, hk.fp32, "ABt", False) else "gemm_%s_%s_%s%s" % (
        form, dtype.name, out.name, "_bias" if with_bias else "")
    b_major = form == "AB"
    default_waves = 8 if b_major else 4
    waves = waves or default_waves
    if waves % 2 or waves < 2:
        raise ValueError("waves is an even number (rows of two waves), not %r" % (waves,))
    if waves != default_waves:
        name += "_w%d" % waves

    @hk.func
    def product(a, b, bias, c, BM, BN, BK, KSTEP, UNROLL, split=None):
        # split: (its index, K steps per split): C's part from those steps of K only, written
        # at batch index `split` of c (summed by split_sum_kernel).
        bx, by, w = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id()
        WM, wm, wn = waves // 2, w // 2, w % 2
        acc = accumulate(a, b, dtype, waves, b_major, BM, BN, BK, KSTEP, UNROLL, bx, by, wm, wn, split)
        part = 0 if split is None else split[0]
        if bias is not None:
            acc = hk.add_col(acc, bias[0, 0, 0, bx * 2 + wn].load(hk.RV(dtype, BN // 2, "row")).to(hk.fp32))
        c[part, 0, by * WM + wm, bx * 2 + wn] = acc if out == acc.spec.dtype else acc.to(out)

    grid = lambda p: (hk.cdiv(p.c.cols, p.BN), hk.cdiv(p.c.rows, p.BM))  # noqa: E731
    schedule = AB_SCHEDULE if b_major else None
    if with_bias:
        @hk.kernel(grid=grid, warps=waves, name=name, schedule=schedule)
        def gemm(a: hk.Tensor[dtype], b: hk.Tensor[dtype], bias: hk.Tensor[dtype], c: hk.Tensor[out], *,
                 BM=32 * waves, BN=128, BK=32, KSTEP=0, UNROLL=2):
            product(a, b, bias, c, BM, BN, BK, KSTEP, UNROLL)
    else:
        @hk.kernel(grid=grid, warps=waves, name=name, schedule=schedule)
        def gemm(a: hk.Tensor[dtype], b: hk.Tensor[dtype], c: hk.Tensor[out], *,
                 BM=32 * waves, BN=128, BK=32, KSTEP=0, UNROLL=2):
            product(a, b, None, c, BM, BN, BK, KSTEP, UNROLL)

    if split:
        # C's parts from runs of K: parts [splits, M, N] fp32, `per` K steps each.
        @hk.kernel(grid=lambda p: (hk.cdiv(p.parts.cols, p.BN), hk.cdiv(p.parts.rows, p.BM), p.parts.batch),
                   warps=waves, name=name + "_split", schedule=schedule)
        def gemm_split(a: hk.Tensor[dtype], b: hk.Tensor[dtype], parts: hk.Tensor[hk.fp32], per: int, *,
                       BM=32, BN=128, BK=32, KSTEP=0, UNROLL=2):
            product(a, b, None, parts, BM, BN, BK, KSTEP, UNROLL, split=(hk.arch.block_idx.z, per))

        return gemm_split
    return gemm


@functools.lru_cache(maxsize=None)
def split_sum_kernel(out=hk.bf16, with_bias=False):
    """c = the sum of parts [splits, M, N] over the splits (+ bias per column), in `out`: the
    cross-workgroup reduction of a split-K product, in one fixed order (deterministic)."""
    name = "split_sum_%s%s" % (out.name, "_bias" if with_bias else "")

    @hk.func
    def total(parts, bias, c):
        bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        for s in hk.range(parts.batch):
            acc = acc + parts[s, 0, by, bx].load(hk.RT(hk.fp32, 16, 64))
        if bias is not None:
            acc = hk.add_col(acc, bias[0, 0, 0, bx].load(hk.RV(out, 64, "row")).to(hk.fp32))
        c[0, 0, by, bx] = acc.to(out)

    grid = lambda p: (hk.cdiv(p.c.cols, 64), hk.cdiv(p.c.rows, 16))  # noqa: E731
    if with_bias:
        @hk.kernel(grid=grid, name=name)
        def split_sum(parts: hk.Tensor[hk.fp32], bias: hk.Tensor[out], c: hk.Tensor[out]):
            total(parts, bias, c)
    else:
        @hk.kernel(grid=grid, name=name)
        def split_sum(parts: hk.Tensor[hk.fp32], c: hk.Tensor[out]):
            total(parts, None, c)
    return split_sum


# Decode's split-K: up to DECODE_ROWS rows of x, K in parts of at least SPLIT_STEPS steps of
# BK = 32, enough parts for about SPLIT_WORKGROUPS workgroups in all.
DECODE_ROWS, SPLIT_STEPS, SPLIT_WORKGROUPS = 32, 8, 128


def split_part(steps, split):
    """(first step, steps) of K a workgroup takes: all of them, or with split = (its part's index,
    steps per part) its part's, none past the end (traced: both may be runtime values)."""
    if split is None:
        return 0, steps
    part, per = split
    first = part * per
    return first, hk.maximum(hk.minimum(steps - first, per), 0)


def split_runs(parts, units, rule):
    """(runs, units per run) of a tuned choice's `parts`: 0 is the op's rule (`rule()`), P > 0
    cuts `units` (K's steps or groups) into P runs, fewer when a run would be empty."""
    if type(parts) is not int or parts < 0:
        raise ValueError("parts is 0 (split_k's rule) or a positive number of parts, not %r" % (parts,))
    if parts == 0:
        return rule()
    per = -(-units // parts)
    return -(-units // per), per


def split_k(m, n, k, bn=128, bk=32):
    """(parts, steps per part) for an m x n x k product: (1, all) unless it is a decode's."""
    steps = -(-k // bk)
    if m > DECODE_ROWS:
        return 1, steps
    want = max(1, min(SPLIT_WORKGROUPS // -(-n // bn), steps // SPLIT_STEPS))
    per = -(-steps // want)
    return -(-steps // per), per


# Tuning -----------------------------------------------------------------------------------------

# The upper ends of the buckets of M a linear's schedule is tuned and looked up by (N and K exact).
M_BUCKETS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def linear_space(target):
    """The GEMM's knobs on a target: waves per workgroup, C's tile, K's step, steps per loop
    iteration; the constraints keep the candidates that can build, so that the gates refuse
    few."""
    return space(
        waves=[4, 8], BM=[64, 128, 256], BN=[64, 128, 256], BK=[32, 64], UNROLL=[2, 4],
        where=[
            # each row of waves owns whole 16-row tiles of C; each wave of a row half of BN
            lambda c: c.BM % (16 * (c.waves // 2)) == 0 and c.BN % 32 == 0,
            # two buffers of A's and B's tiles in the LDS
            lambda c: 2 * 2 * (c.BM + c.BN) * c.BK <= target.lds_bytes,
            # C's accumulator in at most half of a lane's 256 VGPRs: the rest stage the copies
            lambda c: (c.BM // (c.waves // 2)) * (c.BN // 2) // target.wave_size <= 128,
        ])


def _linear_shape(shape):
    """(M, N, K, dtype name) of a linear's shape (M, N, K) or (M, N, K, "fp16")."""
    m, n, k, *rest = shape
    return int(m), int(n), int(k), rest[0] if rest else "bf16"


def linear_bucket(shape):
    m, n, k, dtype = _linear_shape(shape)
    low = 0
    for high in M_BUCKETS:
        if m <= high:
            return "%s N=%d K=%d M=%d-%d" % (dtype, n, k, low + 1, high)
        low = high
    return "%s N=%d K=%d M>%d" % (dtype, n, k, M_BUCKETS[-1])


def _linear_arguments(shape):
    m, n, k, dtype = _linear_shape(shape)
    t = getattr(torch, getattr(hk, dtype).torch_name)
    return (torch.empty(m, k, dtype=t, device="meta"), torch.empty(n, k, dtype=t, device="meta"),
            torch.empty(m, n, dtype=t, device="meta"))


def _linear_kernel(knobs, shape, with_bias=False):
    """(the GEMM kernel, its constants) for `knobs` (waves picks the kernel, the rest are its
    constants) at a shape's dtype."""
    knobs = tuple(dict(knobs.items() if hasattr(knobs, "items") else knobs).items())
    try:
        kernel, constants = _linear_kernel_of(knobs, _linear_shape(shape)[3], with_bias)
    except TypeError:  # a value that keys nothing (a list, from a hand-edited file): not remembered
        kernel, constants = _linear_kernel_of.__wrapped__(knobs, _linear_shape(shape)[3], with_bias)
    return kernel, dict(constants)


@functools.lru_cache(maxsize=None)
def _linear_kernel_of(knobs, dtype, with_bias):
    """_linear_kernel's answer for knobs given as a tuple of items, remembered."""
    knobs = dict(knobs)
    dtype = getattr(hk, dtype)
    waves = knobs.pop("waves", None)
    # Called as launches call it when waves is the default's, so both share one Kernel (one trace).
    kernel = gemm_kernel(dtype, dtype, "ABt", with_bias) if waves in (None, 4) else \
        gemm_kernel(dtype, dtype, "ABt", with_bias, waves=waves)
    return kernel, knobs


def _linear_default(arch):
    kernel = gemm_kernel(hk.bf16, hk.bf16, "ABt", False)
    constants = kernel._constants({}, arch)
    return dict(waves=kernel.warps, **{k: constants[k] for k in ("BM", "BN", "BK", "UNROLL")})


LINEAR = Tunable(
    name="linear", space=linear_space, knobs=frozenset(("waves", "BM", "BN", "BK", "KSTEP", "UNROLL")),
    kernel=lambda config, shape: _linear_kernel(config, shape), arguments=_linear_arguments,
    default=_linear_default, bucket=linear_bucket,
    describe=lambda shape: "%s M=%d N=%d K=%d" % (_linear_shape(shape)[3], *_linear_shape(shape)[:3]),
    sources=(os.path.abspath(__file__),))


# Decode's split-K as a candidate of two launches: the split product and the sum of its parts.
# `parts` 0 is split_k's rule for the candidate's BN and BK (today's choice); P > 0 cuts K's
# steps into P runs (fewer when a run would be empty).

def split_space(target):
    """The split-K's knobs: K's parts, waves, C's tile (BM: the 32 rows of a decode, or 16), K's
    step, steps per loop iteration; constrained as the GEMM's are."""
    return space(
        parts=[0, 4, 8, 16, 32], waves=[2, 4], BM=[16, 32], BN=[64, 128, 256], BK=[32, 64], UNROLL=[2, 4],
        where=[
            lambda c: c.BM % (16 * (c.waves // 2)) == 0 and c.BN % 32 == 0,
            lambda c: 2 * 2 * (c.BM + c.BN) * c.BK <= target.lds_bytes,
            lambda c: (c.BM // (c.waves // 2)) * (c.BN // 2) // target.wave_size <= 128,
        ])


def split_plan(knobs, shape):
    """(split kernel, its constants, parts, K steps per part) of split-K knobs ({} or None:
    today's) at a linear's shape."""
    m, n, k, dtype = _linear_shape(shape)
    if m > DECODE_ROWS:
        raise ValueError("split-K is a decode's: M up to %d rows, not %d (the linear's own search covers "
                         "larger M)" % (DECODE_ROWS, m))
    constants = dict(knobs or {})
    parts = constants.pop("parts", 0)
    waves = constants.pop("waves", None)
    bn, bk = constants.get("BN", 128), constants.get("BK", 32)
    splits, per = split_runs(parts, -(-k // bk), lambda: split_k(m, n, k, bn, bk))
    dtype = getattr(hk, dtype)
    # Called as today's launch calls it when waves is the default's (one Kernel, one trace).
    kernel = gemm_kernel(dtype, hk.fp32, "ABt", split=True) if waves in (None, 4) else \
        gemm_kernel(dtype, hk.fp32, "ABt", split=True, waves=waves)
    return kernel, constants, splits, per


def _split_launches(config, shape):
    m, n, k, dtype = _linear_shape(shape)
    kernel, constants, splits, per = split_plan(config.as_dict(), shape)
    a, b, c = _linear_arguments(shape)
    parts = torch.empty(splits, m, n, dtype=torch.float32, device="meta")
    return [Launch(kernel, constants, (a, b, parts, per)), Launch(split_sum_kernel(getattr(hk, dtype)), {}, (parts, c))]


def _split_default(arch):
    constants = gemm_kernel(hk.bf16, hk.fp32, "ABt", split=True)._constants({}, arch)
    return dict(parts=0, waves=4, **{k: constants[k] for k in ("BM", "BN", "BK", "UNROLL")})


SPLIT_K = Tunable(
    name="linear_split_k", space=split_space,
    knobs=frozenset(("parts", "waves", "BM", "BN", "BK", "KSTEP", "UNROLL")),
    launches=_split_launches, default=_split_default, bucket=linear_bucket, describe=LINEAR.describe,
    # Its own salt: its candidates' result keys never meet the linear's at the same shape.
    sources=(os.path.abspath(__file__),), salt=b"split-K: the split product and the sum of its parts\0")


# torch operators ---------------------------------------------------------------------------------


# What launch_linear decided per call layout: the kernels, their constants and the operands'
# shapes, run again for a call laid out alike (hk.runtime.launch.layout: dtype, shape, strides,
# device, alignment), under the same runner, target (HK_ARCH, or the one hk.perf captures for)
# and tuned file (and tuned.generation).
_plans = {}
MAX_PLANS = 1024


def launch_linear(x, weight, bias, out):
    """out = x @ weightᵀ (+ bias) through the GEMM (A·Bᵀ, fp32 accumulation, out in x's dtype)."""
    layout = launch.layout
    try:
        key = (device.runner(), os.environ.get("HK_ARCH"), launch.captured_arch(), os.environ.get("HK_TUNED"),
               tuned.generation,
               layout(x), layout(weight), None if bias is None else layout(bias), layout(out))
        plan = _plans.get(key)
    except Exception:  # no runner, or not a tensor: the full path says why
        key = plan = None
    if plan is not None:
        return plan(x, weight, bias, out)
    plan = _launch_linear(x, weight, bias, out)
    if plan is not None and key is not None and not launch.capturing():
        if len(_plans) >= MAX_PLANS:
            _plans.pop(next(iter(_plans)), None)
        _plans[key] = plan


def _launch_linear(x, weight, bias, out):
    """launch_linear's checks and choices; returns its plan (a function of the same arguments
    that launches the same kernels), or None when the launch copied an operand."""
    op = "linear"
    dtype = registry.dtype_of(op, x, (torch.bfloat16, torch.float16))
    registry.same(op, "weight", weight, x)
    registry.same(op, "out", out, x)
    k = registry.columns(op, "x", x)
    if weight.dim() != 2 or weight.shape[1] != k:
        raise registry.LaunchError("hk.ops.linear: weight has shape %s; x [..., %d] needs [N, %d]"
                                   % (tuple(weight.shape), k, k))
    n = weight.shape[0]
    if bias is not None:
        registry.same(op, "bias", bias, x)
        if tuple(bias.shape) != (n,):
            raise registry.LaunchError("hk.ops.linear: bias has shape %s; it must be [%d]" % (tuple(bias.shape), n))
    if tuple(out.shape) != tuple(x.shape[:-1]) + (n,):
        raise registry.LaunchError("hk.ops.linear: out has shape %s, not %s"
                                   % (tuple(out.shape), tuple(x.shape[:-1]) + (n,)))
    if out.numel() == 0:
        return None
    if k == 0:
        out.copy_(bias.expand_as(out) if bias is not None else torch.zeros_like(out))
        return None
    a = registry.rows(op, "x", x, k)
    b = registry.rows(op, "weight", weight, k)
    c = registry.rows(op, "out", out, n, writable=True)
    # A plan re-derives the [rows, cols] views; one that copied an operand is not kept.
    viewed = a.data_ptr() == x.data_ptr() and b is weight and (bias is None or bias.is_contiguous())

    def views(x, out):
        return x if x.dim() == 2 else x.view(-1, k), out if out.dim() == 2 else out.view(-1, n)

    schedule = PIECES if in_pieces(a, b) else {}
    splits, per = split_k(a.shape[0], n, k)
    if splits > 1:
        # Decode: the parts of K summed by a second kernel, in one order.
        total = split_sum_kernel(dtype, bias is not None)
        chosen = []

        def split(knobs, arch=None):
            if schedule:  # rows read in pieces: today's parts with their own schedule
                product, constants, count, steps = gemm_kernel(dtype, hk.fp32, "ABt", split=True), schedule, splits, per
            else:
                product, constants, count, steps = split_plan(knobs, (a.shape[0], n, k, dtype.name))

            def decode(x, weight, bias, out):
                a, c = views(x, out)
                parts = torch.empty(count, a.shape[0], n, dtype=torch.float32, device=x.device)
                product(a, weight, parts, steps, arch=arch, **constants)
                if bias is not None:
                    total(parts, bias, c, arch=arch)
                else:
                    total(parts, c, arch=arch)

            decode(a, b, bias.contiguous() if bias is not None else None, c)
            chosen[:] = [decode]

        if schedule:
            split(None)
        else:
            arch = tuned.launch_arch()
            tuned.launch(SPLIT_K, (a.shape[0], n, k, dtype.name), lambda knobs: split(knobs, arch), arch)
        return chosen[0] if viewed else None
    operands = (a, b, bias.contiguous(), c) if bias is not None else (a, b, c)
    if schedule:  # rows read in pieces: their own schedule
        kernel, constants, arch = gemm_kernel(dtype, dtype, "ABt", bias is not None), schedule, None
        kernel(*operands, **constants)
    else:
        shape = (a.shape[0], n, k, dtype.name)
        arch = tuned.launch_arch()  # asked once: the lookup and the kernel's call take it
        ran = []

        def run(knobs):
            kernel, constants = _linear_kernel(knobs or {}, shape, bias is not None)
            kernel(*operands, arch=arch, **constants)
            ran[:] = [kernel, constants]

        tuned.launch(LINEAR, shape, run, arch)
        kernel, constants = ran

    if not viewed:
        return None
    # Its operands are views of the plan's keyed tensors, laid out alike: the kernel's launch
    # is bound once (its own key is implied by the plan's).
    launch_gemm = launch.bound(kernel, operands, arch, constants)
    if launch_gemm is None:
        return None

    def gemm(x, weight, bias, out):
        a, c = views(x, out)
        if bias is not None:
            launch_gemm(a, weight, bias, c)
        else:
            launch_gemm(a, weight, c)

    return gemm


def _out_shape(x, weight):
    if weight.dim() != 2:
        raise registry.LaunchError("hk.ops.linear: weight has shape %s; it must be [N, K]" % (tuple(weight.shape),))
    return tuple(x.shape[:-1]) + (weight.shape[0],)


def _linear(x, weight, bias=None):
    out = x.new_empty(_out_shape(x, weight))  # x's dtype and device
    launch_linear(x, weight, bias, out)
    return out


def _linear_out(out, x, weight, bias=None):
    launch_linear(x, weight, bias, out)


OPS = {
    "linear": registry.define(
        "linear", "(Tensor x, Tensor weight, Tensor? bias=None) -> Tensor", _linear,
        lambda x, weight, bias=None: torch.empty(_out_shape(x, weight), dtype=x.dtype, device=x.device)),
    "linear_out": registry.define(
        "linear_out", "(Tensor(a!) out, Tensor x, Tensor weight, Tensor? bias=None) -> ()", _linear_out,
        lambda out, x, weight, bias=None: None, mutates=("out",)),
}
