"""The operands the language's calls take, checked before an operation is built.

The dialect's verifiers would refuse the same things, in the IR's words and after tracing; here
each is a TraceError at the user's line that names the call, the value as the language spells it
(hk.RT(...), the tensor x, a 3-tuple) and what to do instead.
"""

from hk import types
from hk.dsl.values import (Coord, Global, Scalar, Tile, Vector, _as_index, check_defined, describe, scalar,
                           what_is)
from hk.errors import TraceError

_INTEGER_SCALARS = ("index", "i32", "i64")


def index(x, what):
    """`x`, a Python int or an integer device scalar, as an index scalar; a TraceError naming
    `what` (a coordinate's row, an element's column, ...) for anything else."""
    check_defined(x)
    if isinstance(x, Scalar) and x.type_text in _INTEGER_SCALARS:
        return _as_index(x)
    if isinstance(x, int):
        return _as_index(scalar(int(x)))
    raise TraceError("%s must be an integer (a Python int or an integer device scalar), not %s"
                     % (what, what_is(x)),
                     hint="convert a float scalar with .to(hk.i32); a comparison is not an index")


def coord(value, what):
    """`value` as a Coord: hk.tile_coord(...) or a 4-tuple of ints and integer scalars; a
    TraceError naming `what`, the call that takes it, otherwise."""
    check_defined(value)
    if isinstance(value, Coord):
        return value
    if isinstance(value, tuple) and len(value) == 4:
        from hk.dsl.ops import tile_coord

        return tile_coord(*value)
    raise TraceError("%s takes a tile coordinate, hk.tile_coord(batch, depth, row, col) or a 4-tuple "
                     "(batch, depth, row, col), not %s" % (what, what_is(value)),
                     hint="give all four, counting tiles of the shape moved: (0, 0, row, col) for a "
                          "2-D tensor")


def tensor(value, what):
    """`value` if it is one of the kernel's tensor parameters; a TraceError naming `what` else."""
    check_defined(value)
    if not isinstance(value, Global):
        raise TraceError("%s takes a tensor parameter of the kernel, not %s" % (what, what_is(value)),
                         hint="pass the hk.Tensor[...] argument itself, without an index")
    return value


def element_index(g, method, b, d, r, c):
    """The four indices of one element of tensor `g` (load_scalar, store_scalar, atomic_add)."""
    return [index(i, "the %s index of %s.%s" % (part, g.name, method)).v
            for part, i in zip(("batch", "depth", "row", "column"), (b, d, r, c))]


def element(g, value, method):
    """`value` as an element of tensor `g`: numbers become constants of its dtype, an integer
    scalar of another width is converted (an index to an i32, ...); a float for an integer
    tensor, an integer scalar for a float one, or a float of another width is refused."""
    check_defined(value)
    if not isinstance(value, (int, float, Scalar)) or (isinstance(value, float) and not g.dtype.is_float):
        raise TraceError("%s.%s takes an element of %r, a number or a device scalar, not %s"
                         % (g.name, method, g.dtype, what_is(value)),
                         hint="store a tile with %s[coord] = tile" % g.name if isinstance(value, (Tile, Vector))
                         else "pass int(value) for an integer tensor")
    value = scalar(value, g.dtype.mlir)
    if not g.dtype.is_float and not value.is_float and value.type_text != g.dtype.mlir:
        value = value.to(g.dtype)
    if value.type_text != g.dtype.mlir:
        raise TraceError("%s.%s takes an element of %r, not %s" % (g.name, method, g.dtype, what_is(value)),
                         hint="convert it first: value.to(%r)" % (g.dtype,)
                         if g.dtype in (types.fp32, types.i32, types.bf16, types.fp16)
                         else "pass a Python number, which becomes a constant of the tensor's dtype")
    return value


def fits_buffer(shared, spec, loading):
    """A load from or store into a buffer of a shared tile (or vector) of type `shared` moves the
    whole buffer: the register type `spec` must have its kind, dtype and shape."""
    verb, prep = ("load", "from") if loading else ("store", "into")
    what = describe(spec)
    if isinstance(shared, types.SV) != isinstance(spec, types.RV):
        raise TraceError("cannot %s %s %s a buffer of %s" % (verb, what, prep, describe(shared)),
                         hint="a shared tile moves to and from a register tile (hk.RT), a shared vector "
                              "to and from a register vector (hk.RV)")
    if spec.dtype != shared.dtype:
        raise TraceError("cannot %s %r elements %s a buffer of %s" % (verb, spec.dtype, prep, describe(shared)),
                         hint="load with the shared tile's dtype, then convert with .to(...)" if loading
                         else "convert first: value.to(%r)" % (shared.dtype,))
    if isinstance(spec, types.RV):
        if spec.length != shared.length:
            raise TraceError("cannot %s %s %s a buffer of %s: a %s moves the whole buffer, %d elements"
                             % (verb, what, prep, describe(shared), verb, shared.length),
                             hint="use a vector of length %d, or a shared vector of length %d"
                                  % (shared.length, spec.length))
        return
    if (spec.rows, spec.cols) == (shared.rows, shared.cols):
        return
    if shared.rows % spec.rows == 0 and shared.cols % spec.cols == 0:
        hint = ("%s a %dx%d part of it: s[buffer].subtile(%d, %d, i, j).%s, (i, j) counting %dx%d tiles"
                % (verb, spec.rows, spec.cols, spec.rows, spec.cols,
                   "load(hk.RT(...))" if loading else "store(tile)", spec.rows, spec.cols))
    else:
        hint = ("%s a %dx%d register tile, or allocate a shared tile of the register tile's shape"
                % (verb, shared.rows, shared.cols))
    raise TraceError("cannot %s %s %s a buffer of %s: a %s moves the whole %dx%d buffer"
                     % (verb, what, prep, describe(shared), verb, shared.rows, shared.cols), hint=hint)


def row_ids(ids, rows, what):
    """The row indices of a gather or scatter: an i32 "col" vector with one entry per row."""
    check_defined(ids)
    want = types.RV(types.i32, rows, "col")
    if not isinstance(ids, Vector) or ids.spec != want:
        raise TraceError("%s takes its row indices as %s, one per row of the tile, not %s"
                         % (what, describe(want), what_is(ids)),
                         hint="load them with ids = t[coord].load(%s), or build them from hk.iota"
                              % describe(want) if not isinstance(ids, Vector) or ids.spec.dtype == types.i32
                         else "convert them: ids.to(hk.i32)")
    return ids


def same_dtype(g, dtype, what, loading):
    """A tile or shared tile moved from (or to) tensor `g` has its dtype."""
    if dtype != g.dtype:
        raise TraceError("%s cannot %s %r elements %s %s, a tensor of %r"
                         % (what, "read" if loading else "write", dtype, "from" if loading else "into",
                            g.name, g.dtype),
                         hint="use the tensor's dtype, %r, and convert with .to(...)" % (g.dtype,))
