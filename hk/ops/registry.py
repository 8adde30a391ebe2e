"""What every hk op shares: its torch.library registration in the `hk` namespace, a fake
(meta) implementation so that torch.compile traces through it, and the checks that turn a tensor
an op cannot take into an hk.errors.LaunchError naming the call.

An op's implementation launches hk kernels through the runner HK_DEVICE chooses (a GPU, or
`interp` / `emu` without one). It allocates only its outputs, never synchronizes with the host,
and its Python work depends on the shapes only, which is what graph capture needs.
"""

import torch

from hk import types
from hk.dsl.kernel import launch_arch  # noqa: F401 (hk.ops and its callers ask it here)
from hk.errors import LaunchError
from hk.runtime.launch import unit_stride

NAMESPACE = "hk"
FLOATS = (torch.bfloat16, torch.float16, torch.float32)


# hk's ops are defined on torch.library.Library directly rather than through
# torch.library.custom_op: custom_op wraps every call in Python layers (its autograd and
# version-bump kernels, the implementation's aliasing checks) that cost ~10 us a call, as much as
# the op's own Python. What stays: the schema (Tensor(a!) for what an op writes), a fake, and one
# Python kernel at the Autograd key (the version bump of what the op writes, no gradient).
_LIB = torch.library.Library(NAMESPACE, "FRAGMENT")
_IMPLS = {}  # op -> its Python implementation
_BELOW_AUTOGRAD = torch._C._after_autograd_keyset
# What is left below autograd for plain CPU or GPU tensors: nothing but the backend's kernel, which
# the autograd kernel then calls itself (a redispatch costs another trip through the dispatcher).
# Fake, functional and subclass tensors and Python modes add keys, and take the redispatch.
_PLAIN = frozenset(torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, k)).raw_repr() for k in ("CPU", "CUDA"))


class _NoGradient(torch.autograd.Function):
    """A call whose inputs require grad: the op runs, and a backward through it raises."""

    @staticmethod
    def forward(ctx, op, keyset, kwargs, *args):
        ctx.op = op
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & _BELOW_AUTOGRAD, *args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        raise LaunchError("hk.ops.%s has no autograd formula: a backward through it cannot be computed"
                          % ctx.op._opname, hint="call it under torch.no_grad() (hk's ops are forward only)")


def _autograd_kernel(op, impl, written):
    """The op's kernel at the Autograd key: bumps the version of the tensors it writes (what
    autograd's checks of a saved tensor modified in place read) and passes the call below."""
    returns = len(op._schema.returns)
    names = [op._schema.arguments[i].name for i in written]

    def kernel(keyset, *args, **kwargs):
        if written:
            # (A written tensor may be optional: left out, given by name, or None.)
            tensors = [args[i] if i < len(args) else kwargs.get(name) for i, name in zip(written, names)]
            torch._C._increment_version([t for t in tensors if t is not None])
        if torch.is_grad_enabled() and torch._C._any_requires_grad(*args, **kwargs):
            return _NoGradient.apply(op, keyset, kwargs, *args)
        below = keyset & _BELOW_AUTOGRAD
        if below.raw_repr() not in _PLAIN:
            return op.redispatch(below, *args, **kwargs)
        out = impl(*args, **kwargs)  # what the dispatcher would return from it
        return None if not returns else out if returns == 1 else tuple(out)
    return kernel


def define(name, schema, impl, fake, mutates=()):
    """Registers hk::name with `schema` ("(Tensor x, ...) -> Tensor", the tensors in `mutates`
    marked Tensor(a!)), its implementation and its fake; the op (torch.ops.hk.name.default)."""
    args = torch._C.parse_schema(name + schema).arguments
    written = tuple(i for i, a in enumerate(args) if a.alias_info is not None and a.alias_info.is_write)
    if {args[i].name for i in written} != set(mutates):
        raise AssertionError("hk::%s: the schema writes %s, mutates says %s"
                             % (name, sorted(args[i].name for i in written), sorted(mutates)))
    _LIB.define(name + schema, tags=(torch.Tag.pt2_compliant_tag,))
    op = getattr(getattr(torch.ops, NAMESPACE), name).default
    _LIB.impl(name, impl, "CompositeExplicitAutograd")
    torch.library.register_fake(op, fake, lib=_LIB)
    _LIB.impl(name, _autograd_kernel(op, impl, written), "Autograd", with_keyset=True)
    _IMPLS[op] = impl
    return op


def implementation(fn):
    """The Python implementation of the hk op `fn` (torch.ops.hk.NAME or its .default), which
    launches its kernels whatever the tensors' device (meta tensors go to the op's fake through
    the dispatcher); None for anything else."""
    if isinstance(fn, torch._ops.OpOverloadPacket):
        fn = getattr(fn, "default", None)
    return _IMPLS.get(fn) if isinstance(fn, torch._ops.OpOverload) else None


def dtype_of(op, t, allowed=FLOATS):
    """The hk dtype of tensor `t`, refused unless it is one of `allowed`."""
    if t.dtype not in allowed:
        raise LaunchError("hk.ops.%s: tensors of %s are not supported" % (op, t.dtype),
                          hint="pass %s" % " or ".join(str(d).replace("torch.", "") for d in allowed))
    return types.from_torch(t.dtype)


def columns(op, name, t):
    """The length of `t`'s last dimension, along which the op works; a 0-d tensor has none."""
    if t.dim() == 0:
        raise LaunchError("hk.ops.%s: %s is a 0-d tensor; the op works along its last dimension" % (op, name),
                          hint="pass %s.reshape(1) for one element" % name)
    return t.shape[-1]


def rows(op, name, t, cols=None, writable=False):
    """`t` as a [rows, cols] view with unit stride along its rows (cols None: t's last
    dimension; a 0-d tensor is one row of one); a copy of an input that has no such view, an
    error for an output (which must be written in place)."""
    if t.dim() == 2 and unit_stride(t) and (cols is None or t.shape[1] == cols):
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
    if flat is None or not unit_stride(flat):
        if writable:
            raise LaunchError("hk.ops.%s: %s (shape %s, strides %s) has no [rows, %d] view with "
                              "contiguous rows, so it cannot be written in place"
                              % (op, name, tuple(t.shape), t.stride(), cols),
                              hint="pass a tensor whose last dimension is contiguous")
        flat = t.contiguous().view(-1, cols)
    return flat


def vector(op, name, t, writable=False):
    """`t` (scales, say) as a vector with unit stride; a copy of an input that has no such view,
    an error for an output (which must be written in place)."""
    try:
        flat = t.view(-1)
    except RuntimeError:  # no such view of these strides
        flat = None
    if flat is None or not unit_stride(flat):
        if writable:
            raise LaunchError("hk.ops.%s: %s (shape %s, strides %s) is not one run of elements, so it "
                              "cannot be written in place" % (op, name, tuple(t.shape), t.stride()),
                              hint="pass a contiguous tensor")
        flat = t.contiguous().view(-1)
    return flat


def same(op, name, t, like):
    if t.dtype != like.dtype or t.device != like.device:
        raise LaunchError("hk.ops.%s: %s is %s on %s but the input is %s on %s"
                          % (op, name, t.dtype, t.device, like.dtype, like.device),
                          hint="convert it with .to(x.dtype) once, outside the hot path")
