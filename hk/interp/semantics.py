"""What each hk operation computes, on CPU torch tensors, one wave's tiles at a time.

Tiles are [rows, cols] tensors and vectors [length] tensors of the declared dtype. Arithmetic
runs in fp32 (integers in int64) and rounds to the declared dtype on the way out, as the tile
library computes in registers (hk.interp.numbers: i32 wraps, i8 saturates); MMAs accumulate in
fp32. Memory outside a tensor, on either side of any dimension, reads as zero and is not
written (docs/semantics.md).
"""

import math

import torch

from hk import types
from hk.interp import numbers as N
from hk.interp import philox

TORCH = {
    types.bf16: torch.bfloat16, types.fp16: torch.float16, types.fp32: torch.float32,
    types.i32: torch.int32, types.i8: torch.int8, types.fp8e4m3: torch.float8_e4m3fn,
    types.fp8e5m2: torch.float8_e5m2, types.fp8e4m3fnuz: torch.float8_e4m3fnuz,
    types.fp8e5m2fnuz: torch.float8_e5m2fnuz, types.mask: torch.bool,
}


def compute(t):
    """The type arithmetic runs in: fp32 for floats, int64 for integers."""
    if t.dtype == torch.bool:
        return t
    return t.float() if t.is_floating_point() else t.to(torch.int64)


def out(t, dtype):
    return N.result(t, dtype, TORCH[dtype])


def cast(t, dtype):
    return N.convert(t, dtype, TORCH[dtype])


def _clip(start, n, extent):
    """The part of [start, start + n) inside [0, extent), as (lo, hi) absolute; empty if hi <= lo.
    `start` is a tile's first row or column: an index, so 32-bit and wrapping (as compiled)."""
    start = N.wrap32(start)
    return max(start, 0), min(start + n, extent)


class GlobalView:
    """A tensor argument seen as (batch, depth, rows, cols)."""

    __slots__ = ("t",)

    def __init__(self, tensor):
        # A view, never a copy: stores must land in the caller's tensor.
        self.t = tensor.view(types.view4d(tensor.shape))

    def extent(self, which):
        return self.t.shape[("batch", "depth", "rows", "cols").index(which)]

    def _plane(self, b, d):
        """Slice (b, d), or None when the tensor has no such slice (never a wrapped index)."""
        if 0 <= b < self.t.shape[0] and 0 <= d < self.t.shape[1]:
            return self.t[b, d]
        return None

    def load_tile(self, coord, rows, cols, dtype):
        b, d, r, c = coord
        result = torch.zeros(rows, cols, dtype=TORCH[dtype])
        plane = self._plane(b, d)
        if plane is None:
            return result
        rs, cs = N.wrap32(r * rows), N.wrap32(c * cols)
        (r0, r1), (c0, c1) = _clip(rs, rows, plane.shape[0]), _clip(cs, cols, plane.shape[1])
        if r1 > r0 and c1 > c0:
            result[r0 - rs:r1 - rs, c0 - cs:c1 - cs] = plane[r0:r1, c0:c1]
        return result

    def store_tile(self, coord, tile):
        b, d, r, c = coord
        rows, cols = tile.shape
        plane = self._plane(b, d)
        if plane is None:
            return
        rs, cs = N.wrap32(r * rows), N.wrap32(c * cols)
        (r0, r1), (c0, c1) = _clip(rs, rows, plane.shape[0]), _clip(cs, cols, plane.shape[1])
        if r1 > r0 and c1 > c0:
            plane[r0:r1, c0:c1] = tile[r0 - rs:r1 - rs, c0 - cs:c1 - cs]

    # A vector lies along cols: row `r`, elements c*N .. c*N+N-1.
    def load_vector(self, coord, length, dtype):
        b, d, r, c = coord
        result = torch.zeros(length, dtype=TORCH[dtype])
        plane = self._plane(b, d)
        if plane is None or not 0 <= r < plane.shape[0]:
            return result
        cs = N.wrap32(c * length)
        c0, c1 = _clip(cs, length, plane.shape[1])
        if c1 > c0:
            result[c0 - cs:c1 - cs] = plane[r, c0:c1]
        return result

    def store_vector(self, coord, vec):
        b, d, r, c = coord
        n = vec.shape[0]
        plane = self._plane(b, d)
        if plane is None or not 0 <= r < plane.shape[0]:
            return
        cs = N.wrap32(c * n)
        c0, c1 = _clip(cs, n, plane.shape[1])
        if c1 > c0:
            plane[r, c0:c1] = vec[c0 - cs:c1 - cs]

    def gather(self, coord, ids, rows, cols, dtype):
        b, d, _, c = coord
        result = torch.zeros(rows, cols, dtype=TORCH[dtype])
        plane = self._plane(b, d)
        if plane is None:
            return result
        cs = N.wrap32(c * cols)
        c0, c1 = _clip(cs, cols, plane.shape[1])
        for i, rid in enumerate(ids.tolist()):
            if 0 <= rid < plane.shape[0] and c1 > c0:
                result[i, c0 - cs:c1 - cs] = plane[rid, c0:c1]
        return result

    def scatter(self, coord, ids, tile):
        b, d, _, c = coord
        plane = self._plane(b, d)
        if plane is None:
            return
        cols = tile.shape[1]
        cs = N.wrap32(c * cols)
        c0, c1 = _clip(cs, cols, plane.shape[1])
        for i, rid in enumerate(ids.tolist()):
            if 0 <= rid < plane.shape[0] and c1 > c0:
                plane[rid, c0:c1] = tile[i, c0 - cs:c1 - cs]

    def _holds(self, b, d, r, c):
        return all(0 <= i < n for i, n in zip((b, d, r, c), self.t.shape))

    def load_scalar(self, b, d, r, c):
        if not self._holds(b, d, r, c):
            return 0.0 if self.t.is_floating_point() else 0
        return self.t[b, d, r, c].item()

    def store_scalar(self, b, d, r, c, value):
        if self._holds(b, d, r, c):
            self.t[b, d, r, c] = value

    def atomic_add(self, b, d, r, c, value):
        if self._holds(b, d, r, c):
            self.t[b, d, r, c] += value


