"""Random valid DSL kernels, as source text, with the arguments to run them on.

A Program is one @hk.kernel: input tensors of random dtypes and shapes (ragged, smaller than a
tile, with batch and depth), scalar parameters, and a body of random statements: loads and
stores at coordinates inside, across and outside every edge (negative ones included), gathers
and scatters with padding ids, single elements, atomics, LDS round trips, arithmetic (with tiles,
device scalars and numbers on either side, bitwise on i32), casts, comparisons (masks for
hk.where; of float and int scalars as values and as branch conditions, NaN among the float
parameters), reductions, MMAs, device loops and branches. Each output tensor receives one
store; the generator knows how exactly the interpreter and the emulator must agree on it
(values.py). Everything is decided by the seed.
"""

import dataclasses
import math
import random
import re

from tests.fuzz.values import APPROX, EXACT, ROUNDED, V, arith, stored, worst

FLOATS = ["fp32", "bf16", "fp16", "fp8e4m3", "fp8e5m2"]
INTS = ["i32", "i8"]
APPROX_UNARY = ["exp", "exp2", "sin", "cos", "tanh", "sigmoid", "silu", "gelu"]
COMPARISONS = [">", ">=", "<", "<=", "==", "!="]
BITWISE = {"and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>"}


@dataclasses.dataclass
class Tensor:
    name: str
    dtype: str
    shape: tuple          # a torch shape, 1 to 4 dimensions
    role: str             # "in", "ids" (row ids for gather/scatter) or "out"
    kind: str = EXACT     # outputs: how the two runs must agree
    mag: float = 1.0


@dataclasses.dataclass
class Scalar:
    name: str
    dtype: str            # "int" or "float"
    value: object


@dataclasses.dataclass
class Program:
    name: str
    source: str
    tensors: list
    scalars: list
    grid: tuple
    warps: int
    seed: int
    body: list = None      # the kernel's body lines, for mutations
    head: list = None      # the lines before them
    first: object = None   # the first tile loaded (a V) and where from (a Tensor)
    first_from: object = None

    def with_body(self, body, name=None):
        """The program with another body (the same parameters): its source text."""
        return "\n".join(self.head + body + self.tail()) + "\n"

    def tail(self):
        # The call site of the generated module: launch errors name this line.
        return ["", "", "def run(args):", "    return %s(*args)" % self.name]

    @property
    def params(self):
        return [t.name for t in self.tensors] + [s.name for s in self.scalars]


def _dyadic(rng, hi=2):
    return rng.randint(-(2 ** (hi + 3)) + 1, 2 ** (hi + 3) - 1) / 8.0


