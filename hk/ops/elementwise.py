"""Elementwise ops and the gated activations of an MLP, as one kernel per form: 16 x 64 tiles,
one wave each, computed in fp32 and written in the inputs' dtype.

    unary   o = f(x)                 f in silu, gelu_tanh (GELU, tanh approximation), relu
    gated   o = f(x[..., :d]) * x[..., d:]     (vLLM's silu_and_mul, gelu_tanh_and_mul)
    binary  o = x + y, x * y         (same shapes)
"""

import functools

import torch

import hk
from hk.ops import registry

BLOCK = 64
ACTIVATIONS = {"silu": hk.math.silu, "gelu_tanh": hk.math.gelu, "relu": hk.math.relu}
BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b}


@functools.lru_cache(maxsize=None)
def elementwise_kernel(form, fn, dtype):
    """`form` "unary" (fn an activation), "gated" (an activation times the second input) or
    "binary" (fn in BINARY), on tensors of `dtype`."""
    f = ACTIVATIONS[fn] if form in ("unary", "gated") else BINARY[fn]
    io = hk.RT(dtype, 16, BLOCK)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, BLOCK), hk.cdiv(p.o.rows, 16)),
               name="%s_%s_%s" % (form, fn, dtype.name))
    def elementwise(x: hk.Tensor[dtype], y: hk.Tensor[dtype], o: hk.Tensor[dtype]):
        r = hk.arch.block_idx.y
        c = hk.arch.block_idx.x
        a = x[0, 0, r, c].load(io).to(hk.fp32)
        if form == "unary":
            out = f(a)
        elif form == "gated":
            out = f(a) * y[0, 0, r, c].load(io).to(hk.fp32)
        else:
            out = f(a, y[0, 0, r, c].load(io).to(hk.fp32))
        o[0, 0, r, c] = out.to(dtype)

    return elementwise


def launch(form, fn, x, y, out):
    op = fn if form != "gated" else fn + "_and_mul"
    dtype = registry.dtype_of(op, x)
    for name, t in (("y", y), ("out", out)):
        if t is not None:
            registry.same(op, name, t, x)
    registry.columns(op, "x", x)
    cols = registry.columns(op, "out", out)
    if out.numel() == 0:
        return
    if form == "gated":
        if x.shape[-1] != 2 * cols or x.shape[:-1] != out.shape[:-1]:
            raise registry.LaunchError("hk.ops.%s: x has shape %s; out %s needs x of [..., %d]"
                                       % (op, tuple(x.shape), tuple(out.shape), 2 * cols))
        x2 = registry.rows(op, "x", x, 2 * cols)
        a, b = x2[:, :cols], x2[:, cols:]
    else:
        if x.shape != out.shape or (y is not None and y.shape != x.shape):
            raise registry.LaunchError("hk.ops.%s: the shapes differ: %s" % (
                op, ", ".join(str(tuple(t.shape)) for t in (x, y, out) if t is not None)),
                hint="broadcast explicitly (expand(...).contiguous()) before the call")
        a = registry.rows(op, "x", x, cols)
        b = registry.rows(op, "y", y, cols) if y is not None else a
    elementwise_kernel(form, fn, dtype)(a, b, registry.rows(op, "out", out, cols, writable=True))


def _empty(x, cols=None):
    shape = tuple(x.shape) if cols is None else tuple(x.shape[:-1]) + (cols,)
    return torch.empty(shape, dtype=x.dtype, device=x.device)


def _define():
    ops = {}
    for fn in ACTIVATIONS:
        def unary(x, fn=fn):
            out = _empty(x)
            launch("unary", fn, x, None, out)
            return out

        def unary_out(out, x, fn=fn):
            launch("unary", fn, x, None, out)

        def gated(x, fn=fn):
            out = _empty(x, registry.columns(fn + "_and_mul", "x", x) // 2)
            launch("gated", fn, x, None, out)
            return out

        def gated_out(out, x, fn=fn):
            launch("gated", fn, x, None, out)

        ops[fn] = registry.define(fn, "(Tensor x) -> Tensor", unary, lambda x: _empty(x))
        ops[fn + "_out"] = registry.define(fn + "_out", "(Tensor(a!) out, Tensor x) -> ()", unary_out,
                                           lambda out, x: None, mutates=("out",))
        if fn != "relu":
            name = fn + "_and_mul"
            ops[name] = registry.define(name, "(Tensor x) -> Tensor", gated,
                                        lambda x, name=name: _empty(x, registry.columns(name, "x", x) // 2))
            ops[name + "_out"] = registry.define(name + "_out", "(Tensor(a!) out, Tensor x) -> ()", gated_out,
                                                 lambda out, x: None, mutates=("out",))
    for fn in BINARY:
        def binary(x, y, fn=fn):
            out = _empty(x)
            launch("binary", fn, x, y, out)
            return out

        def binary_out(out, x, y, fn=fn):
            launch("binary", fn, x, y, out)

        ops[fn] = registry.define(fn, "(Tensor x, Tensor y) -> Tensor", binary, lambda x, y: _empty(x))
        ops[fn + "_out"] = registry.define(fn + "_out", "(Tensor(a!) out, Tensor x, Tensor y) -> ()", binary_out,
                                           lambda out, x, y: None, mutates=("out",))
    return ops


OPS = _define()