def unary(fn, x, dtype):
    v = compute(x)
    if fn == "exp":
        r = torch.exp(v)
    elif fn == "exp2":
        r = torch.exp2(v)
    elif fn == "exp2_ftz":
        r = torch.exp2(v)
        r = torch.where(r < 2.0 ** -126, torch.zeros_like(r), r)
    elif fn == "log":
        r = torch.log(v)
    elif fn == "log2":
        r = torch.log2(v)
    elif fn == "abs":
        r = torch.abs(v)
    elif fn == "neg":
        r = -v
    elif fn == "relu":
        r = torch.clamp(v, min=0)
    elif fn == "gelu":
        r = 0.5 * v * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v * v * v)))
    elif fn == "silu":
        r = v * torch.sigmoid(v)
    elif fn == "sqrt":
        # In float64, rounded once: correctly rounded as the hardware's (and IEEE's) sqrt is.
        # torch's fp32 sqrt is not on every CPU (its AVX-512 kernel is an ulp off for about a
        # sixth of the inputs), which would make the interpreter's answer depend on the machine.
        r = torch.sqrt(v.double()).to(v.dtype) if v.is_floating_point() else torch.sqrt(v)
    elif fn == "rsqrt":
        r = torch.rsqrt(v)
    elif fn == "round":
        r = torch.round(v)  # ties to even
    elif fn == "floor":
        r = torch.floor(v)
    elif fn == "sin":
        r = torch.sin(v)
    elif fn == "cos":
        r = torch.cos(v)
    elif fn == "tanh":
        r = torch.tanh(v)
    elif fn == "sigmoid":
        r = torch.sigmoid(v)
    else:
        raise NotImplementedError("interpreter has no unary %s" % fn)
    return out(r, dtype)


def binary(fn, a, b, dtype):
    x = compute(a)
    y = compute(b) if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=x.dtype)
    if fn == "add":
        r = x + y
    elif fn == "sub":
        r = x - y
    elif fn == "mul":
        r = x * y
    elif fn == "div":
        r = x / y if x.is_floating_point() else N.int_div(x, y)
    elif fn == "max":
        r = N.fmax(x, y)
    elif fn == "min":
        r = N.fmin(x, y)
    elif fn == "pow":
        r = torch.pow(x, y)
    elif fn in ("band", "bor", "bxor"):
        r = {"band": torch.bitwise_and, "bor": torch.bitwise_or, "bxor": torch.bitwise_xor}[fn](x, y)
    elif fn in ("shl", "shr"):
        # The amount modulo 32, as the hardware shifts; shr arithmetic; shl wraps (in int64).
        y = y & 31
        r = (x << y) if fn == "shl" else (x >> y)
    else:
        raise NotImplementedError("interpreter has no binary %s" % fn)
    return out(r, dtype)


def compare(pred, a, b):
    x = compute(a)
    y = compute(b) if isinstance(b, torch.Tensor) else b
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[pred]


def mask(kind, x, row0, col0, diagonal, value, dtype):
    rows, cols = x.shape
    r = torch.arange(rows).unsqueeze(1) + row0
    c = torch.arange(cols).unsqueeze(0) + col0
    keep = (c - r <= diagonal) if kind in ("tril", "causal") else (c - r >= diagonal)
    return torch.where(keep, x, torch.tensor(value, dtype=x.dtype))


def reduce(fn, x, axis_of_result, init, dtype):
    dim = 1 if axis_of_result == "col" else 0  # a col vector holds one value per row
    v = compute(x)
    r = {"sum": lambda: v.sum(dim), "max": lambda: N.reduce_max(v, dim), "min": lambda: N.reduce_min(v, dim)}[fn]()
    if init is not None:
        i = compute(init)
        r = {"sum": lambda: r + i, "max": lambda: N.fmax(r, i), "min": lambda: N.fmin(r, i)}[fn]()
    return out(r, dtype)


def mma(kind, a, b, c):
    A = compute(a).t() if kind in ("AtB", "AtBt") else compute(a)
    B = compute(b).t() if kind in ("ABt", "AtBt") else compute(b)
    if c.dtype == torch.int32:
        return (A.to(torch.int64) @ B.to(torch.int64) + c.to(torch.int64)).to(torch.int32)
    return (A @ B + c.float()).to(torch.float32)


def rand(seed, offsets):
    return philox.uniform(seed, offsets)
