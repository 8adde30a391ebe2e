"""Quantization to int8 and fp8 (OCP e4m3 and e5m2, FNUZ e4m3 and e5m2) and back, per row
(dynamic: each row's absolute maximum gives its scale) or per tensor (a given scale), as vLLM's
scaled_int8_quant and scaled_fp8_quant compute them:

    quant_per_row(x, qdtype) -> (q, scale)    scale = max|x_row| / QMAX, q = x / scale (fp32
                                              [..., 1]); int8 rounded to nearest even
    quant(x, scale, qdtype) -> q              q = x / scale, scale a one-element fp32 tensor
    dequant(q, scale, dtype) -> x             x = q * scale, scale per row [..., 1] or per tensor [1]

x in bf16, fp16 or fp32 [..., N] (rows may be padded); qdtype torch.int8, float8_e4m3fn,
float8_e5m2, float8_e4m3fnuz or float8_e5m2fnuz. QMAX is the format's largest finite value:
127, 448, 57344, 240 (e4m3fnuz) or 57344 (e5m2fnuz). fp8 is torch's clamp-then-cast: values
beyond +-QMAX, infinities included, saturate to +-QMAX; NaN stays NaN (the FNUZ formats' one NaN,
0x80); quant_per_row gives a row holding a NaN a NaN scale, as torch's amax does. int8 saturates to
-128..127. A row of zeros gets the scale 1e-30 / QMAX (q is zero, and dequant gives zeros). Also
quant_per_row_out, quant_out and dequant_out.

    rms_norm_dynamic_per_token_quant(x, weight, epsilon, quant_dtype, scale_ub=None, residual=None)
        -> (q, scale): vLLM's RMSNorm fused with per-token quantization (rms_quant_kernel), in
        place on residual (x + residual written over it)

Every conversion is hk's software one, so every format is written on every target, with one
exception: the OCP formats are refused on targets whose fp8 is FNUZ (gfx942), where an OCP
activation would be a mistake (those targets' fp8 instructions read FNUZ; quantize to
float8_e4m3fnuz there).

The FNUZ QMAX is the format's 240, torch.finfo's; vLLM's and SGLang's ROCm quantizers divide by
224 instead (a margin of theirs), so hk's FNUZ scales are theirs times 224 / 240.
"""

import functools

import torch

import hk
from hk.ops import registry
from hk.target import facts

BLOCK = 64
ROWS = 16
QDTYPES = {torch.int8: (hk.i8, 127.0), torch.float8_e4m3fn: (hk.fp8e4m3, 448.0),
           torch.float8_e5m2: (hk.fp8e5m2, 57344.0), torch.float8_e4m3fnuz: (hk.fp8e4m3fnuz, 240.0),
           torch.float8_e5m2fnuz: (hk.fp8e5m2fnuz, 57344.0)}
# The OCP formats, and the FNUZ one of the same numbers' shape (what to quantize to instead).
OCP = {torch.float8_e4m3fn: torch.float8_e4m3fnuz, torch.float8_e5m2: torch.float8_e5m2fnuz}
QMAX_OF = dict(QDTYPES.values())  # hk dtype -> QMAX
TINY = 1e-30  # the least absolute maximum a scale is taken of: QMAX / TINY stays finite


def _to_q(v, qdtype):
    """fp32 values already divided by their scale, to `qdtype` (int8: nearest even first, as
    the float -> int8 conversion goes toward zero). fp8 is clamped first, as torch's
    clamp-then-cast: the conversion saturates finite values itself but turns an infinity into
    NaN (or e5m2's infinity); the comparisons are false for NaN, which stays NaN."""
    if qdtype == hk.i8:
        return hk.math.round(v).to(qdtype)
    qmax = QMAX_OF[qdtype]
    v = hk.where(v > qmax, hk.minimum(v, qmax), v)
    return hk.where(v < -qmax, hk.maximum(v, -qmax), v).to(qdtype)


