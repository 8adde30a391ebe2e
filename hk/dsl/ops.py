"""The functions of the language: coordinates, math, MMA, reductions, masks, LDS, randomness.

Each emits hk operations at the user's line; shape and dtype errors are TraceErrors there.
"""

import builtins

from hk import types
from hk.dsl import builder as _b
from hk.dsl import operands
from hk.dsl.values import (Coord, Scalar, Shared, Tile, Vector, _as_index, _not_a_mask, check_defined, describe,
                           fill, scalar, splat, what_is, wrap)
from hk.errors import TraceError


def _hk():
    return _b.current()


def _defined(*values):
    """An undefined operand (bound on one path only) is reported as such, not as a wrong type."""
    for v in values:
        check_defined(v)


def cdiv(a, b):
    """Ceiling division, of Python ints (in grids) or of device scalars (in kernels)."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    a, b = _as_index(scalar(a)), _as_index(scalar(b))
    builder = _hk()
    with builder.loc():
        return Scalar(builder.d.arith.ceildivsi(a.v, b.v))


def tile_coord(batch, depth, row, col):
    """A tile coordinate; row and col count tiles of the shape that is loaded or stored."""
    b = _hk()
    parts = [operands.index(x, "the %s of a tile coordinate" % part).v
             for part, x in zip(("batch", "depth", "row", "column"), (batch, depth, row, col))]
    with b.loc():
        return Coord(b.d.hk.tile_coord(*parts))


# Math --------------------------------------------------------------------------------------------

def _unary(fn, x):
    _defined(x)
    if not isinstance(x, (Tile, Vector)):
        raise TraceError("hk.math.%s takes a register tile or vector, not %s" % (fn, what_is(x)))
    _not_a_mask(x, "hk.math.%s" % fn)
    if fn not in ("abs", "neg", "relu") and not x.dtype.is_float:
        raise TraceError("hk.math.%s needs a floating-point tile but got %s" % (fn, describe(x.spec)),
                         hint="convert first with .to(hk.fp32)")
    b = _hk()
    with b.loc():
        return wrap(b.d.hk.unary(getattr(b.d.hk.UnaryFn, fn), x.v), x.spec)


def _binary_fn(fn, name):
    def apply(a, b):
        if isinstance(a, Scalar) or (isinstance(b, Scalar) and isinstance(a, (int, float))):
            return _scalar_extreme(fn, a, b)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return (builtins.max if fn == "max" else builtins.min)(a, b)
        if not isinstance(a, (Tile, Vector)):
            raise TraceError("hk.%s takes a register tile, vector or scalar first, not %s"
                             % (name, type(a).__name__))
        return a._binary(fn, b)

    apply.__name__ = name
    apply.__doc__ = ("Elementwise %s of a tile or vector with a tile, vector or scalar; of two "
                     "device scalars (floats ignore a NaN operand, as on tiles)." % fn)
    return apply


def _scalar_extreme(fn, a, b):
    a, b = (a, b) if isinstance(a, Scalar) else (b, a)
    a, b = a._coerce(b)
    if a is NotImplemented:
        raise TraceError("hk.maximum/minimum of a device scalar takes another scalar or a number")
    builder = _hk()
    op = ("maxnumf" if fn == "max" else "minnumf") if a.is_float else ("maxsi" if fn == "max" else "minsi")
    with builder.loc():
        return Scalar(getattr(builder.d.arith, op)(a.v, b.v))


maximum = _binary_fn("max", "maximum")
minimum = _binary_fn("min", "minimum")


def _pow(x, y, reverse=False):
    """x ** y; with reverse=True, y ** x."""
    _defined(x, y)
    if not isinstance(x, (Tile, Vector)):
        raise TraceError("hk.math.pow takes a register tile or vector first, not %s" % type(x).__name__)
    if not x.dtype.is_float:
        raise TraceError("hk.math.pow needs a floating-point tile but got %s" % describe(x.spec),
                         hint="convert first with .to(hk.fp32)")
    return x._binary("pow", y, reverse)


def where(mask, a, b):
    """Elementwise `a` where `mask` is true, else `b` (tiles of one type; b may be a scalar)."""
    _defined(mask, a, b)
    builder = _hk()
    if not isinstance(mask, Tile) or mask.spec.dtype is not types.mask:
        raise TraceError("hk.where needs a mask tile (from a comparison) first")
    if not isinstance(a, Tile):
        raise TraceError("hk.where needs a tile as its second argument, not %s" % what_is(a),
                         hint="make it a tile: hk.full(spec, value)")
    if (mask.spec.rows, mask.spec.cols) != (a.spec.rows, a.spec.cols):
        raise TraceError("hk.where's mask is %dx%d but its tile %s is %dx%d"
                         % (mask.spec.rows, mask.spec.cols, describe(a.spec), a.spec.rows, a.spec.cols),
                         hint="compare tiles of the shape you select between")
    # 16- and 8-bit tiles select between 32-bit copies in the mask's layout, so their layouts
    # may differ.
    if isinstance(b, Tile) and ((b.spec.dtype, b.spec.rows, b.spec.cols) != (a.spec.dtype, a.spec.rows, a.spec.cols)
                                or (not a.spec.dtype.is_operand and b.spec.layout != a.spec.layout)):
        raise TraceError("hk.where chooses between tiles of one type, not %s and %s"
                         % (describe(a.spec), describe(b.spec)), hint="convert one with .to(...)")
    if not isinstance(b, (Tile, Scalar, int, float)):
        raise TraceError("hk.where's third argument is a tile of the second's type, a device scalar or a "
                         "Python number, not %s" % what_is(b))
    if a.spec.dtype.is_operand:
        # A mask is laid out as 32-bit tiles are: select between 32-bit copies in the mask's
        # layout (exact both ways; the tile's own comparison makes that the layout whose lanes
        # hold what the tile's do, so no value changes lanes).
        layout, wtype = mask.spec.layout, a.spec.dtype.wide
        b = b.to(wtype, layout) if isinstance(b, Tile) and b.spec.dtype == a.spec.dtype else b
        return where(mask, a.to(wtype, layout), b).to(a.spec.dtype, a.spec.layout)
    if not isinstance(b, Tile):
        b = splat(a.spec, b)
    with builder.loc():
        return wrap(builder.d.hk.select(mask.v, a.v, b.v), a.spec)


# Reductions and broadcasts -----------------------------------------------------------------------

def _reduce(fn, x, axis, init):
    _defined(x, init)
    if not isinstance(x, Tile):
        raise TraceError("reductions take a register tile, not %s" % what_is(x))
    _not_a_mask(x, "a reduction")
    if axis not in ("row", "col"):
        raise TraceError("reduction axis must be 'row' (each row to one value) or 'col', not %r" % (axis,))
    spec = types.RV(x.dtype, x.spec.rows, "col") if axis == "row" else types.RV(x.dtype, x.spec.cols, "row")
    b = _hk()
    kwargs = {}
    if init is not None:
        if not isinstance(init, Vector) or init.spec != spec:
            raise TraceError("the init of a %s reduction must be %s" % (axis, describe(spec)))
        kwargs["init"] = init.v
    with b.loc():
        return wrap(b.d.hk.reduce(b.type(spec.mlir()), getattr(b.d.hk.ReduceFn, fn), x.v, **kwargs), spec)


def row_sum(x, init=None):
    """The sum of each row: a "col" vector with one element per row."""
    return _reduce("sum", x, "row", init)


def row_max(x, init=None):
    return _reduce("max", x, "row", init)


def row_min(x, init=None):
    return _reduce("min", x, "row", init)


def col_sum(x, init=None):
    """The sum of each column: a "row" vector with one element per column."""
    return _reduce("sum", x, "col", init)


def col_max(x, init=None):
    return _reduce("max", x, "col", init)


def col_min(x, init=None):
    return _reduce("min", x, "col", init)


def _broadcast_binary(fn, tile, vec):
    _defined(tile, vec)
    if not isinstance(tile, Tile) or not isinstance(vec, Vector):
        raise TraceError("row/col operations take a tile and a vector")
    expected = tile.spec.rows if vec.spec.axis == "col" else tile.spec.cols
    if vec.spec.length != expected:
        raise TraceError("vector %s does not span tile %s" % (describe(vec.spec), describe(tile.spec)),
                         hint="a 'col' vector has one element per row (length = rows), a 'row' "
                              "vector one per column (length = cols)")
    if vec.dtype != tile.dtype:
        # Only the dtype: a vector of any tile's width and layout meets any tile.
        raise TraceError("vector %s is not of tile %s's dtype" % (describe(vec.spec), describe(tile.spec)),
                         hint="convert the vector: v.to(%r)" % (tile.dtype,))
    b = _hk()
    with b.loc():
        return wrap(b.d.hk.broadcast_binary(getattr(b.d.hk.BinaryFn, fn), tile.v, vec.v), tile.spec)


def _row_op(fn):
    def apply(tile, vec):
        return _broadcast_binary(fn, tile, vec)

    apply.__name__ = fn + "_row"
    apply.__doc__ = "Combines row i of the tile with vec[i] (%s)." % fn
    return apply


add_row, sub_row, mul_row, div_row, max_row, min_row = (_row_op(f) for f in
                                                         ("add", "sub", "mul", "div", "max", "min"))
# The vector's axis decides which way it spans the tile: the _col names are the same functions.
add_col, sub_col, mul_col, div_col, max_col, min_col = add_row, sub_row, mul_row, div_row, max_row, min_row


def broadcast(vec, spec):
    """A tile of type `spec` whose rows (col vector) or columns (row vector) repeat `vec`."""
    _defined(vec)
    if not isinstance(vec, Vector) or not isinstance(spec, types.RT):
        raise TraceError("hk.broadcast takes a register vector and a register tile type, not %s and %r"
                         % (what_is(vec), spec), hint="e.g. hk.broadcast(v, hk.RT(hk.fp32, 16, 64))")
    span = spec.rows if vec.spec.axis == "col" else spec.cols
    if vec.spec.length != span or vec.dtype != spec.dtype:
        raise TraceError("hk.broadcast cannot repeat %s over %s" % (describe(vec.spec), describe(spec)),
                         hint="a 'col' vector has one element per row (length = rows), a 'row' vector "
                              "one per column (length = cols), of the tile's dtype")
    b = _hk()
    with b.loc():
        return wrap(b.d.hk.broadcast(b.type(spec.mlir()), vec.v), spec)


# Fills, masks, indices ---------------------------------------------------------------------------

def zeros(spec):
    return fill(spec, 0)


def full(spec, value):
    return fill(spec, value)


def neg_infty(spec):
    return fill(spec, float("-inf"))


def _mask(kind, x, row0, col0, diagonal, value):
    _defined(x)
    if not isinstance(x, Tile):
        raise TraceError("masks apply to register tiles")
    b = _hk()
    element = b.type(x.dtype.mlir)
    r, c = _as_index(scalar(row0)).v, _as_index(scalar(col0)).v
    with b.loc():
        attr = (b.ir.FloatAttr.get(element, float(value)) if x.dtype.is_float
                else b.ir.IntegerAttr.get(element, _b.check_int(value, x.dtype.mlir) or int(value)))
        op = b.d.hk.MaskOp(getattr(b.d.hk.MaskKind, kind), x.v, r, c, attr,
                           diagonal=b.ir.IntegerAttr.get(b.ir.IntegerType.get_signless(64), diagonal))
        return wrap(op.result, x.spec)


def causal(x, row0, col0, value=float("-inf")):
    """Elements above the diagonal (col > row, in global coordinates) become `value`."""
    return _mask("causal", x, row0, col0, 0, value)


def tril(x, row0=0, col0=0, diagonal=0, value=0.0):
    """Keeps col - row <= diagonal; the rest becomes `value`."""
    return _mask("tril", x, row0, col0, diagonal, value)


def triu(x, row0=0, col0=0, diagonal=0, value=0.0):
    """Keeps col - row >= diagonal; the rest becomes `value`."""
    return _mask("triu", x, row0, col0, diagonal, value)


def iota(spec, index="row"):
    """An i32 tile of `spec`'s shape holding each element's row (or col) index in the tile."""
    if not isinstance(spec, types.RT) or index not in ("row", "col"):
        raise TraceError("hk.iota takes a register tile type and index='row' or 'col', not %r, %r" % (spec, index))
    b = _hk()
    spec = types.RT(types.i32, spec.rows, spec.cols, spec.layout)
    with b.loc():
        return wrap(b.d.hk.iota(b.type(spec.mlir()), getattr(b.d.hk.TileIndex, index)), spec)


# Conversions, MMA, randomness -------------------------------------------------------------------

def transpose(x):
    _defined(x)
    if not isinstance(x, Tile):
        raise TraceError("hk.transpose takes a register tile, not %s" % what_is(x))
    spec = types.RT(x.dtype, x.spec.cols, x.spec.rows, x.spec.layout)
    b = _hk()
    with b.loc():
        return wrap(b.d.hk.transpose(b.type(spec.mlir()), x.v), spec)


_MMA_LAYOUTS = {"AB": ("row", "col"), "ABt": ("row", "row"), "AtB": ("col", "col"), "AtBt": ("col", "row")}


def mma(kind, a, b, c):
    """D = op(A) op(B) + C on register tiles, fp32 accumulation (i32 for i8 operands); kind is AB,
    ABt, AtB or AtBt."""
    _defined(a, b, c)
    if kind not in _MMA_LAYOUTS:
        raise TraceError("mma kind must be one of AB, ABt, AtB, AtBt, not %r" % (kind,))
    for name, t in (("a", a), ("b", b), ("c", c)):
        if not isinstance(t, Tile):
            raise TraceError("mma operand %s must be a register tile, not %s" % (name, what_is(t)))
    _mma_types(kind, a.spec, b.spec, c.spec)
    la, lb = _MMA_LAYOUTS[kind]
    if a.spec.layout != la or b.spec.layout != lb:
        raise TraceError("mma_%s needs a in %s layout and b in %s layout but got %s and %s"
                         % (kind, la, lb, a.spec.layout, b.spec.layout),
                         hint="declare the operand tiles with layout=%r / %r" % (la, lb))
    _mma_shapes(kind, a.spec, b.spec, c.spec)
    builder = _hk()
    with builder.loc():
        return wrap(builder.d.hk.mma(getattr(builder.d.hk.MmaKind, kind), a.v, b.v, c.v), c.spec)


_MMA_OPERANDS = (types.bf16, types.fp16, types.i8) + types.FP8


def _mma_types(kind, a, b, c):
    """16-bit (or 8-bit) operands of one dtype, an fp32 accumulator (i32 for i8) in row layout."""
    for name, t in (("a", a), ("b", b)):
        if t.dtype not in _MMA_OPERANDS:
            raise TraceError("hk.mma_%s multiplies bf16 or fp16 operands (8-bit where the target has "
                             "them), and %s is %s" % (kind, name, describe(t)),
                             hint="convert it: %s.to(hk.bf16)" % name)
    if a.dtype != b.dtype:
        raise TraceError("hk.mma_%s takes a and b of one dtype, not %r and %r" % (kind, a.dtype, b.dtype),
                         hint="convert one of them with .to(...)")
    acc = types.i32 if a.dtype == types.i8 else types.fp32
    if c.dtype != acc or c.layout != "row":
        raise TraceError("hk.mma_%s accumulates in an %r tile in row layout, and c is %s"
                         % (kind, acc, describe(c)),
                         hint="accumulate into hk.zeros(hk.RT(%r, M, N)) and convert the result with .to(...)"
                              % (acc,))


def _mma_shapes(kind, a, b, c):
    """a is M x K (K x M for At), b K x N (N x K for Bt), c M x N."""
    at, bt = kind.startswith("At"), kind.endswith("Bt")
    m, ka = (a.cols, a.rows) if at else (a.rows, a.cols)
    kb, n = (b.cols, b.rows) if bt else (b.rows, b.cols)
    forms = "a is %s, b is %s" % ("K x M" if at else "M x K", "N x K" if bt else "K x N")
    if ka != kb:
        raise TraceError("hk.mma_%s: a (%dx%d) and b (%dx%d) disagree on K, %d and %d"
                         % (kind, a.rows, a.cols, b.rows, b.cols, ka, kb),
                         hint="in mma_%s %s; pick the form that matches how they are stored" % (kind, forms))
    if (c.rows, c.cols) != (m, n):
        raise TraceError("hk.mma_%s of a (%dx%d) and b (%dx%d) is %dx%d, but c is %dx%d"
                         % (kind, a.rows, a.cols, b.rows, b.cols, m, n, c.rows, c.cols),
                         hint="accumulate into hk.zeros(hk.RT(%r, %d, %d)); in mma_%s %s"
                              % (c.dtype, m, n, kind, forms))


def mma_AB(a, b, c):
    return mma("AB", a, b, c)


def mma_ABt(a, b, c):
    return mma("ABt", a, b, c)


def mma_AtB(a, b, c):
    return mma("AtB", a, b, c)


def mma_AtBt(a, b, c):
    return mma("AtBt", a, b, c)


def rand(seed, offsets):
    """Uniform floats in [0, 1): the same draws as Triton's tl.rand(seed, offsets)."""
    _defined(seed, offsets)
    if not isinstance(offsets, Tile) or offsets.dtype is not types.i32:
        raise TraceError("hk.rand takes an i32 tile of offsets (e.g. from hk.iota)")
    b = _hk()
    s = scalar(seed, "i32")
    if s.type_text == "index":
        with b.loc():
            s = Scalar(b.d.arith.index_cast(b.ir.IntegerType.get_signless(32), s.v))
    spec = types.RT(types.fp32, offsets.spec.rows, offsets.spec.cols, offsets.spec.layout)
    with b.loc():
        return wrap(b.d.hk.rand(b.type(spec.mlir()), s.v, offsets.v), spec)


