"""What every hk op shares: its torch.library registration in the `hk` namespace, a fake
(meta) implementation so that torch.compile traces through it, and the checks that turn a tensor
an op cannot take into an hk.errors.LaunchError naming the call.

An op's implementation launches hk kernels through the runner HK_DEVICE chooses (a GPU, or
`interp` / `emu` without one). It allocates only its outputs, never synchronizes with the host,
and its Python work depends on the shapes only, which is what graph capture needs.
"""

import torch

from hk import types
from hk.dsl.kernel import default_arch
from hk.errors import LaunchError
from hk.runtime import device

NAMESPACE = "hk"
FLOATS = (torch.bfloat16, torch.float16, torch.float32)


def define(name, schema, impl, fake, mutates=()):
    """Registers hk::name with `schema` ("(Tensor x, ...) -> Tensor", mutated tensors marked
    Tensor(a!)), its implementation and its fake; the op (torch.ops.hk.name's callable)."""
    op = torch.library.custom_op("%s::%s" % (NAMESPACE, name), impl, mutates_args=tuple(mutates), schema=schema)
    op.register_fake(fake)
    return op


def launch_arch():
    """The target the kernels of a launch run for, as the launch picks it."""
    return device.detected_arch() if device.runner() == "gpu" else default_arch()


def dtype_of(op, t, allowed=FLOATS):
    """The hk dtype of tensor `t`, refused unless it is one of `allowed`."""
    if t.dtype not in allowed:
        raise LaunchError("hk.ops.%s: tensors of %s are not supported" % (op, t.dtype),
                          hint="pass %s" % " or ".join(str(d).replace("torch.", "") for d in allowed))
    return types.from_torch(t.dtype)


def rows(op, name, t, cols=None, writable=False):
    """`t` as a [rows, cols] view with unit stride along its rows (cols None: t's last
    dimension; a 0-d tensor is one row of one); a copy of an input that has no such view, an
    error for an output (which must be written in place)."""
    if t.dim() == 2 and t.stride(-1) == 1 and (cols is None or t.shape[1] == cols):
        return t  # already such a view (what t.view(-1, cols) would give)
    if t.dim() == 0:
        t = t.view(1, 1)
    cols = t.shape[-1] if cols is None else cols
    if t.shape[-1] != cols:
        raise LaunchError("hk.ops.%s: %s has %d columns where %d are expected" % (op, name, t.shape[-1], cols))
    try:
        flat = t.view(-1, cols)
    except RuntimeError:  # no such view of these strides
        flat = None
    if flat is None or (flat.numel() and flat.stride(-1) != 1):
        if writable:
            raise LaunchError("hk.ops.%s: %s (shape %s, strides %s) has no [rows, %d] view with "
                              "contiguous rows, so it cannot be written in place"
                              % (op, name, tuple(t.shape), t.stride(), cols),
                              hint="pass a tensor whose last dimension is contiguous")
        flat = t.contiguous().view(-1, cols)
    return flat


def same(op, name, t, like):
    if t.dtype != like.dtype or t.device != like.device:
        raise LaunchError("hk.ops.%s: %s is %s on %s but the input is %s on %s"
                          % (op, name, t.dtype, t.device, like.dtype, like.device),
                          hint="convert it with .to(x.dtype) once, outside the hot path")
