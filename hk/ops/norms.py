"""The norm family as one kernel: RMSNorm, LayerNorm and softmax over the last dimension, each
optionally weighted (LayerNorm also with a bias) and with a fused residual add that writes both
outputs.

A workgroup of WARPS waves owns 16 rows; the waves split the row's 64-wide column tiles. Rows of
up to STRIP_TILES * WARPS tiles live in registers (a register strip): the row is read once, its
statistics combined across the waves through LDS, and the result written from the registers.
Wider rows are read again for each statistic and for the result.

The statistics are computed in fp32: RMSNorm's mean square, LayerNorm's mean and then the mean
square of the deviations (two passes, not E[x^2] - E[x]^2), softmax's maximum and then the sum
of exp(x - max). With a residual, x + residual is formed in fp32, written to residual_out in the
tensor's dtype, and normalized unrounded (vLLM's fused_add_rms_norm computes the same in its
reference).
"""

import functools

import torch

import hk
from hk.ops import registry

BLOCK = 64
WARPS = 8
# Column tiles per wave held in registers (16 x 64 fp32 each): up to 1024 columns with 8 waves.
STRIP_TILES = 2
KINDS = ("rms", "layer", "softmax")


def strip_tiles(cols):
    """The register strip for rows of `cols` elements: tiles per wave, 0 to stream."""
    per_wave = -(-cols // (BLOCK * WARPS))
    return per_wave if per_wave <= STRIP_TILES else 0


@functools.lru_cache(maxsize=None)
def norm_kernel(kind, dtype, weighted, biased, residual, strip):
    """The kernel for one variant: `kind` in KINDS, 16-bit or fp32 `dtype`, a weight and a bias
    per column or not, a residual added or not, `strip` tiles per wave in registers (0: stream)."""
    if kind not in KINDS:
        raise ValueError("kind is one of %s, not %r" % (", ".join(KINDS), kind))
    name = "%s_norm_%s%s%s%s%s" % (kind, dtype.name, "_w" if weighted else "", "_b" if biased else "",
                                   "_res" if residual else "", "_s%d" % strip if strip else "")
    tile = hk.RT(hk.fp32, 16, BLOCK)
    rows_vec = hk.RV(hk.fp32, 16, "col")
    io = hk.RT(dtype, 16, BLOCK)

    class Rows:
        """The workgroup's 16 rows: reads, writes and statistics across the waves."""

        def __init__(self, x, res, w, b, o, res_out):
            self.x, self.res, self.w, self.b, self.o, self.res_out = x, res, w, b, o, res_out
            self.row = hk.arch.block_idx.y
            self.warp = hk.arch.warp_id()
            self.col = hk.iota(tile, "col")
            self.partial = hk.lds.alloc(hk.SV(hk.fp32, 16, WARPS))

        def across_waves(self, v, combine):
            # The per-row statistic of the whole workgroup, from each wave's part.
            self.partial[self.warp].store(v)
            hk.arch.barrier()
            total = self.partial[0].load(rows_vec)
            for k in range(1, WARPS):
                total = combine(total, self.partial[k].load(rows_vec))
            hk.arch.barrier()  # the next statistic reuses the buffer
            return total

        def inside(self, j):
            return self.col + j * BLOCK < self.x.cols

        def first_read(self, j):
            # x (+ residual) of tile j in fp32; with a residual the sum is written out here.
            t = self.x[0, 0, self.row, j].load(io).to(hk.fp32)
            if residual:
                t = t + self.res[0, 0, self.row, j].load(io).to(hk.fp32)
                self.res_out[0, 0, self.row, j] = t.to(dtype)
            return t

        def reread(self, j):
            # Streaming: the tile again after the first pass (residual_out may alias res).
            src = self.res_out if residual else self.x
            return src[0, 0, self.row, j].load(io).to(hk.fp32)

        def finish(self, y, j):
            if weighted:
                y = hk.mul_col(y, self.w[0, 0, 0, j].load(hk.RV(dtype, BLOCK, "row")).to(hk.fp32))
            if biased:
                y = hk.add_col(y, self.b[0, 0, 0, j].load(hk.RV(dtype, BLOCK, "row")).to(hk.fp32))
            self.o[0, 0, self.row, j] = y.to(dtype)

    def add(a, c):
        return a + c

    @hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)), warps=WARPS, name=name)
    def norm(x: hk.Tensor[dtype], res: hk.Tensor[dtype], w: hk.Tensor[dtype], b: hk.Tensor[dtype],
             o: hk.Tensor[dtype], res_out: hk.Tensor[dtype], eps: float):
        g = Rows(x, res, w, b, o, res_out)
        warp = g.warp
        tiles = hk.cdiv(x.cols, BLOCK)
        width = x.cols.to(hk.fp32)
        if strip:
            js = [warp + WARPS * i for i in range(strip)]
            ts = [g.first_read(j) for j in js]
            if kind == "rms":
                ss = hk.zeros(rows_vec)
                for t in ts:
                    ss = ss + hk.row_sum(t * t)
                r = hk.math.rsqrt(g.across_waves(ss, add) / width + eps)
                ys = [hk.mul_row(t, r) for t in ts]
            elif kind == "layer":
                s = hk.zeros(rows_vec)
                for t in ts:
                    s = s + hk.row_sum(t)
                mean = g.across_waves(s, add) / width
                ds = [hk.where(g.inside(j), hk.sub_row(t, mean), 0.0) for t, j in zip(ts, js)]
                ss = hk.zeros(rows_vec)
                for d in ds:
                    ss = ss + hk.row_sum(d * d)
                r = hk.math.rsqrt(g.across_waves(ss, add) / width + eps)
                ys = [hk.mul_row(d, r) for d in ds]
            else:
                ts = [hk.where(g.inside(j), t, float("-inf")) for t, j in zip(ts, js)]
                m = hk.neg_infty(rows_vec)
                for t in ts:
                    m = hk.maximum(m, hk.row_max(t))
                m = g.across_waves(m, hk.maximum)
                es = [hk.math.exp(hk.sub_row(t, m)) for t in ts]
                s = hk.zeros(rows_vec)
                for e in es:
                    s = s + hk.row_sum(e)
                total = g.across_waves(s, add)
                ys = [hk.div_row(e, total) for e in es]
            for y, j in zip(ys, js):
                g.finish(y, j)
        else:
            if kind == "rms":
                ss = hk.zeros(rows_vec)
                for j in hk.range(warp, tiles, WARPS):
                    t = g.first_read(j)
                    ss = ss + hk.row_sum(t * t)
                r = hk.math.rsqrt(g.across_waves(ss, add) / width + eps)
                for j in hk.range(warp, tiles, WARPS):
                    g.finish(hk.mul_row(g.reread(j), r), j)
            elif kind == "layer":
                s = hk.zeros(rows_vec)
                for j in hk.range(warp, tiles, WARPS):
                    s = s + hk.row_sum(g.first_read(j))
                mean = g.across_waves(s, add) / width
                ss = hk.zeros(rows_vec)
                for j in hk.range(warp, tiles, WARPS):
                    d = hk.where(g.inside(j), hk.sub_row(g.reread(j), mean), 0.0)
                    ss = ss + hk.row_sum(d * d)
                r = hk.math.rsqrt(g.across_waves(ss, add) / width + eps)
                for j in hk.range(warp, tiles, WARPS):
                    g.finish(hk.mul_row(hk.sub_row(g.reread(j), mean), r), j)
            else:
                m = hk.neg_infty(rows_vec)
                for j in hk.range(warp, tiles, WARPS):
                    m = hk.maximum(m, hk.row_max(hk.where(g.inside(j), g.first_read(j), float("-inf"))))
                m = g.across_waves(m, hk.maximum)
                s = hk.zeros(rows_vec)
                for j in hk.range(warp, tiles, WARPS):
                    e = hk.math.exp(hk.sub_row(hk.where(g.inside(j), g.reread(j), float("-inf")), m))
                    s = s + hk.row_sum(e)
                total = g.across_waves(s, add)
                for j in hk.range(warp, tiles, WARPS):
                    e = hk.math.exp(hk.sub_row(hk.where(g.inside(j), g.reread(j), float("-inf")), m))
                    g.finish(hk.div_row(e, total), j)

    return norm


