"""Launching a kernel: the arguments checked, the specialization, the grid, and the runner
HK_DEVICE chooses. Every refusal is a LaunchError at the user's call."""

import contextlib
import numbers
import operator
import os
import struct
import threading

from hk.errors import LaunchError
from hk.runtime import device

# Kernel scalars and tensor extents are 32-bit ints in the compiled code (hk::gl, hk::coord).
INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1
# A tile's rows (up to 256) at 32-bit byte offsets from its first.
MAX_ROW_BYTES = (1 << 31) // 256


def _check_args(kernel, args):
    from hk import types

    for p, a in zip(kernel.params, args):
        if isinstance(p.kind, types.TensorType):
            dtype = types.from_torch(getattr(a, "dtype", None))
            if dtype is None or dtype != p.kind.dtype:
                got = getattr(a, "dtype", type(a).__name__)
                hint = None
                if str(got) in ("torch.bool", "torch.int64", "torch.float64", "torch.int16", "torch.uint8"):
                    hint = ("hk-dsl has no %s element type; convert the tensor (e.g. .to(torch.%s)) "
                            "or declare the parameter with the dtype you pass"
                            % (str(got).replace("torch.", ""), p.kind.dtype.torch_name))
                raise LaunchError("kernel %s: argument %r must be a tensor of %r but is %s"
                                  % (kernel.name, p.name, p.kind.dtype, got), hint=hint)
            if not 1 <= a.dim() <= 4:
                raise LaunchError("kernel %s: argument %r has %d dimensions %s; a tensor argument has 1 to 4, "
                                  "seen as (batch, depth, rows, cols)" % (kernel.name, p.name, a.dim(), tuple(a.shape)),
                                  hint="reshape it: x.flatten(0, 1) merges the first two dimensions"
                                  if a.dim() > 4 else "pass x.reshape(1) for a single element")
            if not unit_stride(a):
                raise LaunchError("kernel %s: argument %r must have unit stride in its last dimension"
                                  % (kernel.name, p.name), hint="pass tensor.contiguous()")
            if a.dim() > 1 and a.stride(-2) * a.element_size() >= MAX_ROW_BYTES:
                raise LaunchError("kernel %s: the rows of argument %r are %d bytes apart; the tile "
                                  "library addresses a tile's rows with 32-bit offsets, so rows must "
                                  "be less than %d bytes apart" % (kernel.name, p.name,
                                                                   a.stride(-2) * a.element_size(), MAX_ROW_BYTES),
                                  hint="pass a view whose rows are closer, or tensor.contiguous()")
            extents = types.view4d(a.shape)
            if any(e > INT_MAX for e in extents):
                raise LaunchError("kernel %s: argument %r has an extent of more than 2**31 - 1 elements "
                                  "%s; hk tensors index with 32-bit ints" % (kernel.name, p.name, tuple(a.shape)),
                                  hint="split the tensor and launch on each part")
        elif p.kind.is_float:
            if isinstance(a, bool) or not isinstance(a, numbers.Real):  # numpy's floats and ints too
                raise LaunchError("kernel %s: argument %r must be a Python float, not %s"
                                  % (kernel.name, p.name, type(a).__name__),
                                  hint="pass float(x) (a 0-d tensor's value: x.item())" if hasattr(a, "item") else None)
        else:
            try:
                value = operator.index(a)  # ints, bools, numpy and 0-d torch integers; not 2.7
            except TypeError:
                raise LaunchError("kernel %s: argument %r must be a Python int, not %s %r"
                                  % (kernel.name, p.name, type(a).__name__, a),
                                  hint="convert explicitly (int(x), round(x)) if truncation is what you want") from None
            if not INT_MIN <= value <= INT_MAX:
                raise LaunchError("kernel %s: argument %r = %d does not fit the kernel's 32-bit int "
                                  "(%d .. %d)" % (kernel.name, p.name, value, INT_MIN, INT_MAX))


