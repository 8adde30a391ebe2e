"""Kernel.build(): the C++ compiled into a code object (cached) and passed through the gate.

    b = kernel.build()
    print(b.report())     # VGPRs, AGPRs, SGPRs, LDS, scratch, spills, occupancy
    print(b.report(a, b, c))   # and hk.perf's prediction of the launch kernel(a, b, c)
    b.code_object         # the ELF bytes
"""

import dataclasses
import time

from hk.errors import CompileError, LaunchError
from hk.runtime import cache, gate, metadata, toolchain as toolchain_lib


@dataclasses.dataclass
class Build:
    """A compiled, gate-clean kernel."""

    name: str
    arch: str
    warps: int
    path: str
    meta: metadata.KernelMetadata
    occupancy: gate.Occupancy
    cached: bool
    compile_seconds: float
    traced: object = None
    kernel: object = None     # the Kernel that built it (its grid), when a Kernel did

    @property
    def code_object(self):
        with open(self.path, "rb") as f:
            return f.read()

    def report(self, *args, device=None):
        """The build's figures; given a launch's arguments (tensors may be meta tensors), also
        hk.perf's prediction of that launch on `device` (default: the architecture's)."""
        m, o = self.meta, self.occupancy
        rows = [
            ("kernel", "%s (%s, %d warp%s of %d lanes)" % (m.name, self.arch, self.warps,
                                                          "s" if self.warps != 1 else "", m.wave_size)),
            ("VGPRs", m.vgprs),
            ("AGPRs", m.agprs),
            ("SGPRs", m.sgprs),
            ("LDS bytes", m.lds_bytes),
            ("scratch bytes", m.scratch_bytes),
            ("spills", "%d VGPR, %d SGPR" % (m.vgpr_spills, m.sgpr_spills)),
            ("occupancy", "%d wave(s) per SIMD (limited by %s)" % (o.waves_per_simd, o.limited_by)),
            ("code object", "%s (%s)" % (self.path, "cached" if self.cached else
                                         "compiled in %.2f s" % self.compile_seconds)),
        ]
        if args:
            rows.append(("predicted", str(self.predict(*args, device=device))))
        width = max(len(k) for k, _ in rows)
        return "\n".join("%-*s  %s" % (width, k, v) for k, v in rows)

    def predict(self, *args, device=None):
        """hk.perf's Prediction of launching this build with `args` (as a call passes them)."""
        from hk.perf import launch as perf_launch
        from hk.runtime import launch

        if self.kernel is None:
            raise LaunchError("this build knows no kernel to compute a launch's grid from",
                              hint="use kernel.build(...), or hk.perf.predict_code_object")
        launch._check_args(self.kernel, args)
        args = launch.scalar_values(self.kernel, args)
        grid = self.kernel.launch_grid(args, self.traced.constants)
        return perf_launch.predict_build(self, grid, args, device=device)

    def __str__(self):
        return self.report()


def build(traced, *, max_vgprs=None, min_occupancy=None, toolchain=None):
    """Compiles a TracedKernel for its architecture and gates it; a Build."""
    toolchain = toolchain or toolchain_lib.find()
    start = time.perf_counter()
    path, cached = cache.code_object(traced.cpp, traced.arch, toolchain=toolchain)
    seconds = time.perf_counter() - start
    kernels = {k.name: k for k in metadata.read(path)}
    meta = kernels.get(traced.name)
    if meta is None:
        raise CompileError("the code object for %s holds kernels %s but not %s"
                           % (traced.name, sorted(kernels), traced.name))
    occ = gate.check(meta, traced.warps, max_vgprs=max_vgprs, min_occupancy=min_occupancy)
    return Build(traced.name, traced.arch, traced.warps, path, meta, occ, cached, seconds, traced)