# torch operators -------------------------------------------------------------------------------
FAMILY = {"rms": "rms_norm", "layer": "layer_norm", "softmax": "softmax"}
# kind -> the op's parameters after x (and residual): (schema type, name, default)
PARAMS = {"rms": (("Tensor?", "weight", None), ("float", "eps", 1e-6)),
          "layer": (("Tensor?", "weight", None), ("Tensor?", "bias", None), ("float", "eps", 1e-5)),
          "softmax": (("Tensor?", "weight", None),)}


def _schema(kind):
    return ", ".join("%s %s=%r" % p for p in PARAMS[kind])


def _split(kind, rest, named):
    """(weight, bias, eps) from an op's arguments after x (and residual), positional or named."""
    values = {name: default for _, name, default in PARAMS[kind]}
    values.update(zip(values, rest))
    values.update(named)
    return values["weight"], values.get("bias"), values.get("eps", 0.0)


def launch(kind, x, residual, weight, bias, eps, out, residual_out):
    """Runs the norm kernel: out = norm(x [+ residual]) [* weight] [+ bias], residual_out = x +
    residual. Any shape [..., cols]; outputs may alias the inputs (the in-place ops)."""
    op = FAMILY[kind]
    dtype = registry.dtype_of(op, x)
    cols = registry.columns(op, "x", x)
    for name, t in (("residual", residual), ("weight", weight), ("bias", bias), ("out", out),
                    ("residual_out", residual_out)):
        if t is not None:
            registry.same(op, name, t, x)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (cols,):
            raise registry.LaunchError("hk.ops.%s: %s has shape %s; it must be [%d], one per column"
                                       % (op, name, tuple(t.shape), cols))
    if x.numel() == 0:
        return
    x2 = registry.rows(op, "x", x, cols)
    o2 = registry.rows(op, "out", out, cols, writable=True)
    r2 = registry.rows(op, "residual", residual, cols) if residual is not None else x2
    ro2 = registry.rows(op, "residual_out", residual_out, cols, writable=True) if residual is not None else x2
    w = weight.contiguous() if weight is not None else x2
    b = bias.contiguous() if bias is not None else x2
    kernel = norm_kernel(kind, dtype, weight is not None, bias is not None, residual is not None,
                         strip_tiles(cols))
    kernel(x2, r2, w, b, o2, ro2, float(eps))


