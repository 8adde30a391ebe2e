"""The values a kernel computes with while it is traced, and their operators.

Each wraps an MLIR value and knows its hk type; operators emit hk or arith operations at the
user's line. Python numbers mix in freely and become constants.
"""

from hk import types
from hk.dsl import builder as _b
from hk.errors import TraceError


def _hk():
    return _b.current()


class Value:
    """Base of the traced values."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __bool__(self):
        raise TraceError(
            "a device value has no Python truth value while the kernel is traced",
            hint="an `if` or `while` on device values is rewritten into scf control flow only "
                 "where it stands directly in the kernel body; use hk.where for "
                 "elementwise choices, or compute the condition from Python constants")

    def __iter__(self):
        raise TraceError("a device value cannot be iterated while the kernel is traced",
                         hint="loop with `for i in hk.range(n)`")


class _Undefined:
    """A name the kernel binds on some paths only: any use is an error at the line that uses it.

    UNDEFINED is a name one branch of a device `if` binds and the other does not; the variable
    of a device loop after the loop, a name first bound inside a device loop, and the variable
    of an unrolled loop that ran no iteration are others.
    """

    __slots__ = ("why", "remedy")

    def __init__(self, why, remedy):
        self.why, self.remedy = why, remedy

    def __repr__(self):
        return "<undefined: %s>" % self.why

    def fail(self, *args, **kwargs):
        raise TraceError("this value is %s" % self.why, hint=self.remedy)

    def __getattr__(self, name):
        # Introspection (hasattr(v, "__dict__"), copy, pickle) asks for dunder names and expects
        # AttributeError: the undefined markers are module globals that tools scanning modules meet.
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self.fail()

    __call__ = __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = fail
    __getitem__ = __neg__ = __bool__ = __iter__ = __index__ = __int__ = __float__ = fail
    __lt__ = __le__ = __gt__ = __ge__ = fail


UNDEFINED = _Undefined("bound in only one branch of an `if` on a device value",
                       "assign it before the `if` or in both branches")
DEVICE_LOOP_VARIABLE = _Undefined(
    "the variable of a device loop (hk.range), which has no value after the loop",
    "keep the value you need in a variable assigned inside the loop (carried out of it)")
DEVICE_LOOP_LOCAL = _Undefined(
    "assigned only inside a device loop (hk.range or a while on device values), so it has no "
    "value after the loop",
    "assign it before the loop: a name bound before a device loop is carried out of it")
NO_ITERATION = _Undefined("the variable of a loop that ran no iteration, so it was never bound",
                          "bind it before the loop")


def check_defined(value):
    """Raises the error of an undefined value (at the user's line); returns the value."""
    if isinstance(value, _Undefined):
        value.fail()
    return value


# Scalars ---------------------------------------------------------------------------------------

_INDEX = "index"


def _scalar_type(value):
    return str(value.type)


def _bits(type_text):
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(type_text, 32)


def scalar(x, like="index"):
    """`x` as a Scalar: Scalars pass through, Python numbers become constants of type `like`."""
    if isinstance(x, Scalar):
        return x
    check_defined(x)
    if isinstance(x, bool):
        return Scalar(_hk().constant("i1", int(x)))
    if isinstance(x, int):
        if like == _INDEX:
            return Scalar(_hk().index_constant(x))
        return Scalar(_hk().constant(like, x if like in ("i32", "i64", "i8", "i1") else float(x)))
    if isinstance(x, float):
        return Scalar(_hk().constant(like if like in ("f32", "f16", "bf16") else "f32", x))
    raise TraceError("expected a number or a device scalar but got %s" % type(x).__name__)


def _as_index(s):
    """Index arithmetic: i32 scalars are cast to index."""
    b = _hk()
    if s.type_text == _INDEX:
        return s
    if s.type_text in ("i32", "i64"):
        with b.loc():
            return Scalar(b.d.arith.index_cast(b.ir.IndexType.get(b.context), s.v))
    raise TraceError("expected an integer scalar but got %s" % s.type_text)


class Scalar(Value):
    """A scalar: an index, an integer or a float, uniform or per lane."""

    __slots__ = ()

    @property
    def type_text(self):
        return _scalar_type(self.v)

    @property
    def is_float(self):
        return self.type_text in ("f32", "f16", "bf16", "f64")

    def _coerce(self, other):
        """Both operands as Scalars of one type (ints follow the other side's type)."""
        if isinstance(other, (int, float)) and not isinstance(other, Scalar):
            like = self.type_text
            if isinstance(other, float) and not self.is_float:
                raise TraceError("cannot combine the integer device value with the float %r" % other,
                                 hint="convert it explicitly with .to(hk.fp32)")
            return self, scalar(other, like)
        if isinstance(other, Scalar):
            a, b = self, other
            if a.type_text != b.type_text:
                if {a.type_text, b.type_text} <= {"index", "i32", "i64"}:
                    return _as_index(a), _as_index(b)
                raise TraceError("cannot combine device scalars of types %s and %s"
                                 % (a.type_text, b.type_text))
            return a, b
        return NotImplemented, None

    def _binary(self, other, int_op, float_op, reverse=False, sym=None):
        a, b = self._coerce(other)
        if a is NotImplemented:
            return NotImplemented
        if reverse:
            a, b = b, a
        builder = _hk()
        op = float_op if a.is_float else int_op
        if op is None:
            raise TraceError("%s is not defined on %s scalars" % (sym, a.type_text),
                             hint=_UNDEFINED_HINTS[sym, a.is_float])
        with builder.loc():
            return Scalar(getattr(builder.d.arith, op)(a.v, b.v))

    def __add__(self, o): return self._binary(o, "addi", "addf")
    def __radd__(self, o): return self._binary(o, "addi", "addf", True)
    def __sub__(self, o): return self._binary(o, "subi", "subf")
    def __rsub__(self, o): return self._binary(o, "subi", "subf", True)
    def __mul__(self, o): return self._binary(o, "muli", "mulf")
    def __rmul__(self, o): return self._binary(o, "muli", "mulf", True)
    def __floordiv__(self, o): return self._binary(o, "divsi", None, sym="//")
    def __rfloordiv__(self, o): return self._binary(o, "divsi", None, True, "//")
    def __truediv__(self, o): return self._binary(o, None, "divf", sym="/")
    def __rtruediv__(self, o): return self._binary(o, None, "divf", True, "/")
    def __mod__(self, o): return self._binary(o, "remsi", None, sym="%")
    def __rmod__(self, o): return self._binary(o, "remsi", None, True, "%")
    def __and__(self, o): return self._binary(o, "andi", None, sym="&")
    def __rand__(self, o): return self._binary(o, "andi", None, True, "&")
    def __or__(self, o): return self._binary(o, "ori", None, sym="|")
    def __ror__(self, o): return self._binary(o, "ori", None, True, "|")
    def __xor__(self, o): return self._binary(o, "xori", None, sym="^")
    def __rxor__(self, o): return self._binary(o, "xori", None, True, "^")
    def __lshift__(self, o): return self._binary(o, "shli", None, sym="<<")
    def __rlshift__(self, o): return self._binary(o, "shli", None, True, "<<")
    def __rshift__(self, o): return self._binary(o, "shrsi", None, sym=">>")
    def __rrshift__(self, o): return self._binary(o, "shrsi", None, True, ">>")

    def __neg__(self):
        # Floats flip the sign (-(0.0) is -0.0, which 0.0 - x would not give); integers wrap.
        return 0 - self if not self.is_float else self * -1.0

    def __pow__(self, o):
        if isinstance(o, _Register):
            return NotImplemented  # s ** tile: the tile's
        raise TraceError("** takes register tiles and vectors, not a device scalar",
                         hint="multiply the scalar by itself, or raise a tile: hk.full(spec, 0.0) + s")

    def __rpow__(self, o):
        return self.__pow__(o)

    def to(self, dtype):
        """This scalar converted to `dtype` (hk.fp32 or hk.i32)."""
        if not isinstance(dtype, types.DType) or (not dtype.is_float and dtype != types.i32
                                                   and self.type_text != dtype.mlir):
            raise TraceError("a device scalar converts to hk.i32 or a float dtype (hk.fp32, hk.bf16, "
                             "hk.fp16), not %r" % (dtype,),
                             hint="keep device integers as hk.i32; narrow them in a tile, with .to(%r)" % (dtype,)
                             if isinstance(dtype, types.DType) else "pass an hk dtype such as hk.fp32")
        b = _hk()
        ir, arith = b.ir, b.d.arith
        target = b.type(dtype.mlir)
        with b.loc():
            if self.type_text == dtype.mlir:
                return self
            if self.type_text == _INDEX:
                as_int = arith.index_cast(ir.IntegerType.get_signless(32, b.context), self.v)
                return Scalar(as_int) if not dtype.is_float else Scalar(arith.sitofp(target, as_int))
            if self.type_text == "i1":  # a comparison: 0 or 1
                as_int = arith.extui(ir.IntegerType.get_signless(32, b.context), self.v)
                return Scalar(as_int).to(dtype)
            if dtype.is_float and not self.is_float:
                return Scalar(arith.sitofp(target, self.v))
            if not dtype.is_float and self.is_float:
                return Scalar(arith.fptosi(target, self.v))
            if dtype.is_float:
                return Scalar(arith.extf(target, self.v) if dtype.bits > _bits(self.type_text)
                              else arith.truncf(target, self.v))
            return Scalar(arith.index_cast(target, self.v))

    def _compare(self, other, ipred, fpred):
        a, b = self._coerce(other)
        if a is NotImplemented:
            return NotImplemented
        builder = _hk()
        arith = builder.d.arith
        with builder.loc():
            if a.is_float:
                return Scalar(arith.cmpf(getattr(arith.CmpFPredicate, fpred), a.v, b.v))
            return Scalar(arith.cmpi(getattr(arith.CmpIPredicate, ipred), a.v, b.v))

    # Ordered predicates (false with NaN) but for !=, which is unordered: true with NaN, as in
    # Python and on tiles (docs/semantics.md).
    def __lt__(self, o): return self._compare(o, "slt", "OLT")
    def __le__(self, o): return self._compare(o, "sle", "OLE")
    def __gt__(self, o): return self._compare(o, "sgt", "OGT")
    def __ge__(self, o): return self._compare(o, "sge", "OGE")
    def __eq__(self, o): return self._compare(o, "eq", "OEQ")
    def __ne__(self, o): return self._compare(o, "ne", "UNE")
    __hash__ = None


_UNDEFINED_HINTS = {
    ("//", True): "// and % take integer scalars; convert with .to(hk.i32) first",
    ("%", True): "// and % take integer scalars; convert with .to(hk.i32) first",
    ("/", False): "divide integers with // (truncating toward zero), or convert with .to(hk.fp32) first",
    ("&", True): "bitwise operators take integer scalars",
    ("|", True): "bitwise operators take integer scalars",
    ("^", True): "bitwise operators take integer scalars",
    ("<<", True): "shifts take integer scalars",
    (">>", True): "shifts take integer scalars",
}


# Coordinates, global views ------------------------------------------------------------------

class Coord(Value):
    """A tile coordinate (batch, depth, row, col) in units of the tile it indexes."""

    __slots__ = ()


class Global(Value):
    """A kernel's tensor parameter: a 4-D view of global memory."""

    __slots__ = ("dtype", "name")

    def __init__(self, v, dtype, name):
        super().__init__(v)
        self.dtype = dtype
        self.name = name

    def _extent(self, which):
        b = _hk()
        with b.loc():
            return Scalar(b.d.hk.extent(getattr(b.d.hk.Extent, which), self.v))

    batch = property(lambda self: self._extent("batch"), doc="extent of the batch dimension")
    depth = property(lambda self: self._extent("depth"), doc="extent of the depth dimension")
    rows = property(lambda self: self._extent("rows"), doc="extent of the rows dimension")
    cols = property(lambda self: self._extent("cols"), doc="extent of the cols dimension")

    def __getitem__(self, coord):
        from hk.dsl import operands

        return TileRef(self, operands.coord(coord, "%s[...]" % self.name))

    def __setitem__(self, coord, value):
        from hk.dsl import operands

        TileRef(self, operands.coord(coord, "%s[...]" % self.name)).store(value)

    def load_scalar(self, b, d, r, c):
        """One element at (b, d, r, c)."""
        from hk.dsl import operands

        builder = _hk()
        idx = operands.element_index(self, "load_scalar", b, d, r, c)
        with builder.loc():
            return Scalar(builder.d.hk.load_scalar(builder.type(self.dtype.mlir), self.v, idx))

    def store_scalar(self, b, d, r, c, value):
        from hk.dsl import operands

        builder = _hk()
        idx = operands.element_index(self, "store_scalar", b, d, r, c)
        value = operands.element(self, value, "store_scalar")
        with builder.loc():
            builder.d.hk.store_scalar(value.v, self.v, idx)

    def atomic_add(self, b, d, r, c, value):
        """Atomically adds `value` to the element at (b, d, r, c) of an fp32 or i32 view, once per wave."""
        from hk.dsl import operands

        if self.dtype not in (types.fp32, types.i32):
            raise TraceError("%s.atomic_add adds to an hk.fp32 or hk.i32 tensor, and %s is a tensor of %r"
                             % (self.name, self.name, self.dtype),
                             hint="accumulate into an fp32 (or i32) tensor and convert it afterwards")
        builder = _hk()
        idx = operands.element_index(self, "atomic_add", b, d, r, c)
        value = operands.element(self, value, "atomic_add")
        with builder.loc():
            builder.d.hk.atomic_add(value.v, self.v, idx)


class TileRef:
    """`tensor[coord]`: the tile at `coord`, loaded or stored with the tile's type."""

    __slots__ = ("g", "coord")

    def __init__(self, g, coord):
        self.g = g
        self.coord = coord

    def load(self, spec):
        """Loads the tile (or vector) of type `spec` at this coordinate; outside the tensor: 0."""
        if not isinstance(spec, (types.RT, types.RV)):
            raise TraceError(".load() takes a register tile or vector type such as "
                             "hk.RT(hk.bf16, 16, 64), not %r" % (spec,))
        if spec.dtype != self.g.dtype:
            raise TraceError("cannot load %r elements from %s, a tensor of %r"
                             % (spec.dtype, self.g.name, self.g.dtype),
                             hint="load with the tensor's dtype, then convert with .to(...)")
        b = _hk()
        with b.loc():
            v = b.d.hk.load(b.type(spec.mlir()), self.g.v, self.coord.v)
        return wrap(v, spec)

    def store(self, value):
        check_defined(value)
        if not isinstance(value, (Tile, Vector)):
            raise TraceError("only a register tile or vector can be stored to %s, not %s"
                             % (self.g.name, type(value).__name__))
        if value.spec.dtype != self.g.dtype:
            raise TraceError("cannot store %r elements into %s, a tensor of %r"
                             % (value.spec.dtype, self.g.name, self.g.dtype),
                             hint="convert first: value.to(%r)" % (self.g.dtype,))
        b = _hk()
        with b.loc():
            b.d.hk.store(value.v, self.g.v, self.coord.v)


# Register tiles and vectors -----------------------------------------------------------------

_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min"}


class _Typed(Value):
    """A value whose hk type (`spec`) is one of hk.types' register types."""

    __slots__ = ("spec",)

    def __init__(self, v, spec):
        super().__init__(v)
        self.spec = spec

    @property
    def dtype(self):
        return self.spec.dtype


def _not_a_mask(x, what):
    """Masks (comparison results) only select: hk.where takes them, arithmetic does not."""
    if isinstance(x, _Typed) and x.spec.dtype is types.mask:
        raise TraceError("%s is not defined on %s" % (what, describe(x.spec)),
                         hint="choose between values with hk.where(mask, a, b); "
                              "hk.where(mask, hk.full(spec, 1.0), 0.0) is a tile of ones and zeros")


class _Register(_Typed):
    """What tiles and vectors share: elementwise arithmetic."""

    __slots__ = ()

    def _other(self, other):
        check_defined(other)
        if isinstance(other, _Register):
            if (type(other) is not type(self) or other.spec.dtype != self.spec.dtype
                    or _shape(other.spec) != _shape(self.spec)):
                raise TraceError("elementwise operands must have the same type: %s and %s"
                                 % (describe(self.spec), describe(other.spec)),
                                 hint="convert with .to(dtype); broadcast a vector with "
                                      "hk.broadcast or the row/col forms")
            if isinstance(self.spec, types.RT) and other.spec.layout != self.spec.layout:
                # The tile library combines tiles lane by lane: both must hold the same elements.
                raise TraceError("elementwise operands must share a layout: %s and %s"
                                 % (describe(self.spec), describe(other.spec)),
                                 hint="convert one: x.to(%s, %r)" % (self.spec.dtype, self.spec.layout))
            return other.v
        if isinstance(other, Scalar):
            if other.is_float != self.spec.dtype.is_float or other.type_text == "i1":
                raise TraceError("cannot combine %s with %s" % (describe(self.spec), what_is(other)),
                                 hint="convert the scalar first: .to(%s)"
                                      % ("hk.fp32" if self.spec.dtype.is_float else "hk.i32"))
            return other.v
        if isinstance(other, (int, float)):
            # Python numbers combine as fp32 with float tiles, as i32 with integer tiles.
            like = "f32" if self.spec.dtype.is_float else "i32"
            return scalar(float(other) if self.spec.dtype.is_float else other, like).v
        return NotImplemented

    def _binary(self, fn, other, reverse=False):
        _not_a_mask(self, "arithmetic")
        if reverse and isinstance(other, (Scalar, int, float)):
            return self._reversed(fn, other)
        o = self._other(other)
        if o is NotImplemented:
            return NotImplemented
        b = _hk()
        lhs, rhs = (o, self.v) if reverse else (self.v, o)
        with b.loc():
            return wrap(b.d.hk.binary(getattr(b.d.hk.BinaryFn, fn), lhs, rhs), self.spec)

    def _reversed(self, fn, other):
        """`other fn self` for a scalar or number `other`. The operation takes a scalar on its
        right only, so `other` becomes a tile of the compute type (fp32 or i32, where the
        arithmetic runs anyway) and the result is rounded once to this dtype, as `self fn other`
        would be: a 16-bit tile's splat of 0.1 would round it first."""
        wide = types.fp32 if self.dtype.is_float else types.i32
        value = self if self.dtype == wide else self.to(wide)
        result = splat(value.spec, other)._binary(fn, value)
        return result if self.dtype == wide else result.to(self.dtype)

    # add and mul commute (bit for bit, as do the bitwise operations): reversed, they are the same.
    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o)
    def __sub__(self, o): return self._binary("sub", o)
    def __rsub__(self, o): return self._binary("sub", o, True)
    def __mul__(self, o): return self._binary("mul", o)
    def __rmul__(self, o): return self._binary("mul", o)
    def __truediv__(self, o): return self._binary("div", o)
    def __rtruediv__(self, o): return self._binary("div", o, True)

    # Bitwise, on i32 tiles and vectors: shifts by the amount modulo 32, >> arithmetic.
    def _bitwise(self, fn, other, reverse=False):
        if self.spec.dtype != types.i32:
            symbol = {"band": "&", "bor": "|", "bxor": "^", "shl": "<<", "shr": ">>"}[fn]
            raise TraceError("%s is defined on i32 tiles and vectors, not %s" % (symbol, describe(self.spec)),
                             hint="convert with .to(hk.i32) first")
        return self._binary(fn, other, reverse)

    def __and__(self, o): return self._bitwise("band", o)
    def __rand__(self, o): return self._bitwise("band", o)
    def __or__(self, o): return self._bitwise("bor", o)
    def __ror__(self, o): return self._bitwise("bor", o)
    def __xor__(self, o): return self._bitwise("bxor", o)
    def __rxor__(self, o): return self._bitwise("bxor", o)
    def __lshift__(self, o): return self._bitwise("shl", o)
    def __rlshift__(self, o): return self._bitwise("shl", o, True)
    def __rshift__(self, o): return self._bitwise("shr", o)
    def __rrshift__(self, o): return self._bitwise("shr", o, True)

    def __pow__(self, o):
        from hk.dsl.ops import _pow

        return _pow(self, o)

    def __rpow__(self, o):
        from hk.dsl.ops import _pow

        return _pow(self, o, reverse=True)

    def __neg__(self):
        _not_a_mask(self, "negation")
        b = _hk()
        with b.loc():
            return wrap(b.d.hk.unary(b.d.hk.UnaryFn.neg, self.v), self.spec)

    def to(self, dtype, layout=None, *, finite=False):
        """This tile (or vector) converted to `dtype` (and `layout`), rounding to nearest even.

        finite=True narrows an fp32 tile whose NaNs need not survive (a softmax's exponentials,
        whose NaNs reach the sum anyway) to bf16 or fp16 without a NaN test where the target
        has no bf16 conversion instruction: a NaN may then come out as a zero."""
        if finite and (self.spec.dtype != types.fp32 or dtype not in (types.bf16, types.fp16)):
            raise TraceError("finite=True narrows fp32 to bf16 or fp16, not %s to %s"
                             % (self.spec.dtype.name, dtype.name), hint="drop finite=True")
        if isinstance(self.spec, types.RT):
            spec = types.RT(dtype, self.spec.rows, self.spec.cols, layout or self.spec.layout)
        else:
            spec = types.RV(dtype, self.spec.length, self.spec.axis)
        b = _hk()
        with b.loc():
            return wrap(b.d.hk.cast(b.type(spec.mlir()), self.v, finite=bool(finite) or None), spec)