def _nan_rows(a):
    """A per-row term that is NaN where the row of `a` (fp32, >= 0 or NaN) holds a NaN, else 0:
    added to a scale, it gives torch's amax, which NaN poisons (row_max skips NaN)."""
    return hk.row_sum(hk.where(a >= 0.0, hk.minimum(a, 0.0), a))


@functools.lru_cache(maxsize=None)
def quant_per_row_kernel(dtype, qdtype):
    """Per row of x: scale = max|x| / QMAX (at least TINY / QMAX), q = x / scale in `qdtype`."""
    qmax = QMAX_OF[qdtype]
    f32 = hk.fp32

    @hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, ROWS)), name="quant_rows_%s_%s" % (dtype.name, qdtype.name))
    def quant_rows(x: hk.Tensor[dtype], q: hk.Tensor[qdtype], scale: hk.Tensor[hk.fp32]):
        r = hk.arch.block_idx.y
        tile = hk.RT(dtype, ROWS, BLOCK)
        amax = hk.full(hk.RV(f32, ROWS, "col"), TINY)
        nan = hk.zeros(hk.RV(f32, ROWS, "col"))
        for j in hk.range(hk.cdiv(x.cols, BLOCK)):  # columns past the edge read zeros
            a = hk.math.abs(x[0, 0, r, j].load(tile).to(f32))
            amax = hk.maximum(amax, hk.row_max(a))
            if qdtype != hk.i8:
                nan = nan + _nan_rows(a)
        s = amax / qmax + nan if qdtype != hk.i8 else amax / qmax
        for j in hk.range(hk.cdiv(x.cols, BLOCK)):
            q[0, 0, r, j] = _to_q(hk.div_row(x[0, 0, r, j].load(tile).to(f32), s), qdtype)
        scale[0, 0, 0, r] = s

    return quant_rows


@functools.lru_cache(maxsize=None)
def quant_kernel(dtype, qdtype):
    """q = x / scale[0] in `qdtype`."""

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, BLOCK), hk.cdiv(p.x.rows, ROWS)),
               name="quant_%s_%s" % (dtype.name, qdtype.name))
    def quant(x: hk.Tensor[dtype], scale: hk.Tensor[hk.fp32], q: hk.Tensor[qdtype]):
        r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
        v = x[0, 0, r, c].load(hk.RT(dtype, ROWS, BLOCK)).to(hk.fp32) / scale.load_scalar(0, 0, 0, 0)
        q[0, 0, r, c] = _to_q(v, qdtype)

    return quant


@functools.lru_cache(maxsize=None)
def dequant_kernel(qdtype, dtype, per_row):
    """x = q * scale in `dtype`, the scale one per row of q (`per_row`) or scale[0]."""

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.cols, BLOCK), hk.cdiv(p.q.rows, ROWS)),
               name="dequant_%s_%s_%s" % (qdtype.name, dtype.name, "rows" if per_row else "tensor"))
    def dequant(q: hk.Tensor[qdtype], scale: hk.Tensor[hk.fp32], x: hk.Tensor[dtype]):
        r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
        v = q[0, 0, r, c].load(hk.RT(qdtype, ROWS, BLOCK)).to(hk.fp32)
        if per_row:
            v = hk.mul_row(v, scale[0, 0, 0, r].load(hk.RV(hk.fp32, ROWS, "col")))
        else:
            v = v * scale.load_scalar(0, 0, 0, 0)
        x[0, 0, r, c] = v.to(dtype)

    return dequant


# torch operators -------------------------------------------------------------------------------

def _qdtype(op, qdtype):
    if qdtype not in QDTYPES:
        raise registry.LaunchError("hk.ops.%s: cannot quantize to %s" % (op, qdtype),
                                   hint="pass torch.int8, torch.float8_e4m3fn, torch.float8_e5m2, "
                                        "torch.float8_e4m3fnuz or torch.float8_e5m2fnuz")
    if qdtype in OCP:
        arch = registry.launch_arch()
        if facts.target(arch).fp8_format == "fnuz":
            raise registry.LaunchError("hk.ops.%s: %s holds the OCP fp8 format, which %s does not use" % (op, qdtype, arch),
                                       hint="on %s fp8 is the FNUZ formats; quantize to %s (or int8) there"
                                            % (arch, OCP[qdtype]))
    return QDTYPES[qdtype][0]


