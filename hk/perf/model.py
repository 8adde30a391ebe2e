"""A launch's predicted time, throughput, share of the peak and bound, from its code object.

The emulator runs a few of the launch's workgroups whole (the first, an interior one and the
last) at the launch's full size, and the beginning of each workgroup of the first round (those
the device runs at once); their global lines give the traffic past the L2 (hk.perf.traffic),
the whole workgroups' instruction streams drive one compute unit's simulation (hk.perf.simulate)
through its share of the grid, taking turns, as many at once as the code object's registers and
LDS allow. The profiled workgroups stand for all of them: a prediction says which. Every figure
is a prediction, with the model's stated error (hk/target/perf.json).
"""

import dataclasses
import math
import re

import numpy as np

from hk.errors import HKError
from hk.perf import device as devices
from hk.perf import instructions as I
from hk.perf import simulate, traffic

_DTYPE = re.compile(r"_(bf16|f16|fp16|i8|iu8|fp8|bf8|fp8_fp8|f32)(?:_|$)")
_SIMULATED_INSTRUCTIONS = 2_000_000   # simulated per unit; beyond, the steady state is extrapolated


class PerfError(HKError):
    """A launch the model cannot predict (bad arguments, a code object of another target)."""


@dataclasses.dataclass(frozen=True)
class Prediction:
    """A predicted launch. `error` is the model's stated relative error (a fraction)."""

    kernel: str
    device: str
    arch: str
    seconds: float
    flops: float
    dram_bytes: float
    peak: str                 # what percent_of_peak compares with
    percent_of_peak: float
    bound: str
    error: float
    waves_per_simd: int
    workgroups: int
    profiled: tuple
    busy: dict                # resource -> fraction of the unit's cycles

    @property
    def tflops(self):
        return self.flops / self.seconds / 1e12 if self.seconds else 0.0

    @property
    def gbps(self):
        return self.dram_bytes / self.seconds / 1e9 if self.seconds else 0.0

    def __str__(self):
        rate = ("%.1f TFLOP/s" % self.tflops) if self.flops else ("%.1f GB/s" % self.gbps)
        return ("%s on %s: predicted %s (model error +-%.0f%%), %s, %.0f%% of %s; bound: %s"
                % (self.kernel, self.device, _duration(self.seconds), 100 * self.error, rate,
                   self.percent_of_peak, self.peak, self.bound))


def _duration(s):
    return "%.3f ms" % (s * 1e3) if s >= 1e-3 else "%.1f us" % (s * 1e6)


def _matrix_cycles(dev):
    """opcode -> cycles: the facts' table, else the device's dense peak for the operand type."""
    per_simd_clock = {k: v / (dev.units * dev.target.simds_per_cu * dev.clock_hz) for k, v in dev.peak_flops.items()}

    def cycles(op):
        if op in dev.matrix_cycles:
            return dev.matrix_cycles[op]
        m = re.search(r"(\d+)x(\d+)x(\d+)", op)
        t = _DTYPE.search(op[op.index(m.group(0)):] if m else op)
        kind = {"bf16": "bf16", "f16": "fp16", "fp16": "fp16", "i8": "int8", "iu8": "int8", "fp8": "fp8",
                "bf8": "fp8", "fp8_fp8": "fp8", "f32": "fp32"}.get(t.group(1) if t else "", None)
        if not m or kind not in per_simd_clock:
            return None
        a, b, c = (int(x) for x in m.groups())
        return 2.0 * a * b * c / per_simd_clock[kind]
    return cycles


def _matrix_kind(listing):
    for _, text, _ in listing:
        op = I.mnemonic(text)
        if op.startswith(("v_wmma_", "v_mfma_", "v_smfmac_")):
            t = _DTYPE.search(op[op.index("x"):] if "x" in op else op)
            return {"bf16": "bf16", "f16": "fp16", "fp16": "fp16", "i8": "int8", "iu8": "int8"}.get(
                t.group(1) if t else "", "fp8" if "fp8" in op or "bf8" in op else "bf16")
    return None


