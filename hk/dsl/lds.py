"""hk.lds: shared (LDS) tiles and vectors, allocated once per workgroup."""

from hk import types
from hk.dsl import builder as _b
from hk.dsl import operands
from hk.dsl.values import Shared, SharedView, StagedTile, check_buffer, describe, what_is, wrap
from hk.errors import TraceError


def alloc(spec):
    """Allocates a shared tile or vector of type `spec` (hk.ST or hk.SV) for the workgroup."""
    if not isinstance(spec, (types.ST, types.SV)):
        raise TraceError("hk.lds.alloc takes hk.ST(...) or hk.SV(...), not %r" % (spec,))
    b = _b.current()
    with b.loc():
        return Shared(b.d.hk.lds_alloc(b.type(spec.mlir())), spec)


def _whole(shared, what):
    if isinstance(shared, SharedView):
        raise TraceError("hk.lds.%s takes a shared tile from hk.lds.alloc, not a subtile; copy the "
                         "whole shared tile and load its parts with .subtile()" % what)
    if not isinstance(shared, Shared):
        raise TraceError("hk.lds.%s takes a shared tile from hk.lds.alloc (and the buffer as its "
                         "own argument), not %s" % (what, what_is(shared)))
    if not isinstance(shared.spec, types.ST):
        raise TraceError("hk.lds.%s copies a shared tile (hk.ST), not %s" % (what, describe(shared.spec)),
                         hint="move a vector through registers: v = x[coord].load(hk.RV(...)); s[0].store(v)")


def _buffer(shared, buffer):
    check_buffer(shared, buffer)
    return operands.index(buffer, "the buffer index").v


def copy_to(shared, buffer, tensor, coord):
    """Workgroup copy of the tile at `coord` of `tensor` into buffer `buffer` of `shared`."""
    _whole(shared, "copy_to")
    tensor = operands.tensor(tensor, "hk.lds.copy_to")
    coord = operands.coord(coord, "hk.lds.copy_to")
    operands.same_dtype(tensor, shared.spec.dtype, "hk.lds.copy_to", loading=True)
    buf = _buffer(shared, buffer)
    b = _b.current()
    with b.loc():
        b.d.hk.copy_to_lds(tensor.v, coord.v, shared.v, buf)


def copy_from(tensor, coord, shared, buffer):
    """Workgroup copy of buffer `buffer` of `shared` to the tile at `coord` of `tensor`."""
    tensor = operands.tensor(tensor, "hk.lds.copy_from")
    coord = operands.coord(coord, "hk.lds.copy_from")
    _whole(shared, "copy_from")
    operands.same_dtype(tensor, shared.spec.dtype, "hk.lds.copy_from", loading=False)
    buf = _buffer(shared, buffer)
    b = _b.current()
    with b.loc():
        b.d.hk.copy_from_lds(shared.v, buf, tensor.v, coord.v)


def issue(shared, tensor, coord, transpose=False):
    """Starts a workgroup copy of the tile at `coord` of `tensor`, shaped like `shared`: every
    thread reads its share into registers and returns at once. The loads are in flight until
    hk.lds.commit writes them into a buffer of `shared` (the wait before it is derived), so the
    work between the two overlaps the copy:

        nxt = hk.lds.issue(a_lds, a, hk.tile_coord(0, 0, by, k + 1))   # next tile's loads
        ...                                                            # MMAs on this tile
        hk.lds.commit(a_lds, (k + 1) % 2, nxt)

    Rows and columns past the tensor's edge read as zero, as hk.lds.copy_to has them. With
    transpose=True the tile read is the transpose of `shared`'s shape (`coord` counts tiles of
    that shape), and commit writes it transposed: B of A·B, or V of attention, stored K-major,
    then reads back in row layout.
    """
    _whole(shared, "issue")
    spec = shared.spec
    tensor = operands.tensor(tensor, "hk.lds.issue")
    if tensor.dtype != spec.dtype:
        raise TraceError("hk.lds.issue cannot stage %r elements of %s into a shared tile of %r"
                         % (tensor.dtype, tensor.name, spec.dtype),
                         hint="copy into a shared tile of the tensor's dtype")
    coord = operands.coord(coord, "hk.lds.issue")
    if transpose:
        staged = types.Staged(spec.dtype, spec.cols, spec.rows, transposed=True)
    else:
        staged = types.Staged(spec.dtype, spec.rows, spec.cols)
    b = _b.current()
    with b.loc():
        return wrap(b.d.hk.copy_issue(b.type(staged.mlir()), tensor.v, coord.v), staged)


def commit(shared, buffer, staged):
    """Finishes a copy hk.lds.issue started: writes it into buffer `buffer` of `shared`. Other
    waves read it after the next barrier (the wait before that barrier is derived)."""
    _whole(shared, "commit")
    check_buffer(shared, buffer)
    if not isinstance(staged, StagedTile):
        raise TraceError("hk.lds.commit writes what hk.lds.issue returned, not %s" % what_is(staged))
    spec, st = shared.spec, staged.spec
    shape = (st.cols, st.rows) if st.transposed else (st.rows, st.cols)
    if not isinstance(spec, types.ST) or (spec.dtype, spec.rows, spec.cols) != (st.dtype,) + shape:
        raise TraceError("hk.lds.commit: %s%s does not fit %s" % (
            describe(st), " (to be written transposed)" if st.transposed else "", describe(spec)),
            hint="commit into the shared tile the copy was issued for")
    b = _b.current()
    with b.loc():
        b.d.hk.copy_commit(staged.v, shared.v, _buffer(shared, buffer), transpose=st.transposed)