class Tile(_Register):
    """A register tile owned by the running wave."""

    __slots__ = ()

    shape = property(lambda self: self.spec.shape)

    def _compare(self, other, pred):
        if self.spec.dtype.is_operand:
            # A mask is laid out as 32-bit tiles are: compare 32-bit copies (exact) in the layout
            # whose lanes hold what this tile's do (the other layout tag), and hk.where on this
            # tile selects between 32-bit copies in the mask's layout.
            wide, wtype = "col" if self.spec.layout == "row" else "row", self.spec.dtype.wide
            if isinstance(other, Tile):
                check_defined(other)
                other = other.to(wtype, wide) if other.spec.dtype == self.spec.dtype else other
            return self.to(wtype, wide)._compare(other, pred)
        o = self._other(other)
        if o is NotImplemented:
            return NotImplemented
        b = _hk()
        spec = types.RT(types.mask, self.spec.rows, self.spec.cols, self.spec.layout)
        with b.loc():
            return wrap(b.d.hk.cmp(b.type(spec.mlir()), getattr(b.d.hk.CmpPredicate, pred), self.v, o), spec)

    def __lt__(self, o): return self._compare(o, "lt")
    def __le__(self, o): return self._compare(o, "le")
    def __gt__(self, o): return self._compare(o, "gt")
    def __ge__(self, o): return self._compare(o, "ge")
    def __eq__(self, o): return self._compare(o, "eq")
    def __ne__(self, o): return self._compare(o, "ne")
    __hash__ = None

    @property
    def T(self):
        """The transposed tile."""
        from hk.dsl.ops import transpose

        return transpose(self)


