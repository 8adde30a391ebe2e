"""Launching a kernel: the arguments checked, the specialization, the grid, and the runner
HK_DEVICE chooses. Every refusal is a LaunchError at the user's call."""

import contextlib
import operator
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
            if a.stride(-1) != 1:
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
            if isinstance(a, bool) or not isinstance(a, (int, float)):
                raise LaunchError("kernel %s: argument %r must be a Python float, not %s"
                                  % (kernel.name, p.name, type(a).__name__))
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
    return build, grid, args


_captured = threading.local()


@contextlib.contextmanager
def capture():
    """Within it, a kernel's call records (kernel, args, arch, constants) in the list this
    yields instead of running (hk.perf predicts an op's launches without running them)."""
    previous = getattr(_captured, "launches", None)
    _captured.launches = []
    try:
        yield _captured.launches
    finally:
        _captured.launches = previous


def launch(kernel, args, arch=None, constants=None):
    from hk.runtime import shapes

    if getattr(_captured, "launches", None) is not None:
        _captured.launches.append((kernel, list(args), arch, dict(constants or {})))
        return None
    which = device.runner()
    _check_args(kernel, args)
    args = scalar_values(kernel, args)
    # The architecture first (on a GPU, the GPU's unless the call names one): a kernel's
    # schedule, and so its grid, may depend on it.
    arch = kernel._arch(arch or (device.detected_arch() if which == "gpu" else None))
    constants = kernel._constants(constants or {}, arch)
    grid = kernel.launch_grid(args, constants)
    _check_not_empty(kernel, args, grid)
    divs = divisors(kernel, args)
    if which == "interp":
        from hk.interp import run

        traced = kernel.trace(arch, divisors=divs, **constants)
        shapes.check(traced, args, grid)
        return run(traced, grid, args)
    if which == "emu":
        from hk.runtime import emu_launch

        built = kernel.build(arch, divisors=divs, **constants)
        shapes.check(built.traced, args, grid)
        return emu_launch.run(built, grid, args)
    from hk.runtime import gpu_launch

    built = kernel.build(arch, divisors=divs, **constants)
    shapes.check(built.traced, args, grid)
    return gpu_launch.run(built, grid, args)