class Generator:
    """One program from one seed."""

    def __init__(self, seed, name, focus=None):
        self.rng = random.Random(seed)
        self.seed, self.name, self.focus = seed, name, focus
        self.lines, self.indent = [], 1
        self.values = {}          # name -> V (the current binding of each name)
        self.used = set()         # names some statement read
        self.tensors, self.scalars = [], []
        self.counter = 0
        self.first = self.first_from = None
        r = self.rng
        # Small tiles and few tensors: the register budget (VGPRs, and the SGPRs each tensor's
        # view takes) is checked too, and a refused program tests nothing else.
        self.R, self.C = r.choice([(16, 16), (16, 32), (32, 16), (16, 64), (32, 32)])
        self.grid = r.choice([(1,), (1,), (2,), (2, 2)])
        self.warps = r.choice([1, 1, 1, 2])

    # Names and lines -----------------------------------------------------------------------------

    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def emit(self, text):
        self.lines.append("    " * self.indent + text)
        read = text.split(" = ", 1)[1] if " = " in text else text
        self.used.update(n for n in re.findall(r"[A-Za-z_]\w*", read) if n in self.values)

    def bind(self, v, expr):
        self.values[v.name] = v
        self.emit("%s = %s" % (v.name, expr))
        return v

    def pick(self, pred):
        options = [v for v in self.values.values() if pred(v)]
        fresh = [v for v in options if v.name not in self.used]
        if fresh and self.rng.random() < 0.7:
            options = fresh  # what nobody read yet, mostly: every load must be used
        return self.rng.choice(options) if options else None

    # Parameters --------------------------------------------------------------------------------

    def tensor(self, dtype, role, rows=None, cols=None):
        r = self.rng
        if role == "in":
            same = [t for t in self.tensors if t.role == "in" and t.dtype == dtype]
            if same and len(self.tensors) >= 5:
                return r.choice(same)
        rows = rows or r.choice([1, 5, self.R - 3, self.R, self.R + 7, 2 * self.R, 3 * self.R + 1])
        cols = cols or r.choice([3, self.C - 5, self.C, self.C + 9, 2 * self.C])
        rows, cols = max(rows, 1), max(cols, 1)
        shape = r.choice([(rows, cols), (rows, cols), (2, rows, cols), (2, 2, rows, cols), (cols,)])
        t = Tensor("%s%d" % ("x" if role != "out" else "o", len(self.tensors)), dtype, shape, role)
        self.tensors.append(t)
        return t

    def int_param(self, value=None):
        r = self.rng
        if value is None:
            value = r.choice([0, 1, 2, 3, -1, -2, 5, 2 ** 31 - 1, -2 ** 31, r.randint(-1000, 1000)])
        s = Scalar("n%d" % len(self.scalars), "int", value)
        self.scalars.append(s)
        self.values[s.name] = V(s.name, ("scalar",), "i32")
        return s

    def float_param(self):
        r = self.rng
        value = r.choice([_dyadic(r), _dyadic(r), 0.0, -0.0, 1.5, math.inf, -math.inf, math.nan])
        s = Scalar("f%d" % len(self.scalars), "float", value)
        self.scalars.append(s)
        special = not math.isfinite(value)
        self.values[s.name] = V(s.name, ("scalar",), "fp32", EXACT, lo=-3, hi=3, mag=math.inf if special else 8)
        return s

    # Coordinates -------------------------------------------------------------------------------

    def index(self, span):
        """A coordinate component: mostly inside; sometimes at or past the edge, before 0, from
        the grid or from a scalar parameter."""
        r = self.rng
        if r.random() < (0.85 if span < 2 else 0.6):
            return "0"
        options = ["1", "2", "-1", "3", "bx", "by"]
        ints = [s.name for s in self.scalars if s.dtype == "int"]
        if ints:
            options += [r.choice(ints), "%s + 1" % r.choice(ints)]
        choice = r.choice(options)
        if choice == "by" and len(self.grid) < 2:
            choice = "bx"
        return choice

    def coord(self):
        return ", ".join(self.index(k) for k in range(4))  # batch and depth: span 0, 1

    # Statements --------------------------------------------------------------------------------

    def tile_type(self, dtype, layout="row"):
        suffix = "" if layout == "row" else ', "col"'
        return "hk.RT(hk.%s, %d, %d%s)" % (dtype, self.R, self.C, suffix)

    def load(self, dtype=None):
        dtype = dtype or self.rng.choice(FLOATS + INTS + ["fp32", "fp32", "i32"])
        src = self.rng.choice([t for t in self.tensors if t.role == "in" and t.dtype == dtype] or
                              [self.tensor(dtype, "in")])
        v = V(self.fresh("t"), ("tile", self.R, self.C), dtype, EXACT, lo=-3, hi=3, mag=8)
        if self.first is None:
            self.first, self.first_from = v, src
        return self.bind(v, "%s[%s].load(%s)" % (src.name, self.coord(), self.tile_type(dtype)))

    def vector_load(self):
        dtype = self.rng.choice(["fp32", "i32", "bf16"])
        src = self.rng.choice([t for t in self.tensors if t.role == "in" and t.dtype == dtype] or
                              [self.tensor(dtype, "in")])
        axis = self.rng.choice(["col", "row"])
        n = self.R if axis == "col" else self.C
        v = V(self.fresh("v"), ("vec", n, axis), dtype, EXACT, lo=-3, hi=3, mag=8)
        return self.bind(v, '%s[%s].load(hk.RV(hk.%s, %d, "%s"))' % (src.name, self.coord(), dtype, n, axis))

    def binary(self):
        a = self.pick(lambda v: v.is_tile)
        if a is None:
            return self.load()
        r = self.rng
        ops = ["add", "sub", "mul", "div", "max", "min"] + (list(BITWISE) if a.dtype == "i32" else [])
        op = r.choice(ops)
        b = self.pick(lambda v: v.is_tile and v.dtype == a.dtype and v is not a)
        scalar = self.pick(lambda v: v.is_scalar and v.dtype == ("fp32" if a.is_float else "i32"))
        tile_b = False
        if scalar is not None and (b is None or r.random() < 0.2):
            # A device scalar: a float parameter (NaN, infinities and -0.0 among its values) with
            # float tiles, an int one with integer tiles.
            b = scalar
        elif b is None or r.random() < 0.3:
            # A constant operand: a small dyadic for floats, any int (wrapping) for integers.
            value = _dyadic(r, 1) if a.is_float else r.choice([0, 1, -1, 3, 127, 2 ** 31 - 1, -5, 33])
            if op == "div" and a.is_float and value == 0:
                value = 0.5
            b = V(repr(float(value)) if a.is_float else str(value), a.shape, a.dtype, EXACT, lo=-3, hi=2, mag=2)
        else:
            tile_b = True
        if (a.mag == math.inf or b.mag == math.inf) and APPROX in (a.kind, b.kind):
            return None
        # A scalar or number on the left (1.5 - t, f0 / t) takes the same rounding as on the right.
        swap = not tile_b and op not in ("max", "min") and r.random() < 0.4
        left, right = (b, a) if swap else (a, b)
        if op in BITWISE:
            v = V(self.fresh("t"), a.shape, "i32")
            return self.bind(v, "%s %s %s" % (left.name, BITWISE[op], right.name))
        sym = {"add": "%s + %s", "sub": "%s - %s", "mul": "%s * %s", "div": "%s / %s",
               "max": "hk.maximum(%s, %s)", "min": "hk.minimum(%s, %s)"}[op]
        v = arith(op, a, b, a.dtype)
        v.name = self.fresh("t")
        return self.bind(v, sym % (left.name, right.name))

    def unary(self):
        a = self.pick(lambda v: (v.is_tile or v.is_vec) and v.is_float)
        if a is None:
            return None
        r = self.rng
        fn = r.choice(["abs", "neg", "relu", "round", "floor", "sqrt"] + APPROX_UNARY)
        name = self.fresh("t")
        if fn in ("abs", "neg", "relu"):
            v = dataclasses.replace(a, name=name, prod=a.prod and fn == "neg")
        elif fn in ("round", "floor"):
            if not a.compares:
                return None
            v = dataclasses.replace(a, name=name, lo=max(a.lo, 0), prod=False)
        elif fn == "sqrt":
            v = dataclasses.replace(a, name=name, kind=worst(a.kind, ROUNDED), prod=False,
                                    mag=math.sqrt(a.bound()) if a.bound() < math.inf else math.inf)
        else:
            if a.bound() > 8 or a.bound() == math.inf:
                return None
            mag = {"exp": math.exp(a.bound()), "exp2": 2 ** a.bound(), "silu": a.bound(), "gelu": a.bound()}
            v = dataclasses.replace(a, name=name, kind=APPROX, prod=False, mag=mag.get(fn, 1.0))
        return self.bind(v, "hk.math.%s(%s)" % (fn, a.name))

    def cast(self):
        a = self.pick(lambda v: v.is_tile)
        if a is None:
            return None
        target = self.rng.choice(FLOATS + INTS)
        if target in INTS and not a.compares:
            return None
        v = stored(dataclasses.replace(a, name=self.fresh("t")), target)
        if target in INTS:
            v.kind = EXACT
        return self.bind(v, "%s.to(hk.%s)" % (a.name, target))

    def select(self):
        a = self.pick(lambda v: v.is_tile and v.dtype in ("fp32", "i32", "bf16", "fp16") and v.compares)
        if a is None:
            return None
        b = self.pick(lambda v: v.is_tile and v.dtype == a.dtype and v.compares) or a
        pred = self.rng.choice(COMPARISONS)
        # What is picked where the comparison fails: a tile, a number, or a device scalar (a float
        # parameter may be NaN or infinite: the selection stays exact, its magnitude does not).
        scalar = self.pick(lambda v: v.is_scalar and v.dtype == ("i32" if a.dtype == "i32" else "fp32"))
        options = [b, V("0" if a.dtype == "i32" else "-1.5", a.shape, a.dtype, EXACT, lo=-1, hi=1, mag=2)]
        if scalar is not None:
            options.append(scalar)
        other = self.rng.choice(options)
        v = dataclasses.replace(a, name=self.fresh("t"), kind=worst(a.kind, b.kind), lo=min(a.lo, b.lo, -3),
                                hi=max(a.hi, b.hi, 1), prod=False, mag=max(a.bound(), b.bound(), other.bound(), 2))
        # The comparison's right side: the other tile, or a number on either side.
        number = "1" if a.dtype == "i32" else "0.5"
        cond = self.rng.choice(["%s %s %s" % (a.name, pred, b.name), "%s %s %s" % (a.name, pred, number),
                                "%s %s %s" % (number, pred, a.name)])
        return self.bind(v, "hk.where(%s, %s, %s)" % (cond, a.name, other.name))

    def reduce(self):
        a = self.pick(lambda v: v.is_tile and v.dtype in ("fp32", "bf16", "i32"))
        if a is None:
            return None
        r = self.rng
        fn, axis = r.choice(["sum", "max", "min"]), r.choice(["row", "col"])
        n = self.C if axis == "row" else self.R
        out = V(self.fresh("v"), ("vec", self.R if axis == "row" else self.C, "col" if axis == "row" else "row"),
                a.dtype, a.kind, a.lo, a.hi, a.bound(), False)
        if fn == "sum" and a.is_float:
            out.hi, out.mag = a.hi + int(math.ceil(math.log2(n))), a.bound() * n
            if a.kind != EXACT or out.hi - out.lo > 24:
                out.kind = APPROX  # the order of the sum differs
            out = stored(out, a.dtype)
        self.bind(out, "hk.%s_%s(%s)" % (axis, fn, a.name))
        # Back to a tile: combine with the tile it came from, or broadcast it.
        if r.random() < 0.5:
            op = r.choice(["add", "sub", "mul", "max", "min"])
            t = arith(op, a, out, a.dtype)
            t.shape, t.name = a.shape, self.fresh("t")
            return self.bind(t, "hk.%s_%s(%s, %s)" % (op, "row" if out.shape[2] == "col" else "col", a.name, out.name))
        t = dataclasses.replace(out, name=self.fresh("t"), shape=a.shape)
        return self.bind(t, "hk.broadcast(%s, %s)" % (out.name, self.tile_type(a.dtype)))

    def store(self, v=None):
        v = v or self.pick(lambda v: v.is_tile or v.is_vec)
        if v is None:
            return None
        out = self.tensor(v.dtype, "out")
        out.kind, out.mag = v.kind, v.bound()
        self.emit("%s[%s] = %s" % (out.name, self.coord(), v.name))
        return out

    def scalar_stmt(self):
        r = self.rng
        ints = [s.name for s in self.scalars if s.dtype == "int"]
        floats = [s.name for s in self.scalars if s.dtype == "float"]
        if ints and (not floats or r.random() < 0.6):
            a, b = r.choice(ints), r.choice(ints + ["3", "0", "-7", "31", "33"])
            op = r.choice(["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"])
            expr = "(%s %s %s)" % ((b, op, a) if r.random() < 0.2 else (a, op, b))
            if r.random() < 0.2:  # a comparison as a value
                expr = "(%s %s %s).to(hk.i32)" % (a, r.choice(COMPARISONS), b)
            if r.random() < 0.5:
                expr = "hk.maximum(%s, %s)" % (expr, r.choice(ints + ["-4"]))
            name = self.fresh("s")
            self.emit("%s = %s" % (name, expr))
            # As a float, into a tile: exact when it fits 24 bits (it may not: then rounded alike).
            t = V(self.fresh("t"), ("tile", self.R, self.C), "fp32", ROUNDED, mag=2.0 ** 31)
            return self.bind(t, "hk.zeros(%s) + %s.to(hk.fp32)" % (self.tile_type("fp32"), name))
        if floats:
            a, b = r.choice(floats), r.choice(floats)
            # Comparisons (NaN among the parameters' values: != is true with it, the rest false)
            # give 0 or 1, exactly; so do the sign flips and the subtraction of a small dyadic.
            compare = "(%s %s %s).to(hk.fp32)" % (a, r.choice(COMPARISONS), r.choice([b, a, "0.5", "-0.0"]))
            expr = r.choice(["%s * 0.5 + 1.0" % a, "%s / 3.0" % a, "%s - 0.25" % a, "hk.maximum(%s, 0.125)" % a,
                             "1.5 / %s" % a, "0.25 - %s" % a, "-%s" % a, compare, compare])
            name = self.fresh("s")
            self.emit("%s = %s" % (name, expr))
            kind = ROUNDED if ("/" in expr or "*" in expr) else EXACT
            if "*" in expr:
                kind = APPROX  # the multiply-add may fuse
            if expr == compare:
                t = V(self.fresh("t"), ("tile", self.R, self.C), "fp32", EXACT, lo=0, hi=1, mag=1)
                return self.bind(t, "hk.zeros(%s) + %s" % (self.tile_type("fp32"), name))
            special = self.values[a].mag == math.inf
            t = V(self.fresh("t"), ("tile", self.R, self.C), "fp32", kind, lo=-3, hi=4,
                  mag=math.inf if special or "1.5 /" in expr else 8)
            if t.mag == math.inf and kind == APPROX:
                return None
            return self.bind(t, "hk.zeros(%s) + %s" % (self.tile_type("fp32"), name))
        return None

    def scalar_memory(self):
        r = self.rng
        dtype = r.choice(["fp32", "i32", "bf16"])
        src = self.rng.choice([t for t in self.tensors if t.role == "in" and t.dtype == dtype] or
                              [self.tensor(dtype, "in")])
        name = self.fresh("s")
        self.emit("%s = %s.load_scalar(%s)" % (name, src.name, self.coord()))
        out = self.tensor(dtype, "out")
        if dtype in ("fp32", "i32") and r.random() < 0.4 and self.warps == 1:
            out.kind = EXACT
            self.emit("%s.atomic_add(%s, %s)" % (out.name, self.coord(), name))
        else:
            self.emit("%s.store_scalar(%s, %s)" % (out.name, self.coord(), name))

    def rows_by_index(self):
        dtype = self.rng.choice(["fp32", "bf16", "i32"])
        table = self.tensor(dtype, "in", rows=self.rng.choice([7, 40]))
        ids = self.tensor("i32", "ids", rows=1, cols=self.R)
        ids.shape = (self.R,)
        idv = self.fresh("ids")
        self.emit('%s = %s[0, 0, 0, 0].load(hk.RV(hk.i32, %d, "col"))' % (idv, ids.name, self.R))
        c = self.rng.choice(["0", "1", "-1", "bx"])
        v = V(self.fresh("t"), ("tile", self.R, self.C), dtype, EXACT, lo=-3, hi=3, mag=8)
        self.bind(v, "hk.gather(%s, hk.tile_coord(%s, 0, 0, %s), %s, %s)"
                  % (table.name, self.rng.choice(["0", "1", "-1"]), c, idv, self.tile_type(dtype)))
        out = self.tensor(dtype, "out", rows=self.rng.choice([9, 40]))
        out.shape = out.shape[-2:] if len(out.shape) > 1 else (9, out.shape[0])
        self.emit("hk.scatter(%s, hk.tile_coord(0, 0, 0, %s), %s, %s)" % (out.name, c, idv, v.name))

    def lds(self):
        v = self.pick(lambda v: v.is_tile and v.dtype in ("fp32", "bf16", "fp16", "i32"))
        if v is None:
            return None
        buffers = self.rng.choice([1, 2])
        buf = self.rng.randrange(buffers)
        sh = self.fresh("sh")
        self.emit("%s = hk.lds.alloc(hk.ST(hk.%s, %d, %d, %d))" % (sh, v.dtype, self.R, self.C, buffers))
        if self.rng.random() < 0.5:
            src = self.rng.choice([t for t in self.tensors if t.role == "in" and t.dtype == v.dtype] or
                                  [self.tensor(v.dtype, "in")])
            self.emit("hk.lds.copy_to(%s, %d, %s, hk.tile_coord(%s))" % (sh, buf, src.name, self.coord()))
            self.emit("hk.arch.barrier()")
            t = V(self.fresh("t"), v.shape, v.dtype, EXACT, lo=-3, hi=3, mag=8)
            self.bind(t, "%s[%d].load(%s)" % (sh, buf, self.tile_type(v.dtype)))
            out = self.tensor(v.dtype, "out")
            out.kind, out.mag = t.kind, t.bound()
            self.emit("hk.arch.barrier()")
            self.emit("hk.lds.copy_from(%s, hk.tile_coord(%s), %s, %d)" % (out.name, self.coord(), sh, buf))
            return t
        self.emit("%s[%d].store(%s)" % (sh, buf, v.name))
        t = dataclasses.replace(v, name=self.fresh("t"))
        return self.bind(t, "%s[%d].load(%s)" % (sh, buf, self.tile_type(v.dtype)))

    def mma(self):
        dt = self.rng.choice(["bf16", "fp16"])
        a_src = self.tensor(dt, "in", rows=16, cols=32)
        b_src = self.tensor(dt, "in", rows=32, cols=16)
        a, b, c = self.fresh("ma"), self.fresh("mb"), self.fresh("t")
        self.emit("%s = %s[0, 0, 0, 0].load(hk.RT(hk.%s, 16, 32))" % (a, a_src.name, dt))
        self.emit('%s = %s[0, 0, 0, 0].load(hk.RT(hk.%s, 32, 16, "col"))' % (b, b_src.name, dt))
        self.emit("%s = hk.mma_AB(%s, %s, hk.zeros(hk.RT(hk.fp32, 16, 16)))" % (c, a, b))
        out = self.tensor("fp32", "out", rows=16, cols=16)
        out.kind, out.mag = EXACT, 32 * 16.0  # products of k/8 (|k| < 32) and sums of 32: exact
        self.emit("%s[0, 0, 0, 0] = %s" % (out.name, c))

    def loop(self):
        acc = self.pick(lambda v: v.is_tile and v.dtype in ("fp32", "i32") and v.kind == EXACT)
        if acc is None:
            return None
        n = self.int_param(self.rng.choice([0, 1, 2, 3]))
        src = self.rng.choice([t for t in self.tensors if t.role == "in" and t.dtype == acc.dtype] or
                              [self.tensor(acc.dtype, "in")])
        i = self.fresh("i")
        self.emit("for %s in hk.range(%s):" % (i, n.name))
        self.indent += 1
        step = V(self.fresh("t"), acc.shape, acc.dtype, EXACT, lo=-3, hi=3, mag=8)
        self.bind(step, "%s[0, 0, %s, %s].load(%s)" % (src.name, i, self.index(0), self.tile_type(acc.dtype)))
        op = self.rng.choice(["add", "max"])
        cur = acc
        for _ in range(max(n.value, 1)):
            cur = arith(op, cur, step, acc.dtype)
        cur.name, cur.shape = acc.name, acc.shape
        self.values[acc.name] = cur
        self.emit("%s = %s" % (acc.name, "%s + %s" % (acc.name, step.name) if op == "add" else
                               "hk.maximum(%s, %s)" % (acc.name, step.name)))
        self.used.discard(acc.name)  # the loop's value must be read too, or its loads are dead
        self.indent -= 1
        del self.values[step.name]  # bound only inside the device loop
        return cur

    def branch(self):
        v = self.pick(lambda v: v.is_tile and v.is_float and v.kind == EXACT and v.dtype == "fp32")
        ints = [s for s in self.scalars if s.dtype == "int"]
        floats = [s for s in self.scalars if s.dtype == "float"]
        if v is None or not (ints or floats):
            return None
        r = self.rng
        if floats and (not ints or r.random() < 0.5):
            # On a float parameter, which may be NaN (where only != holds), an infinity or -0.0.
            f = r.choice(floats)
            other = r.choice([f.name, "0.0", "-0.0", "1.5", r.choice(floats).name])
            self.emit("if %s %s %s:" % (f.name, r.choice(COMPARISONS), other))
        else:
            s = r.choice(ints)
            self.emit("if %s > %d:" % (s.name, r.choice([-1, 0, 2])))
        self.indent += 1
        self.emit("%s = %s * 2.0" % (v.name, v.name))
        self.indent -= 1
        if r.random() < 0.5:
            self.emit("else:")
            self.indent += 1
            self.emit("%s = -%s" % (v.name, v.name))
            self.indent -= 1
        after = arith("mul", v, V("2.0", v.shape, "fp32", EXACT, 0, 2, 2), "fp32")
        after.name, after.shape = v.name, v.shape
        self.values[v.name] = after
        self.used.discard(v.name)  # what the branch yields must be read (stored) after it
        return after

    def misc(self):
        r = self.rng
        choice = r.choice(["iota", "rand", "mask", "full"])
        t = V(self.fresh("t"), ("tile", self.R, self.C), "i32")
        if choice == "iota":
            return self.bind(t, 'hk.iota(%s, "%s")' % (self.tile_type("fp32"), r.choice(["row", "col"])))
        if choice == "rand":
            it = self.fresh("t")
            self.emit('%s = hk.iota(%s, "col") + hk.iota(%s, "row") * %d' % (it, self.tile_type("fp32"),
                                                                             self.tile_type("fp32"), self.C))
            t = V(t.name, t.shape, "fp32", ROUNDED, mag=1.0)
            return self.bind(t, "hk.rand(%d, %s)" % (r.randint(0, 99), it))
        if choice == "mask":
            a = self.pick(lambda v: v.is_tile and v.dtype == "fp32")
            if a is None:
                return None
            kind = r.choice(["causal", "tril", "triu"])
            v = dataclasses.replace(a, name=t.name, prod=False)
            extra = ", diagonal=%d" % r.randint(-3, 3) if kind != "causal" else ""
            return self.bind(v, "hk.%s(%s, %s, %s%s, value=0.0)" % (kind, a.name, self.index(0), self.index(0), extra))
        value = _dyadic(r)
        t = V(t.name, t.shape, "fp32", EXACT, lo=-3, hi=3, mag=8)
        return self.bind(t, "hk.full(%s, %r)" % (self.tile_type("fp32"), value))

    # The program -------------------------------------------------------------------------------

    STATEMENTS = {"load": 4, "binary": 6, "unary": 3, "cast": 3, "select": 2, "reduce": 2,
                  "vector_load": 1, "scalar_stmt": 2, "scalar_memory": 2, "rows_by_index": 1,
                  "lds": 1, "mma": 1, "loop": 1, "branch": 1, "misc": 2}

    def generate(self):
        r = self.rng
        for _ in range(r.randint(0, 2)):
            self.int_param()
        if r.random() < 0.5:
            self.float_param()
        self.emit("bx = hk.arch.block_idx.x")
        if len(self.grid) > 1:
            self.emit("by = hk.arch.block_idx.y")
        weights = dict(self.STATEMENTS)
        if self.focus:
            for k in self.focus:
                weights[k] = weights.get(k, 1) * 6
        names, w = zip(*weights.items())
        self.load()
        for _ in range(r.randint(3, 9)):
            if len(self.tensors) >= 6:
                break
            getattr(self, r.choices(names, w)[0])()
        for _ in range(r.randint(1, 3)):
            self.store()
        # A load nobody reads is refused (its wait would never come): store what is left.
        left = [v for v in self.values.values() if (v.is_tile or v.is_vec) and v.name not in self.used]
        for v in left:
            self.store(v)
        params = ["%s: hk.Tensor[hk.%s]" % (t.name, t.dtype) for t in self.tensors]
        params += ["%s: %s" % (s.name, s.dtype) for s in self.scalars]
        head = ["import hk", "", "",
                "@hk.kernel(grid=%r, warps=%d, name=%r)" % (self.grid, self.warps, self.name),
                "def %s(%s):" % (self.name, ", ".join(params))]
        p = Program(self.name, "", self.tensors, self.scalars, self.grid, self.warps, self.seed,
                    list(self.lines), head, self.first, self.first_from)
        p.source = p.with_body(p.body)
        return p


def generate(seed, name=None, focus=None):
    """The valid program of `seed`."""
    return Generator(seed, name or "fz%d" % seed, focus).generate()