def _define_family(kind):
    name, params = FAMILY[kind], _schema(kind)

    def new(x):
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)

    def functional(x, *rest, **named):
        out = new(x)
        launch(kind, x, None, *_split(kind, rest, named), out, None)
        return out

    def with_residual(x, residual, *rest, **named):
        out, residual_out = new(x), new(x)
        launch(kind, x, residual, *_split(kind, rest, named), out, residual_out)
        return out, residual_out

    def in_place(x, residual, *rest, **named):
        launch(kind, x, residual, *_split(kind, rest, named), x, residual)

    def into(out, x, *rest, **named):
        launch(kind, x, None, *_split(kind, rest, named), out, None)

    def nothing(*args, **named):
        return None

    return {
        name: registry.define(name, "(Tensor x, %s) -> Tensor" % params, functional,
                              lambda x, *rest, **named: new(x)),
        name + "_out": registry.define(name + "_out", "(Tensor(a!) out, Tensor x, %s) -> ()" % params,
                                       into, nothing, mutates=("out",)),
        "fused_add_" + name: registry.define(
            "fused_add_" + name, "(Tensor x, Tensor residual, %s) -> (Tensor, Tensor)" % params,
            with_residual, lambda x, residual, *rest, **named: (new(x), new(x))),
        "fused_add_%s_" % name: registry.define(
            "fused_add_%s_" % name, "(Tensor(a!) x, Tensor(b!) residual, %s) -> ()" % params,
            in_place, nothing, mutates=("x", "residual")),
    }


OPS = {}
for _kind in KINDS:
    OPS.update(_define_family(_kind))