def unit_stride(t):
    """Whether consecutive elements of tensor `t`'s last dimension are adjacent, as a kernel
    reads them (trivially so for one column or none, or no element: torch's contiguous() leaves
    their strides as they are)."""
    return t.stride(-1) == 1 or t.shape[-1] <= 1 or t.numel() == 0


def scalar_values(kernel, args):
    """The arguments as the compiled kernel sees them: ints as ints, floats rounded to fp32."""
    import torch

    from hk import types

    out = []
    for p, a in zip(kernel.params, args):
        if isinstance(p.kind, types.TensorType):
            out.append(a)
        elif p.kind.is_float:
            out.append(torch.tensor(float(a), dtype=torch.float32).item())
        else:
            out.append(operator.index(a))
    return out


def _check_not_empty(kernel, args, grid):
    """The tile library reads a tensor's first element for lanes outside it, and takes index 0 to
    be inside (docs/semantics.md): a tensor with no element cannot be passed to a running grid."""
    from hk import types

    if 0 in grid:
        return
    for p, a in zip(kernel.params, args):
        if isinstance(p.kind, types.TensorType) and a.numel() == 0:
            raise LaunchError("kernel %s: argument %r has no elements but the grid %r runs %d "
                              "workgroup(s)" % (kernel.name, p.name, grid, grid[0] * grid[1] * grid[2]),
                              hint="skip the launch when a tensor is empty")


def _extent(t):
    """[first byte, one past the last) of the memory tensor `t` reads; empty for no element, and
    for a meta tensor (no memory: hk.perf's launches)."""
    if t.is_meta:
        return 0, 0
    start = t.data_ptr()
    last = 0
    for n, stride in zip(t.shape, t.stride()):
        if n == 0:
            return start, start
        last += (n - 1) * stride
    return start, start + (last + 1) * t.element_size()


def scalar_read_pairs(kernel, traced):
    """(read, written) argument positions of a traced kernel: a tensor read through the scalar
    cache, which does not see the kernel's own stores, and one the kernel writes."""
    reads, writes = traced.scalar_reads, traced.writes
    if not (reads and writes):
        return ()
    position = {p.name: i for i, p in enumerate(kernel.params)}
    return tuple((position[r], position[w]) for r in reads for w in writes)


def sharing(args, pairs):
    """The first (read, written) pair whose arguments' memory overlaps, or None."""
    for r, w in pairs:
        (a0, a1), (b0, b1) = _extent(args[r]), _extent(args[w])
        if a0 < b1 and b0 < a1:
            return r, w
    return None


def _check_scalar_reads(kernel, args, pairs):
    shared = sharing(args, pairs)
    if shared:
        read, written = (kernel.params[i].name for i in shared)
        raise LaunchError("kernel %s: argument %r is read through the scalar cache, which does not "
                          "see the kernel's own stores, but its memory overlaps argument %r, which "
                          "the kernel writes" % (kernel.name, read, written),
                          hint="pass %s a copy (%s.clone()) or tensors that do not share memory"
                          % (read, read))


def divisors(kernel, args):
    """{tensor parameter: divisor} of the tensors a call passes (see hk.types.divisor_of)."""
    from hk import types

    return {p.name: types.divisor_of(a.shape, a.stride(), a.data_ptr(), a.element_size())
            for p, a in zip(kernel.params, args) if isinstance(p.kind, types.TensorType)}


def built(kernel, args, arch, constants=None):
    """(Build, grid, args) of a launch on `arch`, with the checks a launch makes (hk.perf)."""
    from hk.runtime import shapes

    _check_args(kernel, args)
    args = scalar_values(kernel, args)
    arch = kernel._arch(arch)
    constants = kernel._constants(constants or {}, arch)
    grid = kernel.launch_grid(args, constants)
    _check_not_empty(kernel, args, grid)
    build = kernel.build(arch, divisors=divisors(kernel, args), **constants)
    shapes.check(build.traced, args, grid)
    _check_scalar_reads(kernel, args, scalar_read_pairs(kernel, build.traced))
    return build, grid, args


_captured = threading.local()


