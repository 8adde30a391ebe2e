"""hk.interp: the reference interpreter of traced kernels, on CPU torch tensors.

It runs the IR after the passes, whole tiles at a time, in the declared dtypes with fp32 MMA
accumulation, workgroup after workgroup; the waves of a workgroup run in turn and meet at
every barrier, and their LDS accesses between two barriers must not race (hk.interp.lds). It is
the semantic oracle of the kernel tests (HK_DEVICE=interp).
"""

import itertools

from hk import types
from hk.errors import LaunchError
from hk.interp import lds as _lds
from hk.interp import program as _program
from hk.interp.semantics import GlobalView


def _program_of(traced):
    prog = getattr(traced, "_interp_program", None)
    if prog is None:
        func = next(op for op in traced.module.body.operations if op.operation.name == "func.func")
        try:
            prog = _program.Program(func, traced.warps)
        except _program.Unsupported as e:
            raise LaunchError("kernel %s cannot run on the interpreter: %s" % (traced.name, e)) from None
        traced._interp_program = prog
    return prog


def run(traced, grid, args):
    """Runs `traced` over `grid` (x, y, z workgroups) on CPU torch tensors and scalars."""
    prog = _program_of(traced)
    values = []
    for p, a in zip(traced.params, args):
        if isinstance(p.kind, types.TensorType):
            if a.device.type != "cpu":
                raise LaunchError("HK_DEVICE=interp runs on CPU tensors; %r is on %s" % (p.name, a.device))
            values.append(GlobalView(a))
        else:
            values.append(a)
    gx, gy, gz = grid
    for z, y, x in itertools.product(range(gz), range(gy), range(gx)):
        lds = _lds.Lds(traced.warps)
        waves = []
        for w in range(traced.warps):
            env = [None] * len(prog.slots)
            for s, v in zip(prog.args, values):
                env[s] = v
            wave = _program.Wave((x, y, z), (gx, gy, gz), w, traced.warps, lds)
            waves.append(prog.run_steps(prog.steps, env, wave))
        # Round-robin between barriers: every wave runs to its next barrier (or its end); LDS
        # accesses of different waves in one round race unless they touch different elements.
        while waves:
            waves = [g for g in waves if next(g, StopIteration) is not StopIteration]
            lds.barrier()
    return None
