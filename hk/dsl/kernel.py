"""@hk.kernel and the Kernel object: trace, source, build, call.

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
    def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        ...

    add.trace().dump()      # the hk module after the passes
    add.source()            # the C++ it translates to
    add.build().report()    # compiled and gated (needs the compiler, not a GPU)
    add(a, b, out)          # traces, verifies, translates, compiles once, launches

Positional parameters are tensors (hk.Tensor[dtype]) or scalars (int, float, hk.i32, hk.fp32);
keyword-only parameters are compile-time constants, part of each specialization's key. So is
what is known of each tensor's layout, its divisor (hk.types.divisor_of): a call specializes on
the tensors it is given; trace(), source() and build() take `divisors=` (an int for every
tensor, or {name: int}; default 1, nothing known).

A schedule that differs by target goes in `schedule=`: {arch: {constant: value}}, or a function
of the target's facts (hk.target.facts.TargetFacts) returning such a dict. Its values replace the
signature's defaults for that target, and a caller's own constants replace both:

    @hk.kernel(grid=..., warps=8, schedule={"gfx950": {"BK": 64}})
    def gemm(a: hk.Tensor[hk.bf16], ..., *, BK=32): ...

The constants a search may choose go in `tune=`: an hk.space of some of them (hk.autotune):

    @hk.kernel(grid=..., tune=hk.space(BK=[32, 64], UNROLL=[2, 4]))
"""

import dataclasses
import functools
import inspect
import os
import types as pytypes

from hk import errors, types
from hk.compiler import diagnostics
from hk.dsl import builder as _b
from hk.dsl import rewrite
from hk.dsl.values import Global, Scalar
from hk.errors import LaunchError, Location, TargetError, TraceError, TuneError
from hk.runtime import device
from hk.target import facts

_SCALARS = {int: types.i32, float: types.fp32, types.i32: types.i32, types.fp32: types.fp32}


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: object  # types.TensorType or a scalar DType


def constant_key(name, value, kernel):
    """A specialization's key for one constant: its type and value (lists and tuples element by
    element), so 1 and 1.0, or two objects printed alike, are different specializations."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(constant_key(name, v, kernel) for v in value))
    try:
        hash(value)
    except TypeError:
        raise TraceError("kernel %s: constant %s = %r is a %s, which cannot key a specialization"
                         % (kernel, name, value, type(value).__name__),
                         hint="pass a number, string, bool, dtype, tile type or a tuple of them") from None
    return (type(value), value)


def _parse_params(fn):
    params, constants = [], {}
    sig = inspect.signature(fn)
    for p in sig.parameters.values():
        if p.kind == p.KEYWORD_ONLY:
            constants[p.name] = p.default
            continue
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise TraceError("kernel %s: *args and **kwargs are not kernel parameters" % fn.__name__,
                             location=Location.of_function(fn))
        ann = p.annotation
        if isinstance(ann, types.TensorType):
            params.append(Param(p.name, ann))
        elif ann in _SCALARS:
            params.append(Param(p.name, _SCALARS[ann]))
        else:
            raise TraceError(
                "kernel %s: parameter %r needs an annotation: hk.Tensor[dtype], int or float"
                % (fn.__name__, p.name), location=Location.of_function(fn),
                hint="compile-time constants go after a `*` as keyword-only parameters")
    return params, constants


@dataclasses.dataclass
class TracedKernel:
    """A kernel traced for one architecture and one set of constants, after the passes."""

    name: str
    arch: str
    constants: dict
    params: list  # with each tensor's TensorType carrying this specialization's divisor
    warps: int
    module: object  # hk._mlir.ir.Module, after the passes
    warnings: list

    def dump(self):
        """The hk MLIR module after the passes, as text."""
        return str(self.module)

    @functools.cached_property
    def scalar_reads(self):
        """The tensor parameters read through the scalar cache (hk-scalar-reads): the kernel
        never writes them, and a launch refuses arguments over their memory that it writes."""
        return self._argument_names("hk.scalar_reads")

    @functools.cached_property
    def writes(self):
        """The tensor parameters the kernel writes."""
        return self._argument_names("hk.writes")

    def _argument_names(self, attribute):
        from hk._mlir import ir

        for op in self.module.body.operations:
            if "hk.kernel" in op.attributes:
                if attribute not in op.attributes:
                    return ()
                return tuple(self.params[i].name for i in ir.DenseI64ArrayAttr(op.attributes[attribute]))
        return ()

    @functools.cached_property
    def cpp(self):
        from hk.compiler import pipeline

        return pipeline.translate(self.module, self.arch)

    def __str__(self):
        return self.dump()


def _checked_space(tune, constants, name, fn):
    """tune= as given, refused unless it is an hk.space whose knobs are the kernel's constants."""
    if tune is None:
        return None
    from hk.autotune.space import Space

    if not isinstance(tune, Space):
        raise TuneError("tune= is an hk.space(KNOB=[values], ...), not %r" % (tune,), location=Location.of_function(fn))
    unknown = set(tune.knobs) - set(constants)
    if unknown:
        raise TuneError("kernel %s: its space tunes %s, which %s not among its constants (%s)"
                         % (name, ", ".join(sorted(unknown)), "is" if len(unknown) == 1 else "are",
                            ", ".join(sorted(constants)) or "none"), location=Location.of_function(fn),
                         hint="knobs a search chooses are keyword-only constants: def k(..., *, BLOCK=64)")
    return tune


