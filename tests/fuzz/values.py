"""What the program generator knows about each value it creates: its shape and dtype, and how
exactly two correct implementations must agree on it.

EXACT values are the same bits on both sides: integers, data movement, and floats that are
multiples of 2**lo below 2**hi with hi - lo <= 24, so every fp32 operation on them is exact in
any order (a fused multiply-add and a multiply then add give the same result). ROUNDED values
are still the same bits (a correctly rounded division, an fp32 sum that rounds) but no longer
small dyadics. APPROX values come from the device library's transcendentals, from sums whose
order matters, or from a multiply-add the compiler may fuse: they agree within a tolerance
scaled by `mag`, a bound on their magnitude.

`prod` marks an fp32 product that was rounded: added to something, the compiler may fuse the
two into one rounding, so the sum is APPROX.
"""

import dataclasses
import math

EXACT, ROUNDED, APPROX = "exact", "rounded", "approx"
_ORDER = {EXACT: 0, ROUNDED: 1, APPROX: 2}

# Mantissa bits (with the implicit one) and the smallest exponent of each float dtype.
MANTISSA = {"fp32": 24, "bf16": 8, "fp16": 11, "fp8e4m3": 4, "fp8e5m2": 3}
MIN_EXP = {"fp32": -149, "bf16": -133, "fp16": -24, "fp8e4m3": -9, "fp8e5m2": -16}
FLOAT_MAX = {"fp32": 3.4e38, "bf16": 3.38e38, "fp16": 65504.0, "fp8e4m3": 448.0, "fp8e5m2": 57344.0}


@dataclasses.dataclass
class V:
    """A value of the generated kernel, by its Python name."""

    name: str
    shape: tuple          # ("tile", R, C), ("vec", n, axis) or ("scalar",)
    dtype: str            # hk dtype name; scalars: "index", "i32", "fp32"
    kind: str = EXACT
    lo: int = 0           # EXACT floats: multiples of 2**lo ...
    hi: int = 0           # ... with magnitude below 2**hi
    mag: float = 1.0      # APPROX (and ROUNDED) floats: a bound on |value|
    prod: bool = False

    @property
    def is_float(self):
        return self.dtype in MANTISSA

    @property
    def is_tile(self):
        return self.shape[0] == "tile"

    @property
    def is_vec(self):
        return self.shape[0] == "vec"

    @property
    def is_scalar(self):
        return self.shape[0] == "scalar"

    @property
    def compares(self):
        """Whether it may decide something (a comparison, a cast to int, a rounding)."""
        return self.kind != APPROX

    def bound(self):
        return max(self.mag, 2.0 ** self.hi)


def worst(*kinds):
    return max(kinds, key=_ORDER.get)


def stored(v, dtype):
    """`v`'s exactness once stored as `dtype` (a narrower float rounds to nearest even: still
    the same bits on both sides, and dyadic within the format's precision)."""
    out = dataclasses.replace(v, dtype=dtype)
    if dtype not in MANTISSA:
        return out
    if dtype != "fp32":
        out.prod = False  # the rounding to a narrower type separates a product from its sum
    if out.kind == EXACT:
        out.lo = max(out.lo, out.hi - MANTISSA[dtype], MIN_EXP[dtype])
        if 2.0 ** out.hi > FLOAT_MAX[dtype]:
            out.hi = int(math.log2(FLOAT_MAX[dtype])) + 1  # saturates or overflows, the same way
    return out


def arith(op, a, b, dtype):
    """The exactness of `a op b` computed in fp32 and stored as `dtype` (op: add, sub, mul, div,
    max, min)."""
    mag = {"add": a.bound() + b.bound(), "sub": a.bound() + b.bound(), "mul": a.bound() * b.bound(),
           "div": math.inf, "max": max(a.bound(), b.bound()), "min": max(a.bound(), b.bound())}[op]
    if dtype not in MANTISSA:
        return V("", a.shape, dtype)
    if APPROX in (a.kind, b.kind) or (op in ("add", "sub") and (a.prod or b.prod)):
        return V("", a.shape, dtype, APPROX, mag=mag)
    if op in ("max", "min"):
        kind = worst(a.kind, b.kind)
        return stored(V("", a.shape, dtype, kind, min(a.lo, b.lo), max(a.hi, b.hi), mag), dtype)
    if op == "div":
        return stored(V("", a.shape, dtype, ROUNDED, mag=mag), dtype)
    if a.kind == EXACT and b.kind == EXACT:
        lo, hi = (min(a.lo, b.lo), max(a.hi, b.hi) + 1) if op != "mul" else (a.lo + b.lo, a.hi + b.hi)
        if hi - lo <= 24 and hi < 120 and lo > -120:
            return stored(V("", a.shape, dtype, EXACT, lo, hi, mag), dtype)
    out = V("", a.shape, dtype, ROUNDED, mag=mag, prod=(op == "mul"))
    return stored(out, dtype)


def tolerance(dtype):
    """Relative agreement expected of APPROX values of `dtype`, against their magnitude bound."""
    return {"fp32": 2e-4, "bf16": 2 ** -6, "fp16": 2 ** -9, "fp8e4m3": 2 ** -2,
            "fp8e5m2": 2 ** -1}.get(dtype, 0.0)
