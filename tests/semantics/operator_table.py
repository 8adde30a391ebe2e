"""The operators of docs/language.md's "Compute" section as a table: each operator, the operand
kinds and dtypes the language documents it for, and its answer written out from
docs/semantics.md in plain Python (computed here, never by running hk).

Operand kinds: "tile" (hk.RT), "vector" (hk.RV), "scalar" (a device scalar: fp32 with float
tiles, i32 with integer ones) and "number" (a Python constant). A row's `kinds` lists the
(left, right) pairs, or the single kind of a unary operator, it is documented for; `dtypes`
the element types. One case is one operator on one pair of kinds in one dtype.
"""

import ctypes
import dataclasses
import math

import torch

FLOATS = ("fp32", "bf16", "fp16", "fp8e4m3", "fp8e5m2")
INTS = ("i32", "i8")
ALL = FLOATS + INTS
SCALARS = ("fp32", "i32")
TORCH = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "i32": torch.int32,
         "i8": torch.int8, "fp8e4m3": torch.float8_e4m3fn, "fp8e5m2": torch.float8_e5m2}
INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1
INT_RANGE = {"i32": (INT_MIN, INT_MAX), "i8": (-128, 127)}
FP8_MAX = {"fp8e4m3": 448.0, "fp8e5m2": 57344.0}
MANTISSA = {"fp32": 24, "bf16": 8, "fp16": 11, "fp8e4m3": 4, "fp8e5m2": 3}
MIN_EXP = {"fp32": -149, "bf16": -133, "fp16": -24, "fp8e4m3": -9, "fp8e5m2": -16}
inf, nan = math.inf, math.nan

# Sixteen values per dtype, each exact in it: a 16 x 16 tile of pairs holds every (x, y) of
# them. Signed zeros, infinities (e4m3 has none), NaN, the largest finite and the smallest
# subnormal magnitude, values whose quotients round, and one past every integer range.
_COMMON = [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 3.0, 0.25, 7.0]
VALUES = {
    "fp32": _COMMON + [inf, -inf, nan, 3.4028234663852886e38, -3.4028234663852886e38, 2.0 ** -149, 3e9],
    "bf16": _COMMON + [inf, -inf, nan, 3.3895313892515355e38, -3.3895313892515355e38, 2.0 ** -133, 2.0 ** 31],
    "fp16": _COMMON + [inf, -inf, nan, 65504.0, -65504.0, 2.0 ** -24, 300.0],
    "fp8e4m3": _COMMON + [nan, 448.0, -448.0, 2.0 ** -9, -(2.0 ** -9), 240.0, 0.5],
    "fp8e5m2": _COMMON + [inf, -inf, nan, 57344.0, -57344.0, 2.0 ** -16, 320.0],
    # 2**24 + 2**16 + 1 rounds differently to bf16 directly and through fp32.
    "i32": [0, 1, -1, 2, 3, -7, 7, 31, 32, 33, INT_MAX, INT_MIN, 65536, -65537, 0x12345678, 2 ** 24 + 2 ** 16 + 1],
    "i8": [0, 1, -1, 2, 3, -7, 7, 31, 33, 127, -128, -127, 64, -100, 100, 5],
}
# Python constants each operator meets, per the dtype of the other operand (the tiles hold every
# special value already; the constants try the constant's own path: its sign, rounding, NaN).
NUMBERS = {
    "float": [-0.0, 0.1, nan],
    "fp8": [-0.0, nan],                      # (software conversions on gfx11: long code)
    "i32": [0, -1, 33],
    "i8": [0, -1, 1000],                     # an i8 tile computes in 32 bits, then saturates
    "scalar_fp32": [-0.0, 0.1, nan, 3],      # 3: an int, combined as a float
    "scalar_i32": [0, -1, 33, INT_MIN],
    "pow": [0.5],                            # the device library's powf is long: one constant
}
SENTINEL = -6  # what a comparison's hk.where picks where the comparison is false: in no VALUES


def numbers(row, dtype, kind="tile"):
    """The Python constants `row` meets beside operands of `dtype` (kind: of the other operand)."""
    if row.fn == "pow":
        return NUMBERS["pow"]
    if kind == "scalar":
        return NUMBERS["scalar_" + dtype]
    if dtype in ("fp8e4m3", "fp8e5m2"):
        return NUMBERS["fp8"]
    return NUMBERS["float" if dtype in FLOATS else dtype]


