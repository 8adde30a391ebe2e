"""hk.lds: shared (LDS) tiles and vectors, allocated once per workgroup."""

from hk import types
from hk.dsl import builder as _b
from hk.dsl.values import Global, Shared, SharedView, StagedTile, check_buffer, describe, wrap
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
                         "own argument), not %s" % (what, type(shared).__name__))


def copy_to(shared, buffer, tensor, coord):
    """Workgroup copy of the tile at `coord` of `tensor` into buffer `buffer` of `shared`."""
    from hk.dsl.values import _as_index, scalar

    _whole(shared, "copy_to")
    check_buffer(shared, buffer)
    b = _b.current()
    with b.loc():
        b.d.hk.copy_to_lds(tensor.v, coord.v, shared.v, _as_index(scalar(buffer)).v)


def copy_from(tensor, coord, shared, buffer):
    """Workgroup copy of buffer `buffer` of `shared` to the tile at `coord` of `tensor`."""
    from hk.dsl.values import _as_index, scalar

    _whole(shared, "copy_from")
    check_buffer(shared, buffer)
    b = _b.current()
    with b.loc():
        b.d.hk.copy_from_lds(shared.v, _as_index(scalar(buffer)).v, tensor.v, coord.v)


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
    from hk.dsl.values import Coord

    _whole(shared, "issue")
    spec = shared.spec
    if not isinstance(spec, types.ST):
        raise TraceError("hk.lds.issue stages a shared tile, not %s" % (describe(spec),))
    if not isinstance(tensor, Global):
        raise TraceError("hk.lds.issue reads a tensor parameter, not %s" % type(tensor).__name__)
    if tensor.dtype != spec.dtype:
        raise TraceError("hk.lds.issue cannot stage %r elements of %s into a shared tile of %r"
                         % (tensor.dtype, tensor.name, spec.dtype),
                         hint="copy into a shared tile of the tensor's dtype")
    if not isinstance(coord, Coord):
        raise TraceError("hk.lds.issue takes the tile's hk.tile_coord(...), not %s" % type(coord).__name__)
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
    from hk.dsl.values import _as_index, scalar

    _whole(shared, "commit")
    check_buffer(shared, buffer)
    if not isinstance(staged, StagedTile):
        raise TraceError("hk.lds.commit writes what hk.lds.issue returned, not %s" % type(staged).__name__)
    spec, st = shared.spec, staged.spec
    shape = (st.cols, st.rows) if st.transposed else (st.rows, st.cols)
    if not isinstance(spec, types.ST) or (spec.dtype, spec.rows, spec.cols) != (st.dtype,) + shape:
        raise TraceError("hk.lds.commit: %s%s does not fit %s" % (
            describe(st), " (to be written transposed)" if st.transposed else "", describe(spec)),
            hint="commit into the shared tile the copy was issued for")
    b = _b.current()
    with b.loc():
        b.d.hk.copy_commit(staged.v, shared.v, _as_index(scalar(buffer)).v, transpose=st.transposed)
