"""What a search needs of a kernel or an op: its space, the kernel a candidate makes, the launch
arguments of a shape, today's choice, and the bucket a shape's result is recorded under.

A kernel declared with `tune=` is one as it stands (every knob a keyword-only constant, each
shape a tuple of launch arguments, meta tensors welcome):

    @hk.kernel(grid=..., tune=hk.space(BLOCK=[64, 128, 256]))
    def scale(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, BLOCK=64): ...

    hk.autotune.search(scale, [(x, o)], "gfx1100")

An op whose knobs also choose among kernels (the GEMM's `waves` picks gemm_kernel(waves=...))
declares a Tunable; hk.ops.gemm.LINEAR is the GEMM's. An op that runs several kernels per call
(decode's split-K product and its sum, a MoE layer's two grouped GEMMs) declares `launches`
instead of `kernel` and `arguments`: a candidate is then a sequence of Launches, predicted as
the sum of their times and timed as one unit (hk.ops.gemm.SPLIT_K, hk.ops.moe.FUSED_MOE).
"""

import dataclasses
import functools
import hashlib
import inspect
import marshal
import os

from hk.errors import TuneError


@dataclasses.dataclass(frozen=True)
class Launch:
    """One kernel launch of a candidate: the kernel, its constants and its own arguments (their
    shapes give its grid). Launches of one candidate may share tensors (one writes what the
    next reads): timing makes each shared meta tensor one real tensor."""

    kernel: object
    constants: dict
    args: tuple


@dataclasses.dataclass(frozen=True)
class Tunable:
    """A kernel or an op as a search sees it.

    name       the op (a tuned file's section), e.g. "linear"
    space      a Space, or a function of the target's facts (hk.target.facts) returning one
    knobs      every knob the kernel takes: a space naming another is refused
    default    arch -> {knob: value}, the choice launches make without a tuned one
    bucket     shape -> the key (a string) its result is recorded and looked up under
    describe   shape -> a string that identifies it exactly (the result cache's key)
    kernel     (Config, shape) -> (hk.Kernel, {constant: value}) of that candidate at that shape
    arguments  shape -> the launch's arguments (tensors may be meta tensors)
    launches   instead of kernel and arguments, for a candidate of several launches:
               (Config, shape) -> [Launch], in the order a call runs them
    sources    the files whose content decides the kernels (a change re-evaluates)
    salt       more bytes that decide them (a kernel's compiled body, when it has no file)
    """

    name: str
    space: object
    knobs: frozenset
    default: object
    bucket: object
    describe: object
    kernel: object = None
    arguments: object = None
    launches: object = None
    sources: tuple = ()
    salt: bytes = b""

    def __post_init__(self):
        if (self.launches is None) == (self.kernel is None or self.arguments is None):
            raise TuneError("Tunable %s declares either kernel and arguments (one launch per candidate) "
                            "or launches (a sequence), not %s" % (
                                self.name, "both" if self.launches is not None else "neither"))

    def launches_of(self, config, shape):
        """[Launch] of a candidate at a shape: one (kernel, arguments) or the declared sequence."""
        if self.launches is None:
            kernel, constants = self.kernel(config, shape)
            return [Launch(kernel, constants, tuple(self.arguments(shape)))]
        made = list(self.launches(config, shape))
        if not made or not all(isinstance(x, Launch) for x in made):
            raise TuneError("%s's launches(config, shape) returns a non-empty list of hk.autotune.Launch, not %r"
                            % (self.name, made))
        return made

    def space_for(self, arch, space=None):
        """The space searched on `arch` (`space` replaces the declared one), with its knobs
        checked against those the kernel takes."""
        from hk.autotune.space import Space
        from hk.target import facts

        chosen = space if space is not None else self.space
        if callable(chosen) and not isinstance(chosen, Space):
            chosen = chosen(facts.target(arch))
        if not isinstance(chosen, Space):
            raise TuneError("%s has no search space (a Space, or a function of the target's facts "
                            "returning one), it has %r" % (self.name, chosen),
                            hint="declare one with hk.space(KNOB=[values], ...)")
        unknown = set(chosen.knobs) - set(self.knobs)
        if unknown:
            raise TuneError("%s takes no knob %s; its knobs are %s"
                            % (self.name, ", ".join(sorted(unknown)), ", ".join(sorted(self.knobs))))
        return chosen

    @functools.cached_property
    def source_digest(self):
        """The digest of the files that decide the kernels."""
        digest = hashlib.sha256(self.salt)
        for path in self.sources:
            digest.update(os.path.basename(path).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read())
        return digest.hexdigest()


def describe_arguments(args):
    """A launch's arguments as text that tells two shapes apart: dtype, shape and strides of each
    tensor, a scalar's value."""
    parts = []
    for a in args:
        if hasattr(a, "shape") and hasattr(a, "stride"):
            parts.append("%s%s/%s" % (str(a.dtype).replace("torch.", ""), list(a.shape), list(a.stride())))
        else:
            parts.append(repr(a))
    return " ".join(parts)


def of_kernel(kernel):
    """The Tunable of an hk.Kernel declared with tune=: knobs are its constants, a shape is a
    tuple of launch arguments."""
    space = getattr(kernel, "tune", None)
    if space is None:
        raise TuneError("kernel %s declares no search space" % kernel.name,
                        hint="declare it: @hk.kernel(..., tune=hk.space(KNOB=[values], ...)), or pass space=")

    def default(arch):
        constants = kernel._constants({}, arch)
        return {k: constants[k] for k in kernel.default_constants}

    try:
        source = (inspect.getsourcefile(kernel.fn),)
    except TypeError:
        source = ()
    return Tunable(name=kernel.name, space=space, knobs=frozenset(kernel.default_constants),
                   kernel=lambda config, shape: (kernel, config.as_dict()), arguments=tuple,
                   default=default, bucket=describe_arguments, describe=describe_arguments,
                   sources=tuple(s for s in source if s and os.path.isfile(s)),
                   salt=kernel.name.encode() + b"\0" + marshal.dumps(kernel.fn.__code__))


def as_tunable(target):
    """A Tunable, or the Tunable of a kernel declared with tune=."""
    if isinstance(target, Tunable):
        return target
    from hk.dsl.kernel import Kernel

    if isinstance(target, Kernel):
        return of_kernel(target)
    raise TuneError("search takes an hk.Kernel declared with tune= or an hk.autotune.Tunable, not %s"
                    % type(target).__name__)