def scalar_dtype(dtype):
    """The device scalar that combines with elements of `dtype`."""
    return "fp32" if dtype in FLOATS else "i32"


# Numbers as docs/semantics.md defines them --------------------------------------------------

def f32(x):
    """x rounded to IEEE single, to nearest even (infinity beyond its range)."""
    return ctypes.c_float(x).value


def wrap(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def to_dtype(x, dtype):
    """x (a Python int or float) converted to `dtype` as docs/semantics.md's table says: to an
    integer toward zero, saturating, NaN -> 0; to a float to nearest even (an integer through
    fp32), beyond an fp8 format's range to its largest finite, infinity to NaN in e4m3."""
    if dtype in INTS:
        lo, hi = INT_RANGE[dtype]
        if isinstance(x, float):
            if x != x:
                return 0
            x = math.trunc(x) if math.isfinite(x) else (hi if x > 0 else lo)
        return max(lo, min(hi, x))
    x = f32(float(x))
    if dtype == "fp32" or x != x:
        return x
    if dtype in FP8_MAX:
        if math.isinf(x):
            return x if dtype == "fp8e5m2" else nan
        x = max(-FP8_MAX[dtype], min(FP8_MAX[dtype], x))
    return torch.tensor(x, dtype=torch.float32).to(TORCH[dtype]).float().item()


def fdiv(a, b):
    if b == 0:
        return nan if a == 0 or a != a else math.copysign(inf, a) * math.copysign(1.0, b)
    return f32(a / b)


def c_div(a, b):
    """Truncating division, x // 0 == 0, INT_MIN // -1 == INT_MIN."""
    if b == 0:
        return 0
    return wrap(abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1))


def c_rem(a, b):
    return a if b == 0 else wrap(a - c_div(a, b) * b)


def maxnum(a, b):
    """IEEE maxNum: a NaN operand yields the other."""
    return b if a != a else a if b != b else max(a, b)


def minnum(a, b):
    return b if a != a else a if b != b else min(a, b)


def fpow(a, b):
    return f32(torch.pow(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)).item())


# Each operator on values already in the compute type (fp32 as Python floats, integers as Python
# ints): the result before it is rounded or saturated to the result's dtype.
FLOAT_FNS = {
    "add": lambda a, b: f32(a + b), "sub": lambda a, b: f32(a - b), "mul": lambda a, b: f32(a * b),
    "div": fdiv, "pow": fpow, "max": maxnum, "min": minnum,
}
INT_FNS = {
    "add": lambda a, b: wrap(a + b), "sub": lambda a, b: wrap(a - b), "mul": lambda a, b: wrap(a * b),
    "div": c_div, "floordiv": c_div, "mod": c_rem, "max": max, "min": min,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: wrap(a << (b & 31)), "shr": lambda a, b: a >> (b & 31),
}
# Comparisons with NaN are false, except !=, which is true (Python's own).
COMPARE_FNS = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}
UNARY_FNS = {
    "neg": lambda a, is_float: -a if is_float else wrap(-a),
    "abs": lambda a, is_float: math.fabs(a) if is_float else wrap(abs(a)),
    "relu": lambda a, is_float: a if a != a or not a < 0 else (0.0 if is_float else 0),
}


# The table ---------------------------------------------------------------------------------------

ARITH_KINDS = (("tile", "tile"), ("tile", "scalar"), ("tile", "number"), ("number", "tile"), ("scalar", "tile"),
               ("vector", "vector"), ("vector", "scalar"), ("vector", "number"), ("number", "vector"),
               ("scalar", "vector"))
SCALAR_KINDS = (("scalar", "scalar"), ("scalar", "number"), ("number", "scalar"))
FUNCTION_KINDS = (("tile", "tile"), ("tile", "scalar"), ("tile", "number"), ("vector", "vector"),
                  ("vector", "scalar"), ("vector", "number"))
COMPARE_KINDS = (("tile", "tile"), ("tile", "scalar"), ("tile", "number"), ("number", "tile"), ("scalar", "tile"))


