"""The interpreter's numbers, as the compiled kernel has them (docs/semantics.md).

Scalars: index and i32 are 32-bit two's complement and wrap; division truncates toward zero,
x // 0 == 0 and x % 0 == x, INT_MIN // -1 == INT_MIN; shifts take the amount's low five bits;
floats are IEEE single, rounded after every operation. Conversions to an integer round toward
zero and saturate, NaN -> 0; to 16-bit and 8-bit floats they round to nearest even, and finite
values beyond an 8-bit format's range saturate to its largest.
"""

import ctypes
import math

import torch

from hk import types

INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1


# Scalars -------------------------------------------------------------------------------------

def wrap32(x):
    return ((int(x) + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31


def f32(x):
    """`x` rounded to IEEE single (inf beyond its range)."""
    return ctypes.c_float(x).value


def div_s(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return wrap32(q if (a < 0) == (b < 0) else -q)


def rem_s(a, b):
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return wrap32(-r if a < 0 else r)


def ceil_div_s(a, b):
    if b == 0:
        return 0
    q, r = div_s(a, b), rem_s(a, b)
    return wrap32(q + 1) if r != 0 and (r < 0) == (b < 0) else q


def shl(a, b):
    return wrap32(a << (b & 31))


def shr(a, b):
    return wrap32(a) >> (b & 31)


def fdiv(a, b):
    """IEEE division: x / 0 is an infinity (or NaN), as on the device."""
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return f32(a / b)


def float_to_int(x):
    if x != x:
        return 0
    if x >= 2147483648.0:
        return INT_MAX
    if x < -2147483648.0:
        return INT_MIN
    return int(x)


def unsigned32(x):
    return int(x) & 0xFFFFFFFF


# Tiles ---------------------------------------------------------------------------------------

_FP8_MAX = {types.fp8e4m3: 448.0, types.fp8e5m2: 57344.0, types.fp8e4m3fnuz: 240.0,
            types.fp8e5m2fnuz: 57344.0}


def _float_to_int_tile(x, lo, hi):
    x = x.float()
    out = torch.where(torch.isnan(x), torch.zeros_like(x), x)
    out = torch.clamp(out, -2147483648.0, 2147483520.0)  # the largest float below 2**31
    ints = out.to(torch.int64)
    ints = torch.where(x >= 2147483648.0, torch.full_like(ints, INT_MAX), ints)
    return torch.clamp(ints, lo, hi)


def convert(x, dtype, torch_dtype):
    """Tile `x` converted to `dtype` as hk::convert does."""
    if dtype is types.mask:
        return x != 0
    if dtype in (types.i32, types.i8):
        lo, hi = (INT_MIN, INT_MAX) if dtype is types.i32 else (-128, 127)
        if x.is_floating_point():
            return _float_to_int_tile(x, lo, hi).to(torch_dtype)
        return torch.clamp(x.to(torch.int64), lo, hi).to(torch_dtype)
    v = x.float() if x.dtype != torch.float32 else x
    if dtype in _FP8_MAX:
        top = _FP8_MAX[dtype]
        finite = torch.isfinite(v)
        v = torch.where(finite, torch.clamp(v, -top, top), v)
        if dtype is not types.fp8e5m2:  # no infinity in e4m3fn or the FNUZ formats: NaN
            v = torch.where(torch.isinf(v), torch.full_like(v, math.nan), v)
    return v.to(torch_dtype)


def result(x, dtype, torch_dtype):
    """An arithmetic result (computed in fp32 or int64) in `dtype`: floats round, i32 wraps,
    i8 saturates (as hk::from_compute)."""
    if dtype is types.i32:
        return x.to(torch.int64).to(torch.int32)
    if dtype is types.i8:  # computed in a 32-bit int (which wraps), then saturated
        return torch.clamp(x.to(torch.int64).to(torch.int32), -128, 127).to(torch.int8)
    return convert(x, dtype, torch_dtype)


def int_div(x, y):
    """Integer tile division: truncation, x / 0 == 0, INT_MIN / -1 wraps (in int64, wrapped by
    `result`)."""
    y = y if isinstance(y, torch.Tensor) else torch.tensor(y, dtype=torch.int64)
    safe = torch.where(y == 0, torch.ones_like(y), y)
    q = torch.div(x, safe, rounding_mode="trunc")
    return torch.where(y == 0, torch.zeros_like(q), q)


def fmax(x, y):
    """IEEE maxNum: a NaN operand yields the other (v_max_f32, fmaxf)."""
    return torch.fmax(x, y) if x.is_floating_point() else torch.maximum(x, y)


def fmin(x, y):
    return torch.fmin(x, y) if x.is_floating_point() else torch.minimum(x, y)


def reduce_max(v, dim):
    """Max along `dim` ignoring NaN (NaN only when all are), as folding with fmaxf does."""
    if not v.is_floating_point():
        return v.amax(dim)
    m = torch.where(torch.isnan(v), torch.full_like(v, -math.inf), v).amax(dim)
    return torch.where(torch.isnan(v).all(dim), torch.full_like(m, math.nan), m)


def reduce_min(v, dim):
    if not v.is_floating_point():
        return v.amin(dim)
    m = torch.where(torch.isnan(v), torch.full_like(v, math.inf), v).amin(dim)
    return torch.where(torch.isnan(v).all(dim), torch.full_like(m, math.nan), m)