def capturing():
    """Whether this thread's kernel calls are being captured (see capture)."""
    return getattr(_captured, "launches", None) is not None


@contextlib.contextmanager
def capture(arch=None):
    """Within it, a kernel's call records (kernel, args, arch, constants) in the list this
    yields instead of running (hk.perf predicts an op's launches without running them). With
    `arch`, hk.dsl.kernel.launch_arch() answers it meanwhile: an op that plans by its target
    (hk.ops.scaled_mm's fp8 kernels) plans for the target predicted."""
    previous = getattr(_captured, "launches", None), getattr(_captured, "arch", None)
    _captured.launches = []
    _captured.arch = arch or previous[1]
    try:
        yield _captured.launches
    finally:
        _captured.launches, _captured.arch = previous


def captured_arch():
    """The target the calls being captured are for (capture's `arch`), or None."""
    return getattr(_captured, "arch", None) if capturing() else None


# A repeated call (hk.ops makes hundreds per decode step) skips the checks, the grid and the
# lookups above: Kernel._launchers maps a key of everything they depend on (the runner, the
# target's inputs, the constants, each tensor's dtype, shape, strides, device and its address's
# alignment, which its divisor depends on, and each scalar's type) to a _Launcher, whose
# plans hold (the traced or built kernel, the grid) per value of the scalars the grid reads.
# A call its key misses (or a scalar out of range) takes the full path, which raises as before.
MAX_LAUNCHERS = 1024  # per kernel, and plans per launcher: a long-running process meets many shapes
_ALIGN = 64 * 8 - 1   # the address bits hk.types.divisor_of reads: MAX_DIVISOR elements of up to 8 bytes
_PLAIN = (int, float, bool, str, type(None))
_fp32 = struct.Struct("f")


class _Launcher:
    __slots__ = ("ints", "floats", "reads", "plans", "pairs")

    def __init__(self, kernel, reads, pairs):
        from hk import types

        scalars = [(i, p) for i, p in enumerate(kernel.params) if not isinstance(p.kind, types.TensorType)]
        self.ints = tuple(i for i, p in scalars if not p.kind.is_float)
        self.floats = tuple(i for i, p in scalars if p.kind.is_float)
        self.reads = tuple(i for i, p in scalars if p.name in reads)
        self.plans = {}
        self.pairs = pairs  # scalar_read_pairs: checked at every call, the fast path's included

    def values(self, args):
        """The arguments as the compiled kernel sees them, or None: take the full path."""
        if not (self.ints or self.floats):
            return list(args)
        values = list(args)
        for i in self.ints:
            v = operator.index(values[i])  # the key holds its type, one the full path took
            if not INT_MIN <= v <= INT_MAX:
                return None
            values[i] = v
        for i in self.floats:
            try:
                values[i] = _fp32.unpack(_fp32.pack(values[i]))[0]  # fp32's rounding, as torch's
            except OverflowError:
                return None
        return values


def layout(t):
    """What a launch's specialization and checks read of a tensor: its dtype, shape, strides,
    device and its address's alignment (the lowest set bit of the bits divisor_of reads)."""
    p = t.data_ptr() & _ALIGN
    return (t.dtype, t.shape, t.stride(), t.device, p & -p)


def _call_key(kernel, which, arch, args, constants):
    """The key of a call's launcher, or None when it cannot be keyed (the full path says why)."""
    if not (arch or kernel.arch):
        arch = os.environ.get("HK_ARCH")
    try:
        if not constants:
            constants = ()
        else:
            from hk.dsl.kernel import constant_key

            constants = tuple([(k, type(v), v) if type(v) in _PLAIN else (k, constant_key(k, v, kernel.name))
                               for k, v in constants.items()])
        key = (which, arch, constants, tuple([
            (a.dtype, a.shape, a.stride(), a.device, (p := a.data_ptr() & _ALIGN) & -p) if tensor else type(a)
            for tensor, a in zip(kernel._is_tensor, args)]))
    except Exception:
        return None
    return key


_runners = {}