@dataclasses.dataclass(frozen=True)
class Row:
    """One operator of the language: how it is written ({a} and {b} its operands) and where the
    documentation says it applies."""

    name: str
    template: str
    kinds: tuple              # of (left, right) kind pairs, or of single kinds (unary)
    dtypes: tuple
    scalar_dtypes: tuple = ()  # dtypes of the ("scalar", "scalar") kinds and their numbers
    fn: str = ""              # the key of its answer in FLOAT_FNS / INT_FNS / COMPARE_FNS / UNARY_FNS
    approx: bool = False       # within a few ulp (the device library's pow), not bit for bit
    zero_sign_open: bool = False  # +0 and -0 are both right (docs/semantics.md: max, min)

    @property
    def unary(self):
        return isinstance(self.kinds[0], str)


def _arith(name, symbol, dtypes=ALL, scalar_dtypes=SCALARS):
    return Row(name, "{a} %s {b}" % symbol, ARITH_KINDS + SCALAR_KINDS, dtypes, scalar_dtypes, name)


def _bitwise(name, symbol):
    return Row(name, "{a} %s {b}" % symbol, ARITH_KINDS + SCALAR_KINDS, ("i32",), ("i32",), name)


def _compare(name, symbol):
    # On tiles a comparison is a mask, which hk.where reads; on scalars a value (converted to
    # the scalar's type) and, separately, the condition of an `if` (the "if" slots).
    return Row(name, "{a} %s {b}" % symbol, COMPARE_KINDS + SCALAR_KINDS, ALL, SCALARS, name)


TABLE = [
    _arith("add", "+"), _arith("sub", "-"), _arith("mul", "*"),
    _arith("div", "/", scalar_dtypes=("fp32",)),   # an integer scalar's / is refused: use //
    Row("pow", "{a} ** {b}", ARITH_KINDS, FLOATS, (), "pow", approx=True),
    # The same function as **: its own spelling, on the kinds where ** is tested at length.
    Row("hk.math.pow", "hk.math.pow({a}, {b})", (("tile", "tile"), ("vector", "vector")), FLOATS, (), "pow",
        approx=True),
    Row("hk.maximum", "hk.maximum({a}, {b})", FUNCTION_KINDS + SCALAR_KINDS, ALL, SCALARS, "max",
        zero_sign_open=True),
    Row("hk.minimum", "hk.minimum({a}, {b})", FUNCTION_KINDS + SCALAR_KINDS, ALL, SCALARS, "min",
        zero_sign_open=True),
    Row("floordiv", "{a} // {b}", SCALAR_KINDS, (), ("i32",), "floordiv"),
    Row("mod", "{a} % {b}", SCALAR_KINDS, (), ("i32",), "mod"),
    _bitwise("and", "&"), _bitwise("or", "|"), _bitwise("xor", "^"), _bitwise("shl", "<<"),
    _bitwise("shr", ">>"),
    _compare("lt", "<"), _compare("le", "<="), _compare("gt", ">"), _compare("ge", ">="),
    _compare("eq", "=="), _compare("ne", "!="),
    Row("where", "hk.where({a} > {b}, {a}, {b})", (("tile", "tile"), ("tile", "scalar"), ("tile", "number")),
        ALL, (), "where"),
    Row("neg", "-{a}", ("tile", "vector", "scalar"), ALL, SCALARS, "neg"),
    Row("hk.math.neg", "hk.math.neg({a})", ("tile", "vector"), ALL, (), "neg"),
    Row("hk.math.abs", "hk.math.abs({a})", ("tile", "vector"), ALL, (), "abs"),
    Row("hk.math.relu", "hk.math.relu({a})", ("tile", "vector"), ALL, (), "relu"),
] + [Row("to_" + d, "{a}.to(hk.%s)" % d, ("tile", "vector") + (("scalar",) if d in SCALARS else ()), ALL,
         SCALARS, "to") for d in ALL]  # a device scalar converts to fp32 or i32


@dataclasses.dataclass(frozen=True)
class Case:
    """One operator on one pair of operand kinds in one dtype."""

    row: Row
    kinds: tuple
    dtype: str

    @property
    def id(self):
        return "%s-%s-%s" % (self.row.name, "+".join(self.kinds), self.dtype)


def cases():
    """Every case the table documents."""
    out = []
    for row in TABLE:
        for kinds in row.kinds:
            kinds = (kinds,) if row.unary else kinds
            scalar_only = all(k in ("scalar", "number") for k in kinds)
            for dtype in (row.scalar_dtypes if scalar_only else row.dtypes):
                out.append(Case(row, kinds, dtype))
    return out