def default_arch():
    """HK_ARCH, else the GPU's architecture when one is visible, else gfx1100."""
    arch = os.environ.get("HK_ARCH")
    if arch:
        return arch
    return device.detected_arch() or facts.default_arch()


def launch_arch():
    """The target a launch runs for now: the one hk.perf predicts for while it captures an op's
    launches, else the GPU's on a GPU, else default_arch(). A LaunchError when there is no runner
    (device.runner() says why)."""
    arch = (_launch_module or _import_launch()).captured_arch()
    if arch:
        return arch
    return device.detected_arch() if device.runner() == "gpu" else default_arch()


class Kernel:
    """A DSL kernel: traced, verified, translated and compiled once per specialization."""

    def __init__(self, fn, *, grid=None, warps=1, arch=None, name=None, max_vgprs=None,
                 min_occupancy=None, schedule=None, tune=None):
        if not isinstance(warps, int) or warps < 1:
            raise TraceError("warps must be a positive integer, not %r" % (warps,),
                             location=Location.of_function(fn))
        for option, value in (("max_vgprs", max_vgprs), ("min_occupancy", min_occupancy)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise TraceError("%s must be a positive integer or None, not %r" % (option, value),
                                 location=Location.of_function(fn))
        if not (schedule is None or callable(schedule) or isinstance(schedule, dict)):
            raise TraceError("schedule= is {arch: {constant: value}} or a function of the target's "
                             "facts returning such a dict, not %r" % (schedule,), location=Location.of_function(fn))
        self.fn = fn
        self.grid = grid
        self.warps = warps
        self.arch = arch
        self.name = name or fn.__name__
        self.max_vgprs = max_vgprs
        self.min_occupancy = min_occupancy
        self.schedule = schedule
        rewrite.refuse_generators(fn, "kernel")
        self.params, self.default_constants = _parse_params(fn)
        self._is_tensor = tuple(isinstance(p.kind, types.TensorType) for p in self.params)
        self.tune = _checked_space(tune, self.default_constants, self.name, fn)
        self._body = None
        self._traces = {}
        self._builds = {}
        self._launchers = {}  # hk.runtime.launch's: a call's key -> what its launch needs
        functools.update_wrapper(self, fn)

    # Specializations -----------------------------------------------------------------------------

    def scheduled(self, arch):
        """The constants the kernel's schedule= gives `arch` (empty without one)."""
        if self.schedule is None:
            return {}
        chosen = self.schedule(facts.target(arch)) if callable(self.schedule) else self.schedule.get(arch, {})
        if not isinstance(chosen, dict):
            raise TraceError("kernel %s: its schedule for %s is %r, not a dict of constants"
                             % (self.name, arch, chosen), location=Location.of_function(self.fn))
        unknown = set(chosen) - set(self.default_constants)
        if unknown:
            raise TraceError("kernel %s: its schedule for %s sets %s, which %s not among its constants (%s)"
                             % (self.name, arch, ", ".join(sorted(unknown)), "is" if len(unknown) == 1 else "are",
                                ", ".join(sorted(self.default_constants)) or "none"),
                             location=Location.of_function(self.fn))
        return dict(chosen)

    def _constants(self, overrides, arch):
        unknown = set(overrides) - set(self.default_constants)
        if unknown:
            raise TraceError("kernel %s has no constant(s) %s; its constants are %s"
                             % (self.name, ", ".join(sorted(unknown)),
                                ", ".join(sorted(self.default_constants)) or "none"))
        constants = dict(self.default_constants, **self.scheduled(arch))
        constants.update(overrides)
        missing = [k for k, v in constants.items() if v is inspect.Parameter.empty]
        if missing:
            raise TraceError("kernel %s needs a value for constant(s) %s" % (self.name, ", ".join(missing)))
        return constants

    def _arch(self, arch):
        arch = arch or self.arch or default_arch()
        facts.target(arch)  # TargetError for an unknown architecture
        return arch

    def _divisors(self, divisors):
        """Each tensor parameter's divisor, in parameter order."""
        tensors = [p.name for p in self.params if isinstance(p.kind, types.TensorType)]
        if divisors is None:
            divisors = {}
        elif isinstance(divisors, int) and not isinstance(divisors, bool):
            divisors = {name: divisors for name in tensors}
        if not isinstance(divisors, dict):
            raise TraceError("kernel %s: divisors= is an int or {tensor name: int}, not %r"
                             % (self.name, divisors))
        unknown = set(divisors) - set(tensors)
        if unknown:
            raise TraceError("kernel %s has no tensor parameter(s) %s; its tensors are %s"
                             % (self.name, ", ".join(sorted(unknown)), ", ".join(tensors) or "none"))
        for name, d in divisors.items():
            if type(d) is not int or d < 1 or d & (d - 1) or d > types.MAX_DIVISOR:
                raise TraceError("kernel %s: the divisor of %s must be a power of two from 1 to %d, "
                                 "not %r" % (self.name, name, types.MAX_DIVISOR, d))
        return tuple(divisors.get(name, 1) for name in tensors)

    def _key(self, arch, constants, divisors):
        return (arch, tuple(sorted((k, constant_key(k, v, self.name)) for k, v in constants.items())),
                divisors)

    def trace(self, arch=None, *, divisors=None, **constants):
        """Traces the kernel for `arch` and runs the passes; a TracedKernel."""
        arch = self._arch(arch)
        constants = self._constants(constants, arch)
        divisors = self._divisors(divisors)
        key = self._key(arch, constants, divisors)
        traced = self._traces.get(key)
        if traced is None:
            try:
                traced = self._trace(arch, constants, divisors)
            except errors.HKError:
                raise
            except Exception as e:
                raise errors.as_hk_error(e, TraceError, "tracing kernel %s" % self.name) from e
            self._traces[key] = traced
            for w in traced.warnings:  # once per specialization: at its trace, build or call
                errors.warn(diagnostics.with_notes(w), location=diagnostics.location_of(w))
        return traced

    def source(self, arch=None, *, divisors=None, **constants):
        """The C++ the kernel translates to."""
        return self.trace(arch, divisors=divisors, **constants).cpp

    def build(self, arch=None, *, divisors=None, **constants):
        """Compiles the kernel and runs the resource gate; a Build (needs the compiler, no GPU)."""
        from hk.runtime import build as build_lib

        traced = self.trace(arch, divisors=divisors, **constants)
        key = self._key(traced.arch, traced.constants, tuple(
            p.kind.divisor for p in traced.params if isinstance(p.kind, types.TensorType)))
        built = self._builds.get(key)
        if built is None:
            built = build_lib.build(traced, max_vgprs=self.max_vgprs, min_occupancy=self.min_occupancy)
            built.kernel = self
            self._builds[key] = built
        return built

    # Tracing -------------------------------------------------------------------------------------

    def _trace(self, arch, constants, divisors):
        from hk._mlir import ir
        from hk._mlir.dialects import arith, func, scf
        from hk._mlir.dialects import hk as hkd
        from hk.compiler import pipeline

        if self._body is None:
            self._body = rewrite.rewrite(self.fn)
        it = iter(divisors)
        params = [Param(p.name, types.TensorType(p.kind.dtype, next(it)))
                  if isinstance(p.kind, types.TensorType) else p for p in self.params]
        dialects = pytypes.SimpleNamespace(hk=hkd, arith=arith, func=func, scf=scf)
        b = _b.Builder(ir, dialects, arch)
        with _b.active(b):
            where = ir.Location.file(self.fn.__code__.co_filename, self.fn.__code__.co_firstlineno, 1)
            with where:
                b.module = ir.Module.create()
                b.module.operation.attributes["hk.arch"] = ir.StringAttr.get(arch)
                arg_types = [b.type(p.kind.mlir() if isinstance(p.kind, types.TensorType) else p.kind.mlir)
                             for p in params]
                with ir.InsertionPoint(b.module.body):
                    kernel = func.FuncOp(self.name, ir.FunctionType.get(arg_types, []))
                kernel.attributes["hk.kernel"] = ir.UnitAttr.get()
                i32 = ir.IntegerType.get_signless(32)
                kernel.attributes["hk.warps"] = ir.IntegerAttr.get(i32, self.warps)
                if self.max_vgprs is not None:
                    kernel.attributes["hk.max_vgprs"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                           self.max_vgprs)
                entry = kernel.add_entry_block()
            args = []
            for p, v in zip(params, entry.arguments):
                if isinstance(p.kind, types.TensorType):
                    args.append(Global(v, p.kind.dtype, p.name))
                else:
                    args.append(Scalar(v))
            with b.insert_into(entry):
                result = self._body(*args, **constants)
                if result is not None:
                    raise TraceError("kernel %s returns %s; a kernel's results are what it stores "
                                     "into its tensor parameters" % (self.name, type(result).__name__),
                                     location=rewrite.first_of(self.fn, ("Return",), valued=True),
                                     hint="store it: out[coord] = value (or out.store_scalar(...))")
                with where:
                    func.ReturnOp([])
            pipeline.verify(b.module)
            warnings = pipeline.run(b.module, arch)
        return TracedKernel(self.name, arch, constants, params, self.warps, b.module, warnings)

    # Launch --------------------------------------------------------------------------------------

    def launch_grid(self, args, constants, reads=None):
        """The grid for these arguments: the `grid` lambda over a view of the parameters. The
        names of the scalar parameters it reads are added to the set `reads` (a launch keeps
        the grid of a specialization and shapes, per value of those scalars)."""
        if self.grid is None:
            raise LaunchError("kernel %s has no grid; pass grid=lambda p: (...) to @hk.kernel" % self.name)
        view = _GridView(self.name, constants, reads)
        for p, a in zip(self.params, args):
            if isinstance(p.kind, types.TensorType):
                setattr(view, p.name, TensorExtents.of(a))
            else:
                view._scalars[p.name] = a
        try:
            grid = self.grid(view) if callable(self.grid) else self.grid
        except errors.HKError:
            raise
        except Exception as e:  # the user's grid function, on these arguments
            code = getattr(self.grid, "__code__", None)
            where = " (%s:%d)" % (code.co_filename, code.co_firstlineno) if code else ""
            raise LaunchError("kernel %s: its grid function%s raised %s: %s on these arguments"
                              % (self.name, where, type(e).__name__, e),
                              hint="check the constants and the tensors' shapes it reads") from None
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        if not 1 <= len(grid) <= 3 or any(isinstance(g, bool) or not hasattr(g, "__index__") or g < 0
                                          for g in grid):
            raise LaunchError("kernel %s: the grid must be 1 to 3 non-negative integers, got %r"
                              % (self.name, grid),
                              hint="round explicitly, e.g. hk.cdiv(p.o.rows, 16), rather than dividing")
        grid = tuple(g.__index__() for g in grid)
        return grid + (1,) * (3 - len(grid))

    def __call__(self, *args, arch=None, **constants):
        launch = _launch_module or _import_launch()
        if len(args) != len(self.params):
            raise LaunchError("kernel %s takes %d arguments (%s) but got %d"
                              % (self.name, len(self.params), ", ".join(p.name for p in self.params), len(args)))
        try:
            return launch.launch(self, args, arch=arch, constants=constants)
        except errors.HKError:
            raise
        except Exception as e:
            raise errors.as_hk_error(e, LaunchError, "launching kernel %s" % self.name) from e


_launch_module = None


def _import_launch():
    global _launch_module
    from hk.runtime import launch

    _launch_module = launch
    return launch


class _GridView(pytypes.SimpleNamespace):
    """What the grid lambda sees: each parameter by name and each constant. The scalars are
    looked up on demand, so that the names read are known."""

    def __init__(self, kernel, constants, reads=None):
        super().__init__(**constants)
        object.__setattr__(self, "_kernel", kernel)
        object.__setattr__(self, "_scalars", {})
        object.__setattr__(self, "_reads", set() if reads is None else reads)

    def __getattr__(self, name):
        scalars = object.__getattribute__(self, "_scalars")
        if name in scalars:
            object.__getattribute__(self, "_reads").add(name)
            return scalars[name]
        names = sorted([n for n in vars(self) if not n.startswith("_")] + list(scalars))
        raise LaunchError("kernel %s: its grid asks for %r, which is neither a parameter nor a "
                          "constant (it has %s)" % (self._kernel, name, ", ".join(names)))


@dataclasses.dataclass(frozen=True)
class TensorExtents:
    """A tensor argument as the grid lambda sees it: its 4-D extents."""

    batch: int
    depth: int
    rows: int
    cols: int

    @classmethod
    def of(cls, tensor):
        try:
            return cls(*types.view4d(getattr(tensor, "shape", ())))
        except ValueError as e:
            raise LaunchError(str(e)) from None

    def __getattr__(self, name):
        raise LaunchError("a tensor's extents in a grid are batch, depth, rows and cols, not %r" % name)


def kernel(fn=None, **options):
    """Declares a kernel; see the module docstring. Options: grid, warps, arch, name,
    max_vgprs, min_occupancy, schedule, tune."""
    if fn is None:
        return lambda f: Kernel(f, **options)
    return Kernel(fn, **options)