def _check_q(op, q, x):
    # (q's dtype is checked by _qdtype.)
    if q.shape != x.shape or q.device != x.device:
        raise registry.LaunchError("hk.ops.%s: q is %s on %s; it must be %s on %s"
                                   % (op, tuple(q.shape), q.device, tuple(x.shape), x.device))


def _check_scale(op, scale, x, per_row):
    want = (tuple(x.shape[:-1]) + (1,)) if per_row else (1,)
    rows = x.numel() // max(registry.columns(op, "x", x), 1) if per_row else 1
    if scale.dtype != torch.float32 or scale.numel() != rows or scale.device != x.device:
        raise registry.LaunchError("hk.ops.%s: scale is %s %s on %s; it must be float32 %s on %s"
                                   % (op, scale.dtype, tuple(scale.shape), scale.device, want, x.device))


def launch_quant_per_row(x, q, scale):
    op = "quant_per_row"
    dtype = registry.dtype_of(op, x)
    qd = _qdtype(op, q.dtype)
    _check_q(op, q, x)
    _check_scale(op, scale, x, True)
    if x.numel():
        quant_per_row_kernel(dtype, qd)(registry.rows(op, "x", x), registry.rows(op, "q", q, writable=True),
                                        registry.vector(op, "scale", scale, writable=True))


def launch_quant(x, scale, q):
    op = "quant"
    dtype = registry.dtype_of(op, x)
    qd = _qdtype(op, q.dtype)
    _check_q(op, q, x)
    _check_scale(op, scale, x, False)
    if x.numel():
        quant_kernel(dtype, qd)(registry.rows(op, "x", x), scale.view(1), registry.rows(op, "q", q, writable=True))


def launch_dequant(q, scale, x):
    op = "dequant"
    dtype = registry.dtype_of(op, x)
    qd = _qdtype(op, q.dtype)
    if q.shape != x.shape or q.device != x.device:
        raise registry.LaunchError("hk.ops.%s: q %s and out %s differ" % (op, tuple(q.shape), tuple(x.shape)))
    per_row = scale.numel() != 1  # (one scale for one row is both)
    _check_scale(op, scale, q, per_row)
    if q.numel():
        dequant_kernel(qd, dtype, per_row)(registry.rows(op, "q", q), registry.vector(op, "scale", scale),
                                           registry.rows(op, "x", x, writable=True))


def _q_empty(x, qdtype):
    return torch.empty(x.shape, dtype=qdtype, device=x.device)


def _scale_empty(x):
    return torch.empty(tuple(x.shape[:-1]) + (1,), dtype=torch.float32, device=x.device)


def _quant_per_row(x, qdtype):
    q, scale = _q_empty(x, qdtype), _scale_empty(x)
    launch_quant_per_row(x, q, scale)
    return q, scale


def _quant(x, scale, qdtype):
    q = _q_empty(x, qdtype)
    launch_quant(x, scale, q)
    return q


def _dequant(q, scale, dtype):
    x = torch.empty(q.shape, dtype=dtype, device=q.device)
    launch_dequant(q, scale, x)
    return x