def _runner(which):
    """The runner's module (its `run` is looked up at each call: tests replace it)."""
    module = _runners.get(which)
    if module is None:
        import importlib

        name = {"interp": "hk.interp", "emu": "hk.runtime.emu_launch", "gpu": "hk.runtime.gpu_launch"}[which]
        module = _runners[which] = importlib.import_module(name)
    return module


def launch(kernel, args, arch=None, constants=None):
    if getattr(_captured, "launches", None) is not None:
        _captured.launches.append((kernel, list(args), arch, dict(constants or {})))
        return None
    which = device.runner()
    if which == "gpu" and not arch:
        arch = device.detected_arch()
    key = _call_key(kernel, which, arch, args, constants)
    try:
        launcher = kernel._launchers.get(key)
    except TypeError:  # an unhashable argument: the full path takes it or says why
        launcher = key = None
    if launcher is not None:
        values = launcher.values(args)
        if values is not None:
            plan = launcher.plans.get(tuple([values[i] for i in launcher.reads]) if launcher.reads else ())
            if plan is not None and not (launcher.pairs and sharing(values, launcher.pairs)):
                return _runner(which).run(plan[0], plan[1], values)
    return _launch(kernel, args, arch, constants, which, key)


def bound(kernel, args, arch=None, constants=None):
    """A function of tensors laid out as `args` are (layout()) that launches them as
    kernel(*args, arch=arch, **constants) did, with no checks and no key of its own; None when
    that call left no plan or the kernel takes scalars. For an op that keys its calls by its
    operands' layouts, the runner and the target itself (hk.ops.linear's plans)."""
    if getattr(_captured, "launches", None) is not None:
        return None  # a capture (hk.perf) runs nothing, and needs no runner
    which = device.runner()
    if which == "gpu" and not arch:
        arch_in = device.detected_arch()
    else:
        arch_in = arch
    key = _call_key(kernel, which, arch_in, args, constants)
    try:
        launcher = kernel._launchers.get(key)
    except TypeError:
        return None
    if launcher is None or launcher.ints or launcher.floats or () not in launcher.plans:
        return None
    code, grid = launcher.plans[()]
    runner = _runner(which)
    constants = dict(constants or {})
    pairs = launcher.pairs

    def run(*args):
        if getattr(_captured, "launches", None) is not None or (pairs and sharing(args, pairs)):
            return kernel(*args, arch=arch, **constants)  # the full path (it refuses the overlap)
        return runner.run(code, grid, list(args))

    return run


def _launch(kernel, args, arch, constants, which, key):
    """The full path: every check, the grid, the specialization's lookup; remembered under key."""
    from hk.runtime import shapes

    _check_args(kernel, args)
    args = scalar_values(kernel, args)
    # The architecture first (on a GPU, the GPU's unless the call names one): a kernel's
    # schedule, and so its grid, may depend on it.
    arch = kernel._arch(arch)
    constants = kernel._constants(constants or {}, arch)
    reads = set()
    grid = kernel.launch_grid(args, constants, reads)
    _check_not_empty(kernel, args, grid)
    divs = divisors(kernel, args)
    if which == "interp":
        code = traced = kernel.trace(arch, divisors=divs, **constants)
    else:
        code = kernel.build(arch, divisors=divs, **constants)
        traced = code.traced
    shapes.check(traced, args, grid)
    pairs = scalar_read_pairs(kernel, traced)
    _check_scalar_reads(kernel, args, pairs)
    if key is not None:
        launcher = kernel._launchers.get(key)
        if launcher is None:
            _make_room(kernel._launchers)
            launcher = kernel._launchers[key] = _Launcher(kernel, reads, pairs)
        if {kernel.params[i].name for i in launcher.reads} == reads:
            _make_room(launcher.plans)
            launcher.plans[tuple([args[i] for i in launcher.reads])] = (code, grid)
    return _runner(which).run(code, grid, args)


def _make_room(table):
    """Drops the oldest entry of a full table (dicts keep their order of insertion)."""
    if len(table) >= MAX_LAUNCHERS:
        table.pop(next(iter(table), None), None)
