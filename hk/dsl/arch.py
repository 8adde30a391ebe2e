"""hk.arch: where the running wave is, and the workgroup's synchronisation.

    hk.arch.block_idx.x      the workgroup's index along x (also .y, .z)
    hk.arch.grid_dim.x       the number of workgroups along x
    hk.arch.warp_id()        the wave's index in its workgroup
    hk.arch.lane_id()        the lane's index in its wave
    hk.arch.num_warps()      waves per workgroup
    hk.arch.barrier()        workgroup barrier
    hk.arch.wait_lds(n)      wait until at most n LDS operations are in flight
    hk.arch.wait_vm(n)       the same for vector-memory operations
    hk.arch.target()         the facts of the architecture being traced for (hk.target)
"""

from hk.dsl import builder as _b
from hk.dsl.values import Scalar
from hk.target import facts as _facts


def _emit(fn, *args):
    b = _b.current()
    with b.loc():
        return getattr(b.d.hk, fn)(*args)


class _Dim:
    def __init__(self, op, doc):
        self._op = op
        self.__doc__ = doc

    def _get(self, d):
        b = _b.current()
        with b.loc():
            return Scalar(getattr(b.d.hk, self._op)(getattr(b.d.hk.Dim, d)))

    x = property(lambda self: self._get("x"))
    y = property(lambda self: self._get("y"))
    z = property(lambda self: self._get("z"))


block_idx = _Dim("block_idx", "The workgroup's index in the grid: .x, .y, .z")
grid_dim = _Dim("grid_dim", "The grid's size in workgroups: .x, .y, .z")


def warp_id():
    return Scalar(_emit("warp_id"))


def lane_id():
    return Scalar(_emit("lane_id"))


def num_warps():
    return Scalar(_emit("num_warps"))


def barrier():
    _emit("barrier")


def _constant(value, what, lo, hi, hint):
    """A Python int in [lo, hi]: the attribute an operation carries, fixed while tracing."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise _b.TraceError("%s takes a Python int from %d to %d, not %r" % (what, lo, hi, value), hint=hint)
    return value


def wait_lds(count=0):
    """Waits until at most `count` LDS operations are in flight (usually derived for you)."""
    _emit("wait_lds", _constant(count, "hk.arch.wait_lds", 0, 2 ** 31 - 1, "0 waits for every LDS operation"), [])


def wait_vm(count=0):
    """Waits until at most `count` vector-memory operations are in flight."""
    _emit("wait_vm", _constant(count, "hk.arch.wait_vm", 0, 2 ** 31 - 1, "0 waits for every load"), [])


def sched_barrier(mask=0):
    _emit("sched_barrier", _constant(mask, "hk.arch.sched_barrier", -2 ** 31, 2 ** 31 - 1,
                                     "the mask of instruction kinds that may cross it (0: none)"))


def set_prio(priority):
    _emit("set_prio", _constant(priority, "hk.arch.set_prio", 0, 3, "the wave's priority, 0 (lowest) to 3"))


def target():
    """The facts of the architecture the kernel is being traced for (hk.target.facts.Target):
    what a schedule may be chosen by at trace time, e.g. `hk.arch.target().lds_transpose_read`
    or `.wave_size`. The choice is part of the trace, as a constant's would be."""
    b = _b.current()
    if b.arch is None:
        raise _b.TraceError("hk.arch.target(): this kernel is not traced for an architecture",
                            hint="trace it with hk.kernel's trace/build/source, which take arch")
    return _facts.target(b.arch)
