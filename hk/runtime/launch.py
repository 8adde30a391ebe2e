"""Launching a kernel: the specialization, the grid, and the runner HK_DEVICE chooses."""

from hk.errors import LaunchError
from hk.runtime import device

# A tile's rows (up to 256) at 32-bit byte offsets from its first.
MAX_ROW_BYTES = (1 << 31) // 256


def _check_args(kernel, args):
    from hk import types

    for p, a in zip(kernel.params, args):
        if isinstance(p.kind, types.TensorType):
            dtype = types.from_torch(getattr(a, "dtype", None))
            if dtype is None or dtype != p.kind.dtype:
                raise LaunchError("kernel %s: argument %r must be a tensor of %r but is %s"
                                  % (kernel.name, p.name, p.kind.dtype, getattr(a, "dtype", type(a).__name__)))
            if a.dim() and a.stride(-1) != 1:
                raise LaunchError("kernel %s: argument %r must have unit stride in its last dimension"
                                  % (kernel.name, p.name), hint="pass tensor.contiguous()")
            if a.dim() > 1 and a.stride(-2) * a.element_size() >= MAX_ROW_BYTES:
                raise LaunchError("kernel %s: the rows of argument %r are %d bytes apart; the tile "
                                  "library addresses a tile's rows with 32-bit offsets, so rows must "
                                  "be less than %d bytes apart" % (kernel.name, p.name,
                                                                   a.stride(-2) * a.element_size(), MAX_ROW_BYTES),
                                  hint="pass a view whose rows are closer, or tensor.contiguous()")
        elif not isinstance(a, (int, float)):
            raise LaunchError("kernel %s: argument %r must be a Python %s, not %s"
                              % (kernel.name, p.name, "int" if not p.kind.is_float else "float",
                                 type(a).__name__))


def divisors(kernel, args):
    """{tensor parameter: divisor} of the tensors a call passes (see hk.types.divisor_of)."""
    from hk import types

    return {p.name: types.divisor_of(a.shape, a.stride(), a.data_ptr(), a.element_size())
            for p, a in zip(kernel.params, args) if isinstance(p.kind, types.TensorType)}


def launch(kernel, args, arch=None, constants=None):
    which = device.runner()
    _check_args(kernel, args)
    constants = kernel._constants(constants or {})
    grid = kernel.launch_grid(args, constants)
    divs = divisors(kernel, args)
    if which == "interp":
        from hk.interp import run

        traced = kernel.trace(arch, divisors=divs, **constants)
        return run(traced, grid, args)
    if which == "emu":
        from hk.runtime import emu_launch

        built = kernel.build(arch, divisors=divs, **constants)
        return emu_launch.run(built, grid, args)
    from hk.runtime import gpu_launch

    built = kernel.build(arch or device.detected_arch(), divisors=divs, **constants)
    return gpu_launch.run(built, grid, args)
