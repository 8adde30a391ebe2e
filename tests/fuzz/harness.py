"""Running generated programs: each written to its own file and imported (so hk's errors name
that file and line), traced, run on the interpreter, compiled in batches (one clang run for many
kernels) and run on the emulator, and the two runs compared as the generator says they must
agree."""

import dataclasses
import importlib.util
import os
import sys

import torch

from hk.errors import HKError
from hk.runtime import build as build_lib, cache, emu_launch, gate, launch, metadata
from hk.runtime import toolchain as toolchain_lib

from tests.fuzz.values import APPROX, tolerance

TORCH = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "i32": torch.int32,
         "i8": torch.int8, "fp8e4m3": torch.float8_e4m3fn, "fp8e5m2": torch.float8_e5m2}


def load_module(path, name):
    """Imports the program at `path` as module `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def write(directory, program):
    path = os.path.join(directory, program.name + ".py")
    with open(path, "w") as f:
        f.write(program.source)
    return path


# Arguments -------------------------------------------------------------------------------------

def _data(t, g):
    shape = t.shape
    if t.role == "ids":
        n = shape[-1]
        ids = torch.randperm(51, generator=g)[:n] - 3  # unique ids in -3 .. 47: padding and misses
        return ids.to(torch.int32).reshape(shape)
    if t.dtype in ("i32", "i8"):
        lo, hi = (-64, 65) if t.dtype == "i32" else (-128, 128)
        x = torch.randint(lo, hi, shape, generator=g, dtype=torch.int64)
        if t.dtype == "i32":
            big = torch.randint(-2 ** 31, 2 ** 31 - 1, shape, generator=g, dtype=torch.int64)
            x = torch.where(torch.rand(shape, generator=g) < 0.1, big, x)
        return x.to(TORCH[t.dtype])
    x = torch.randint(-31, 32, shape, generator=g).float() / 8.0
    if t.role == "in":
        specials = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0])
        pick = torch.randint(0, 4, shape, generator=g)
        x = torch.where(torch.rand(shape, generator=g) < 0.03, specials[pick], x)
    return x.to(TORCH[t.dtype])


def arguments(program):
    """Fresh arguments of `program` (the same every call): tensors, then scalars."""
    g = torch.Generator().manual_seed(program.seed)
    args = [_data(t, g) for t in program.tensors]
    return args + [s.value for s in program.scalars]


# Comparison ------------------------------------------------------------------------------------

def _bits(x):
    return x.view(torch.int8 if x.element_size() == 1 else torch.int16 if x.element_size() == 2 else torch.int32)


def disagreement(t, a, b):
    """None when output tensor `t` agrees between the two runs (a and b), else a description."""
    if a.shape != b.shape:
        return "shapes %s and %s" % (tuple(a.shape), tuple(b.shape))
    if not a.is_floating_point():
        bad = a != b
    else:
        nan = torch.isnan(a.float()) & torch.isnan(b.float())
        if t.kind == APPROX:
            fa, fb = a.float(), b.float()
            close = (fa - fb).abs() <= tolerance(t.dtype) * (t.mag + fb.abs())
            bad = ~(nan | close | (fa == fb))
        else:
            # The sign of a zero is open where IEEE leaves it (max/min of +0 and -0): any zero
            # is every zero (docs/semantics.md).
            bad = ~(nan | (_bits(a) == _bits(b)) | ((a == 0) & (b == 0)))
    if not bad.any():
        return None
    where = bad.nonzero()[0].tolist()
    return "%s (%s, %s) differs at %d element(s), first at %s: %r vs %r" % (
        t.name, t.dtype, t.kind, int(bad.sum()), where, a[tuple(where)].item(), b[tuple(where)].item())


# Running ---------------------------------------------------------------------------------------

# What the emulator says of an instruction it lacks or cannot read: its own gap, not hk refusing
# the program.
EMULATOR_GAPS = ("the emulator does not implement", "the emulator cannot read the operands")


@dataclasses.dataclass
class Outcome:
    program: object
    # "agree", "disagree", "refused" (an hk error on a valid program), "unsupported" (an
    # instruction the emulator lacks), "crash" (a non-hk exception)
    status: str
    detail: str = ""
    written: int = 0     # output elements the program changed (on the interpreter)


def _written(program, after):
    before = arguments(program)
    n = 0
    for spec, a, b in zip(program.tensors, before, after):
        if spec.role == "out":
            same = (_bits(a) == _bits(b)) if a.is_floating_point() else (a == b)
            n += int((~same).sum())
    return n


def interp_run(kernel, program):
    """The interpreter's run. Straight to hk.interp, past the launch's shape checks: an input
    smaller than an output is refused at a call, and the fuzzer wants such programs run."""
    args = arguments(program)
    grid = tuple(program.grid) + (1,) * (3 - len(program.grid))
    run_interp(kernel.trace("gfx1100"), grid, launch.scalar_values(kernel, args))
    return args


def run_interp(traced, grid, args):
    """Runs `traced` on the interpreter over `grid` (x, y, z); tensors in `args` change in place."""
    from hk import interp

    interp.run(traced, grid, args)


def compile_batch(traced_list, arch, toolchain):
    """One code object holding every kernel of `traced_list`; the path."""
    parts = [t.cpp for t in traced_list]
    source = parts[0] + "".join(p.replace('#include "hk/hk.cuh"', "") for p in parts[1:])
    path, _ = cache.code_object(source, arch, toolchain=toolchain)
    return path


def batch_metadata(path):
    """The metadata of each kernel in a batch's code object, by name."""
    return {m.name: m for m in metadata.read(path)}