def profiled_workgroups(grid):
    """The workgroups run whole: the first, an interior one and the last (a causal mask's least,
    middling and most work)."""
    gx, gy, gz = grid
    out = []
    for p in [(0, 0, 0), (gx // 2, gy // 2, gz // 2), (gx - 1, gy - 1, gz - 1)]:
        if p not in out:
            out.append(p)
    return out


# The first round's workgroups run a prefix of about this many wave-instructions in all (each
# at least _PREFIX_MIN, at most its whole run).
_SAMPLE_INSTRUCTIONS = 4_000_000
_PREFIX_MIN = 2_000


def predict_code_object(code_object, kernel_name, grid, block, args, *, device=None, arch=None, flops=None,
                        shared_mem=0, hazards=True):
    """Predicts one launch of a kernel of any code object (hk's, Triton's, HipKittens'...): the
    emulator runs a few of its workgroups with `args` (hk.emu.launch's; hk.emu.Zeros for buffers
    whose contents do not matter), and the model times the whole grid on `device` (default: the
    code object's architecture's). `flops` overrides the FLOPs counted from matrix instructions;
    `hazards=False` runs code that the emulator's hazard check refuses (foreign code that relies
    on the hardware's own interlocks)."""
    from hk import emu
    from hk.emu import runner
    from hk.runtime import gate, metadata

    co = runner.load(code_object)[0]
    if arch is not None and arch != co.arch:
        raise PerfError("the code object is for %s, not %s" % (co.arch, arch),
                        hint="predict it for %s, or build it for %s" % (co.arch, arch))
    dev = devices.get(device, arch=co.arch)
    grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,))) + (1,) * 3
    grid = grid[:3]
    block = tuple(int(b) for b in (block if isinstance(block, (tuple, list)) else (block,)))
    threads = int(np.prod(block))
    if min(grid) < 1 or threads < 1:
        raise PerfError("a launch has at least one workgroup of at least one work-item, not grid %s block %s"
                        % (grid, block))
    if isinstance(code_object, (bytes, bytearray)):
        data = bytes(code_object)
    else:
        with open(code_object, "rb") as f:
            data = f.read()
    metas = [m for m in metadata.read(data) if m.name == kernel_name]
    if not metas:
        raise PerfError("the code object has no kernel %r" % (kernel_name,),
                        hint="its kernels: " + ", ".join(sorted(co.kernels)))
    meta = dataclasses.replace(metas[0], lds_bytes=metas[0].lds_bytes + int(shared_mem))   # dynamic LDS too
    waves_per_group = -(-threads // meta.wave_size)
    occupancy = gate.occupancy(meta, waves_per_group)
    simds = dev.target.simds_per_cu
    resident = max(1, min(occupancy.waves_per_simd * simds // waves_per_group,
                          dev.target.max_waves_per_simd * simds // waves_per_group))
    total = grid[0] * grid[1] * grid[2]
    busy_units = min(dev.units, total)
    concurrent = min(total, dev.units * resident)
    workgroups = profiled_workgroups(grid)
    options = dict(arch=co.arch, shared_mem=shared_mem, line_bytes=dev.line_bytes, hazards=hazards)
    profile = emu.profile(code_object, kernel_name, grid, block, args, workgroups=workgroups, **options)
    table = I.Table(profile.listing, _matrix_cycles(dev))
    if table.unknown_matrix:
        raise PerfError("the model has no timing for %s on %s" % (", ".join(sorted(table.unknown_matrix)), dev.name),
                        hint="add its cycles to the device facts (hk/target/perf.json)")
    # The first round's prefixes, for what its workgroups share in the L2.
    first = traffic.first_round(grid, concurrent)
    if set(first) <= set(workgroups):
        sample = _subset(profile, first)
    else:
        whole = profile.executed / len(workgroups)
        prefix = int(min(whole, max(_PREFIX_MIN, _SAMPLE_INSTRUCTIONS / len(first))))
        sample = emu.profile(code_object, kernel_name, grid, block, args, workgroups=first, prefix=prefix,
                             **options)
    efficiency = float(dev.model.get("dram_efficiency", 0.85))
    memory = traffic.estimate(profile, sample, grid, dev, efficiency)
    per_unit = -(-total // dev.units)
    # Enough workgroups for the unit's steady state (all its slots busy), within an event budget;
    # the profiled ones take turns (a causal launch's differ).
    length = max(sum(len(w) for w in p) for p in profile.streams)
    simulated = min(per_unit, max(resident, len(profile.streams), _SIMULATED_INSTRUCTIONS // max(1, length)))
    clock = dev.clock_hz * _sustained(dev)
    unit = _unit(dev, meta.wave_size, busy_units, memory.miss_cycles(dev, busy_units) * _sustained(dev))
    result = simulate.run(unit, table, profile.streams, simulated, resident, memory.hit, _distinct(profile, table))
    cycles = result.cycles * per_unit / simulated
    seconds = max(cycles / clock, memory.seconds) + dev.launch_s
    counted = float(np.mean([sum(float(np.sum(table.flops[s[:, 0]])) for s in waves)
                             for waves in profile.streams])) * total
    flops = counted if flops is None else float(flops)
    dram = memory.dram_bytes
    busy = {k: min(1.0, v / result.cycles) if result.cycles else 0.0 for k, v in result.busy.items()}
    # The share of the peak the kernel comes closest to: the matrix peak or the memory bandwidth.
    kind = _matrix_kind(profile.listing)
    peak, percent = "the memory bandwidth", 100 * dram / seconds / dev.dram_bytes_per_s
    if flops and kind in dev.peak_flops and flops / seconds / dev.peak_flops[kind] * 100 > percent:
        peak, percent = "the %s matrix peak" % kind, 100 * flops / seconds / dev.peak_flops[kind]
    bound = _bound(busy, occupancy.waves_per_simd)
    return Prediction(kernel=kernel_name, device=dev.name, arch=co.arch, seconds=seconds, flops=flops,
                      dram_bytes=dram, peak=peak, percent_of_peak=percent, bound=bound,
                      error=stated_error(dev), waves_per_simd=occupancy.waves_per_simd,
                      workgroups=total, profiled=tuple(workgroups), busy=busy)


def stated_error(dev):
    """The model's stated relative error on `dev`'s architecture (hk/target/perf.json)."""
    error = dev.model.get("error", 0.5)
    return float(error.get(dev.arch, max(error.values())) if isinstance(error, dict) else error)


def _sustained(dev):
    """The share of its peak clock `dev` sustains under load (calibrated, per architecture)."""
    return float((dev.model.get("sustained_clock") or {}).get(dev.arch, 1.0))


def _subset(profile, workgroups):
    """A Profile of some of `profile`'s workgroups, in the order given."""
    from hk.emu.profiling import Profile
    at = [profile.workgroups.index(g) for g in workgroups]
    return Profile(profile.arch, profile.kernel, workgroups, profile.listing, [profile.streams[i] for i in at],
                   [profile.lines[i] for i in at], profile.lds_banks, profile.lds_bank_bytes, profile.line_bytes,
                   profile.executed, profile.buffers)


def _distinct(profile, table):
    """(reads, writes): the share of the lines a workgroup's instructions request that are not
    lines it requested before."""
    requested, touched = [0.0, 0.0], [0.0, 0.0]
    for waves, (read, written) in zip(profile.streams, profile.lines):
        for s in waves:
            cls = table.cls[s[:, 0]]
            requested[0] += float(np.sum(s[(cls == I.LOAD) | (cls == I.COPY), 2]))
            requested[1] += float(np.sum(s[cls == I.STORE, 2]))
        touched[0] += len(read)
        touched[1] += len(written)
    return tuple(min(1.0, t / r) if r else 1.0 for t, r in zip(touched, requested))


_BOUNDS = {"matrix": "matrix unit", "valu": "vector ALU issue", "lds": "LDS bandwidth and bank conflicts",
           "memory pipe": "vector memory pipe", "memory beyond the L2": "DRAM / Infinity Cache bandwidth"}


def _bound(busy, waves):
    name, frac = max(busy.items(), key=lambda kv: kv[1])
    if frac >= 0.6:
        return _BOUNDS[name]
    return "latency at %d wave(s) per SIMD" % waves


def _unit(dev, wave_size, units, miss_cycles):
    """The simulator's unit for `dev`, running kernels of `wave_size` with `units` units busy;
    a line past the L2 costs its share `miss_cycles`."""
    p = dev.model
    valu = dev.valu_cycles.get(wave_size)
    if valu is None:
        raise PerfError("%s has no timing for waves of %d lanes" % (dev.name, wave_size))
    lds_group = dev.target.lds_banks * dev.target.lds_bank_bytes
    return simulate.Unit(
        simds=dev.target.simds_per_cu, wave_size=wave_size, issue_interval=int(dev.issue_interval),
        valu_cycles=valu, trans_cycles=dev.trans_cycles, matrix_on_valu=dev.matrix_on_valu,
        lds_scale=lds_group / dev.lds_bytes_per_clock, lds_latency=dev.lds_latency,
        lds_write_bytes=float(p.get("lds_write_bytes_per_clock", 128.0)),
        lines_per_cycle=dev.l1_bytes_per_clock / dev.line_bytes, line_bytes=dev.line_bytes,
        l2_latency=dev.l2_latency, dram_latency=dev.dram_latency,
        miss_cycles=miss_cycles, l2_bytes_per_cycle=dev.l2_bytes_per_clock / units, smem_latency=p.get("smem_latency", 200.0),
        barrier_cycles=p.get("barrier_cycles", 16.0), workgroup_cycles=p.get("workgroup_cycles", 300.0),
        stores_on_vm=dev.arch.startswith("gfx9"))