def gather(tensor, coord, row_ids, spec):
    """Rows `row_ids` (an i32 "col" vector) of `tensor` as a tile of `spec`; -1 reads zeros.
    `coord` picks the slice (batch, depth) and the column tile; its row is not used."""
    tensor = operands.tensor(tensor, "hk.gather")
    coord = operands.coord(coord, "hk.gather")
    if not isinstance(spec, types.RT):
        raise TraceError("hk.gather reads a register tile type such as hk.RT(hk.bf16, 16, 64), not %r" % (spec,))
    operands.same_dtype(tensor, spec.dtype, "hk.gather", loading=True)
    operands.row_ids(row_ids, spec.rows, "hk.gather")
    b = _hk()
    with b.loc():
        return wrap(b.d.hk.gather(b.type(spec.mlir()), tensor.v, coord.v, row_ids.v), spec)


def scatter(tensor, coord, row_ids, tile):
    """Row i of `tile` to row row_ids[i] of `tensor`; negative ids are dropped. `coord` picks the
    slice (batch, depth) and the column tile; its row is not used."""
    tensor = operands.tensor(tensor, "hk.scatter")
    coord = operands.coord(coord, "hk.scatter")
    _defined(tile)
    if not isinstance(tile, Tile):
        raise TraceError("hk.scatter writes a register tile, not %s" % what_is(tile))
    operands.same_dtype(tensor, tile.dtype, "hk.scatter", loading=False)
    operands.row_ids(row_ids, tile.spec.rows, "hk.scatter")
    b = _hk()
    with b.loc():
        b.d.hk.scatter(tile.v, tensor.v, coord.v, row_ids.v)