def run_compiled(traced, path, metas, grid, args):
    """Runs `traced`, compiled into the batch at `path`, on the emulator over `grid`; tensors
    in `args` change in place."""
    meta = metas[traced.name]
    occ = gate.check(meta, traced.warps)
    built = build_lib.Build(traced.name, traced.arch, traced.warps, path, meta, occ, True, 0.0, traced)
    emu_launch.run(built, grid, args)


def emu_run(traced, path, metas, program):
    values = launch.scalar_values(program_kernel(traced), arguments(program))
    grid = tuple(program.grid) + (1,) * (3 - len(program.grid))
    run_compiled(traced, path, metas, grid, values)
    return values


def program_kernel(traced):
    """What launch.scalar_values needs of a kernel: its parameters."""
    return type("K", (), {"params": traced.params})()


def run_valid(programs, directory, archs, toolchain=None, on_outcome=None):
    """Runs valid programs on the interpreter and, per architecture in one compile, on the
    emulator; returns their Outcomes."""
    toolchain = toolchain or toolchain_lib.find()
    outcomes, ready = [], []
    for p in programs:
        try:
            module = load_module(write(directory, p), p.name)
            kernel = getattr(module, p.name)
            reference = interp_run(kernel, p)
            ready.append((p, kernel, reference))
        except HKError as e:
            outcomes.append(Outcome(p, "refused", str(e)))
        except Exception as e:  # noqa: BLE001 - a crash is a finding
            outcomes.append(Outcome(p, "crash", "%s: %s" % (type(e).__name__, e)))
    verdict = {p.name: Outcome(p, "agree", written=_written(p, ref)) for p, _, ref in ready}
    for arch in archs:
        traced = []
        for p, kernel, _ in ready:
            try:
                traced.append(kernel.trace(arch))
            except HKError as e:
                verdict[p.name] = Outcome(p, "refused", "%s: %s" % (arch, e))
        if not traced:
            continue
        try:
            path = compile_batch(traced, arch, toolchain)
        except HKError as e:
            for p, _, _ in ready:
                verdict[p.name] = Outcome(p, "refused", "%s: the batch does not compile: %s" % (arch, e))
            continue
        metas = batch_metadata(path)
        by_name = {t.name: t for t in traced}
        for p, kernel, reference in ready:
            t = by_name.get(p.name)
            if t is None or verdict[p.name].status != "agree":
                continue
            try:
                got = emu_run(t, path, metas, p)
            except HKError as e:
                lacks = any(gap in str(e) for gap in EMULATOR_GAPS)
                verdict[p.name] = Outcome(p, "unsupported" if lacks else "refused", "%s: %s" % (arch, e))
                continue
            for spec, a, b in zip(p.tensors, reference, got):
                if spec.role == "out":
                    why = disagreement(spec, a, b)
                    if why:
                        verdict[p.name] = Outcome(p, "disagree", "%s: %s" % (arch, why))
                        break
    outcomes += list(verdict.values())
    if on_outcome:
        for o in outcomes:
            on_outcome(o)
    return outcomes


# Invalid programs --------------------------------------------------------------------------------

def run_invalid(invalid, directory, index):
    """Runs one invalid program on the interpreter: an Outcome "located" (an hk error at the
    expected file and line), "misplaced" (elsewhere), "unlocated", "raw" (a non-hk exception)
    or "accepted" (no error at all)."""
    name = "%s_bad%d" % (invalid.program.name, index)
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write(invalid.source)
    os.environ["HK_DEVICE"] = "interp"
    try:
        module = load_module(path, name)
        module.run(arguments(invalid.program))
    except HKError as e:
        where = e.location
        if where is None:
            return Outcome(invalid, "unlocated", str(e))
        if (where.file, where.line) != (path, invalid.line):
            return Outcome(invalid, "misplaced", "expected line %d: %s" % (invalid.line, e))
        return Outcome(invalid, "located", str(e))
    except Exception as e:  # noqa: BLE001 - what the fuzzer is looking for
        return Outcome(invalid, "raw", "%s: %s" % (type(e).__name__, e))
    finally:
        sys.modules.pop(name, None)
    return Outcome(invalid, "accepted")