class Vector(_Register):
    """A register vector of a tile's rows ("col" axis) or columns ("row" axis)."""

    __slots__ = ()

    def _compare(self, other):
        # Masks are tiles: without this, == and != would be Python's identity test (a silent
        # False or True) and < a TypeError.
        check_defined(other)
        raise TraceError("comparisons take register tiles, not vectors (%s)" % describe(self.spec),
                         hint="broadcast the vector to a tile first: hk.broadcast(v, hk.RT(...))")

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _compare
    __hash__ = None


class StagedTile(_Typed):
    """A workgroup copy in flight (hk.lds.issue): registers that hk.lds.commit writes into LDS."""

    __slots__ = ()


class Shared(Value):
    """A shared (LDS) tile or vector; `s[buffer]` is one of its buffers."""

    __slots__ = ("spec",)

    def __init__(self, v, spec):
        super().__init__(v)
        self.spec = spec

    def __getitem__(self, buffer):
        return SharedRef(self, buffer)


class SharedView(Shared):
    """A subtile of a shared tile: no allocation of its own."""

    __slots__ = ()


class SharedRef:
    """One buffer of a shared tile: `.load(spec)` into registers, `.store(tile)` from them,
    `.subtile(rows, cols, i, j)` for the (i, j) tile of that shape within it."""

    __slots__ = ("s", "buffer")

    def __init__(self, s, buffer):
        self.s = s
        self.buffer = buffer

    def load(self, spec):
        from hk.dsl import operands

        b = _hk()
        if not isinstance(spec, (types.RT, types.RV)):
            raise TraceError(".load() takes a register tile or vector type, not %r" % (spec,))
        check_buffer(self.s, self.buffer)
        operands.fits_buffer(self.s.spec, spec, loading=True)
        buf = operands.index(self.buffer, "the buffer index").v
        with b.loc():
            v = b.d.hk.lds_load(b.type(spec.mlir()), self.s.v, buf)
        return wrap(v, spec)

    def store(self, value):
        from hk.dsl import operands

        b = _hk()
        check_defined(value)
        if not isinstance(value, (Tile, Vector)):
            raise TraceError("only a register tile or vector can be stored to a shared tile, not %s"
                             % what_is(value))
        check_buffer(self.s, self.buffer)
        operands.fits_buffer(self.s.spec, value.spec, loading=False)
        buf = operands.index(self.buffer, "the buffer index").v
        with b.loc():
            b.d.hk.lds_store(value.v, self.s.v, buf)

    def subtile(self, rows, cols, i, j):
        """The (i, j) rows x cols tile of this buffer, itself loadable and storable.

        Register tiles narrower than the shared tile read and write through it; a workgroup copy
        still takes the whole shared tile."""
        spec = self.s.spec
        if not isinstance(spec, types.ST):
            raise TraceError(".subtile() takes a shared tile, not %s" % (describe(spec),))
        view = types.ST(spec.dtype, rows, cols)
        if spec.rows % rows or spec.cols % cols:
            raise TraceError("a %dx%d subtile does not divide the %dx%d shared tile; pick rows and "
                             "cols that divide it" % (rows, cols, spec.rows, spec.cols))
        check_buffer(self.s, self.buffer)
        for what, k, n in (("row", i, spec.rows // rows), ("column", j, spec.cols // cols)):
            if isinstance(k, int) and not 0 <= k < n:
                raise TraceError("subtile %s index %d is outside the %d %dx%d subtiles along that axis "
                                 "of the %dx%d shared tile" % (what, k, n, rows, cols, spec.rows, spec.cols),
                                 hint="use an index from 0 to %d" % (n - 1))
        from hk.dsl import operands

        b = _hk()
        buf, row, col = (operands.index(x, what).v for x, what in (
            (self.buffer, "the buffer index"), (i, "the row of a subtile"), (j, "the column of a subtile")))
        with b.loc():
            v = b.d.hk.subtile(b.type(view.mlir()), self.s.v, buf, row, col)
        return SharedRef(SharedView(v, view), 0)


def check_buffer(shared, buffer):
    """A constant buffer index must name one of the shared tile's buffers."""
    check_defined(buffer)
    n = getattr(shared.spec, "buffers", 1)
    if isinstance(buffer, int) and not 0 <= buffer < n:
        raise TraceError("buffer %d of a shared %s with %d buffer%s"
                         % (buffer, "tile" if isinstance(shared.spec, types.ST) else "vector", n,
                            "" if n == 1 else "s"),
                         hint="use a buffer from 0 to %d, or allocate more: hk.ST(..., buffers)" % (n - 1))


def _shape(spec):
    return (spec.rows, spec.cols) if isinstance(spec, types.RT) else (spec.length, spec.axis)


def describe(spec):
    if isinstance(spec, types.Staged):
        return "a staged %dx%d %r tile" % (spec.rows, spec.cols, spec.dtype)
    if isinstance(spec, types.RT) and spec.dtype is types.mask:
        return "a %dx%d mask (a comparison's result)" % (spec.rows, spec.cols)
    if isinstance(spec, types.RT):
        return "hk.RT(%r, %d, %d, %r)" % (spec.dtype, spec.rows, spec.cols, spec.layout)
    if isinstance(spec, types.RV):
        return "hk.RV(%r, %d, %r)" % (spec.dtype, spec.length, spec.axis)
    if isinstance(spec, types.ST):
        return "hk.ST(%r, %d, %d, %d)" % (spec.dtype, spec.rows, spec.cols, spec.buffers)
    if isinstance(spec, types.SV):
        return "hk.SV(%r, %d, %d)" % (spec.dtype, spec.length, spec.buffers)
    return repr(spec)


def what_is(value):
    """`value` as the language names it, for messages: hk.RT(...), a device scalar of type i32,
    the tensor x, a 3-tuple, the number 2.5."""
    if isinstance(value, _Typed):
        return describe(value.spec)
    if isinstance(value, Scalar):
        return "a device scalar of type %s" % value.type_text
    if isinstance(value, Global):
        return "the tensor %s" % value.name
    if isinstance(value, Shared):
        return describe(value.spec)
    if isinstance(value, SharedRef):
        return "a buffer of %s" % describe(value.s.spec)
    if isinstance(value, TileRef):
        return "%s[...] (load it with .load(hk.RT(...)))" % value.g.name
    if isinstance(value, Coord):
        return "a tile coordinate"
    if isinstance(value, tuple):
        return "a %d-tuple" % len(value)
    if isinstance(value, (bool, int, float)):
        return "the number %r" % (value,)
    return "a %s" % type(value).__name__


def wrap(v, spec):
    if isinstance(spec, types.RT):
        return Tile(v, spec)
    if isinstance(spec, types.RV):
        return Vector(v, spec)
    if isinstance(spec, (types.ST, types.SV)):
        return Shared(v, spec)
    if isinstance(spec, types.Staged):
        return StagedTile(v, spec)
    raise AssertionError(spec)


def splat(spec, value):
    """A tile or vector of type `spec` with every element `value`: a number or a device scalar."""
    if not isinstance(value, Scalar):
        return fill(spec, value)
    # x + -0.0 is x for every float x, signed zeros and NaN included (0.0 would turn -0.0 into 0.0).
    return fill(spec, -0.0 if spec.dtype.is_float else 0) + value


def fill(spec, value):
    """A tile or vector of type `spec` with every element `value`."""
    if not isinstance(spec, (types.RT, types.RV)):
        raise TraceError("a filled value is a register tile or vector (hk.RT, hk.RV), not %s" % describe(spec),
                         hint="shared tiles are allocated with hk.lds.alloc")
    check_defined(value)
    if not isinstance(value, (int, float)):
        raise TraceError("a tile is filled with a Python number, not %s" % what_is(value),
                         hint="for a device scalar s, add it to a filled tile: hk.zeros(spec) + s")
    b = _hk()
    t = b.type(spec.mlir())
    element = b.type(spec.dtype.mlir)
    ir = b.ir
    with b.loc():  # FloatAttr.get reports bad values at the current location
        if spec.dtype.is_float:
            attr = ir.FloatAttr.get(element, float(value))
        else:
            _b.check_int(value, spec.dtype.mlir)
            attr = ir.IntegerAttr.get(element, int(value))
        return wrap(b.d.hk.fill(t, attr), spec)