OPS = {
    "quant_per_row": registry.define(
        "quant_per_row", "(Tensor x, ScalarType qdtype) -> (Tensor, Tensor)", _quant_per_row,
        lambda x, qdtype: (_q_empty(x, qdtype), _scale_empty(x))),
    "quant_per_row_out": registry.define(
        "quant_per_row_out", "(Tensor(a!) q, Tensor(b!) scale, Tensor x) -> ()",
        lambda q, scale, x: launch_quant_per_row(x, q, scale), lambda q, scale, x: None, mutates=("q", "scale")),
    "quant": registry.define(
        "quant", "(Tensor x, Tensor scale, ScalarType qdtype) -> Tensor", _quant,
        lambda x, scale, qdtype: _q_empty(x, qdtype)),
    "quant_out": registry.define(
        "quant_out", "(Tensor(a!) q, Tensor x, Tensor scale) -> ()",
        lambda q, x, scale: launch_quant(x, scale, q), lambda q, x, scale: None, mutates=("q",)),
    "dequant": registry.define(
        "dequant", "(Tensor q, Tensor scale, ScalarType dtype) -> Tensor", _dequant,
        lambda q, scale, dtype: torch.empty(q.shape, dtype=dtype, device=q.device)),
    "dequant_out": registry.define(
        "dequant_out", "(Tensor(a!) out, Tensor q, Tensor scale) -> ()",
        lambda out, q, scale: launch_dequant(q, scale, out), lambda out, q, scale: None, mutates=("out",)),
}


# RMSNorm fused with per-token quantization --------------------------------------------------------

def min_scale(qdtype):
    """The least scale vLLM's rms_norm_dynamic_per_token_quant gives a row: fp32's epsilon for
    int8, 1 / (QMAX * 512) for fp8."""
    return float(torch.finfo(torch.float32).eps) if qdtype == hk.i8 else 1.0 / (QMAX_OF[qdtype] * 512.0)



@functools.lru_cache(maxsize=None)
def rms_quant_kernel(dtype, qdtype, residual, bounded):
    """RMSNorm then per-row quantization in one kernel, as vLLM's rms_norm_dynamic_per_token_quant
    computes it: s = x (+ residual) in fp32; y = (s * rsqrt(mean(s^2) + eps)) rounded to `dtype`,
    times the weight, rounded to `dtype`; scale = max(min(max|y|, ub) * (1 / QMAX), min_scale);
    q = y / scale (int8: y * (1 / scale), rounded to nearest even), saturated. With `residual`,
    the sum is written over it (in the last pass, after every read of the row)."""
    qmax = QMAX_OF[qdtype]
    floor = min_scale(qdtype)
    f32 = hk.fp32
    tile = hk.RT(dtype, ROWS, BLOCK)
    name = "rms_quant_%s_%s%s%s" % (dtype.name, qdtype.name, "_res" if residual else "", "_ub" if bounded else "")

    @hk.func
    def body(x, res, w, ub, q, scale, eps):
        r = hk.arch.block_idx.y
        steps = hk.cdiv(x.cols, BLOCK)

        def total(j):  # x (+ residual) of column tile j in fp32
            v = x[0, 0, r, j].load(tile).to(f32)
            return v + res[0, 0, r, j].load(tile).to(f32) if residual else v

        squares = hk.zeros(hk.RV(f32, ROWS, "col"))
        for j in hk.range(steps):  # columns past the edge read zeros
            v = total(j)
            squares = squares + hk.row_sum(v * v)
        rms = hk.math.rsqrt(squares / x.cols.to(f32) + eps)

        def normed(v, j):
            y = hk.mul_row(v, rms).to(dtype).to(f32)
            return hk.mul_col(y, w[0, 0, 0, j].load(hk.RV(dtype, BLOCK, "row")).to(f32)).to(dtype).to(f32)

        amax = hk.zeros(hk.RV(f32, ROWS, "col"))
        for j in hk.range(steps):
            amax = hk.maximum(amax, hk.row_max(hk.math.abs(normed(total(j), j))))
        if bounded:
            amax = hk.minimum(amax, hk.zeros(hk.RV(f32, ROWS, "col")) + ub.load_scalar(0, 0, 0, 0))
        s = hk.maximum(amax * (1.0 / qmax), hk.full(hk.RV(f32, ROWS, "col"), floor))
        inverse = 1.0 / s
        for j in hk.range(steps):
            v = total(j)
            y = normed(v, j)
            if residual:
                res[0, 0, r, j] = v.to(dtype)
            q[0, 0, r, j] = _to_q(hk.mul_row(y, inverse) if qdtype == hk.i8 else hk.div_row(y, s), qdtype)
        scale[0, 0, 0, r] = s

    grid = lambda p: (1, hk.cdiv(p.x.rows, ROWS))  # noqa: E731
    X, W, Q, F = hk.Tensor[dtype], hk.Tensor[dtype], hk.Tensor[qdtype], hk.Tensor[hk.fp32]
    if residual and bounded:
        def rms_quant(x: X, res: X, w: W, ub: F, q: Q, scale: F, eps: float):
            body(x, res, w, ub, q, scale, eps)
    elif residual:
        def rms_quant(x: X, res: X, w: W, q: Q, scale: F, eps: float):
            body(x, res, w, None, q, scale, eps)
    elif bounded:
        def rms_quant(x: X, w: W, ub: F, q: Q, scale: F, eps: float):
            body(x, None, w, ub, q, scale, eps)
    else:
        def rms_quant(x: X, w: W, q: Q, scale: F, eps: float):
            body(x, None, w, None, q, scale, eps)
    return hk.kernel(grid=grid, name=name)(rms_quant)


