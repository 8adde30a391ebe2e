"""hk.lds: shared (LDS) tiles and vectors, allocated once per workgroup."""

from hk import types
from hk.dsl import builder as _b
from hk.dsl.values import Shared, SharedView, check_buffer
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