def launch_rms_quant(x, weight, eps, scale_ub, residual, q, scale):
    op = "rms_norm_dynamic_per_token_quant"
    dtype = registry.dtype_of(op, x)
    qd = _qdtype(op, q.dtype)
    n = x.shape[-1] if x.dim() else 1
    registry.same(op, "weight", weight, x)
    if weight.dim() != 1 or weight.shape[0] != n:
        raise registry.LaunchError("hk.ops.%s: weight has shape %s; it must be [%d]" % (op, list(weight.shape), n))
    if residual is not None:
        registry.same(op, "residual", residual, x)
        if residual.shape != x.shape:
            raise registry.LaunchError("hk.ops.%s: residual has shape %s; it must be x's, %s"
                                       % (op, list(residual.shape), list(x.shape)))
    if scale_ub is not None:
        if qd == hk.i8:
            raise registry.LaunchError("hk.ops.%s: scale_ub bounds fp8 scales, not int8's" % op,
                                       hint="pass scale_ub=None for int8 (as vLLM requires)")
        if scale_ub.dtype != torch.float32 or scale_ub.numel() != 1 or scale_ub.device != x.device:
            raise registry.LaunchError("hk.ops.%s: scale_ub is %s %s on %s; it must be one float32 element on %s"
                                       % (op, scale_ub.dtype, list(scale_ub.shape), scale_ub.device, x.device))
    _check_q(op, q, x)
    _check_scale(op, scale, x, True)
    if not x.numel():
        return
    args = [registry.rows(op, "x", x, n)]
    if residual is not None:
        args.append(registry.rows(op, "residual", residual, n, writable=True))
    args.append(weight.contiguous())
    if scale_ub is not None:
        args.append(scale_ub.reshape(1))
    args += [registry.rows(op, "q", q, n, writable=True), registry.vector(op, "scale", scale, writable=True)]
    rms_quant_kernel(dtype, qd, residual is not None, scale_ub is not None)(*args, float(eps))


def _rms_quant(x, weight, epsilon, quant_dtype, scale_ub=None, residual=None):
    q, scale = _q_empty(x, quant_dtype), _scale_empty(x)
    launch_rms_quant(x, weight, epsilon, scale_ub, residual, q, scale)
    return q, scale


OPS["rms_norm_dynamic_per_token_quant"] = registry.define(
    "rms_norm_dynamic_per_token_quant",
    "(Tensor x, Tensor weight, float epsilon, ScalarType quant_dtype, Tensor? scale_ub=None, "
    "Tensor(a!)? residual=None) -> (Tensor, Tensor)", _rms_quant,
    lambda x, weight, epsilon, quant_dtype, scale_ub=None, residual=None: (_q_empty(x, quant_dtype), _scale_empty(x)),
    mutates=("residual",))
