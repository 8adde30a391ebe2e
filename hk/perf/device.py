"""The devices the model knows: each GPU's facts (hk/target/perf.json, every number with its
source) joined with its architecture's timing facts and hk/target/targets.json.

A user adds a device with a facts file of the same shape (one or more entries under "devices",
and optionally "archs"): HK_PERF_DEVICES names such files (separated by the path separator), or
hk.perf.device.load(path). A file with a missing or impossible value is refused, naming it.
"""

import dataclasses
import functools
import json
import os

from hk.errors import TargetError
from hk.target import facts as target_facts

_PATH = os.path.join(os.path.dirname(target_facts.__file__), "perf.json")

# Each architecture's default device: the GPU the project measures on or aims at.
DEFAULTS = {"gfx1100": "Radeon PRO W7900", "gfx1201": "Radeon RX 9070 XT", "gfx942": "Instinct MI300X",
            "gfx950": "Instinct MI355X"}


class FactsError(TargetError):
    """A device facts file with a missing or impossible value."""


def _value(entry, what, positive=True, optional=False):
    """The number of a {"value": x, "source": s} fact; FactsError naming `what` otherwise."""
    if entry is None or (isinstance(entry, dict) and entry.get("value") is None):
        if optional:
            return None
        raise FactsError("the device facts lack %s" % what, hint="give it as {\"value\": number, \"source\": text}")
    if not isinstance(entry, dict) or "value" not in entry or not str(entry.get("source", "")).strip():
        raise FactsError("%s must be {\"value\": number, \"source\": text}, not %r" % (what, entry),
                         hint="every fact names where it comes from")
    v = entry["value"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        raise FactsError("%s is %r, not a number" % (what, v))
    if positive and v <= 0:
        raise FactsError("%s is %r; it must be positive" % (what, v))
    return float(v)


@dataclasses.dataclass(frozen=True)
class Device:
    """A GPU: its architecture's facts and its own (clock, units, peaks, memory system)."""

    name: str
    arch: str
    units: int                    # what a workgroup runs on and shares LDS in: CUs (CDNA), WGPs (RDNA)
    clock_hz: float
    peak_flops: dict              # "bf16", "fp16", "int8", "fp8", "fp32" -> FLOP/s (dense)
    dram_bytes_per_s: float
    l2_bytes: float
    l2_bytes_per_clock: float
    infinity_cache_bytes: float
    infinity_cache_bytes_per_s: float
    xcds: int                     # dies, each with its own L2, that the dispatcher deals workgroups to in turn
    issue_interval: float
    valu_cycles: dict             # wave size -> cycles
    trans_cycles: float
    matrix_cycles: dict           # opcode -> cycles of the matrix unit
    matrix_on_valu: bool
    lds_bytes_per_clock: float
    lds_latency: float
    l1_bytes_per_clock: float
    line_bytes: int
    l2_latency: float
    dram_latency: float
    launch_s: float
    model: dict                   # the calibrated parameters and "error" (hk/target/perf.json "model")

    @property
    def target(self):
        return target_facts.target(self.arch)


def _arch(name, raw):
    if not isinstance(raw, dict):
        raise FactsError("the timing facts of %s are not an object" % name)
    issue, lds, mem = raw.get("issue") or {}, raw.get("lds") or {}, raw.get("global") or {}
    matrix = {}
    for m in raw.get("matrix") or []:
        if not isinstance(m, dict) or "opcode" not in m:
            raise FactsError("a matrix instruction of %s lacks its opcode: %r" % (name, m))
        matrix[m["opcode"]] = _value(m.get("cycles"), "the cycles of %s on %s" % (m["opcode"], name))
    where = "%s's %%s" % name
    return {
        "issue_interval": _value(issue.get("issue_interval"), where % "issue interval"),
        "valu_cycles": {w: _value(issue.get("valu_cycles_wave%d" % w), where % ("wave%d VALU cycles" % w),
                                  optional=True) for w in (32, 64)},
        "trans_cycles": _value(issue.get("trans_cycles"), where % "transcendental cycles"),
        "matrix_cycles": matrix,
        "lds_bytes_per_clock": _value(lds.get("bytes_per_clock"), where % "LDS bytes per clock"),
        "lds_latency": _value(lds.get("latency_cycles"), where % "LDS latency"),
        "l1_bytes_per_clock": _value(mem.get("l1_bytes_per_clock"), where % "vector memory bytes per clock"),
        "line_bytes": int(_value(mem.get("cache_line_bytes"), where % "cache line")),
        "l2_latency": _value(mem.get("l2_hit_latency_cycles"), where % "L2 hit latency"),
        "dram_latency": _value(mem.get("dram_latency_cycles"), where % "DRAM latency"),
    }


def _device(name, raw, archs, model):
    if not isinstance(raw, dict) or raw.get("arch") not in archs:
        raise FactsError("device %r names no architecture the facts know (%s)"
                         % (name, raw.get("arch") if isinstance(raw, dict) else raw),
                         hint="give \"arch\" as one of " + ", ".join(sorted(archs)))
    arch = raw["arch"]
    a = archs[arch]
    target = target_facts.target(arch)
    what = "%s's %%s" % name
    units = _value(raw.get("workgroup_processors"), what % "workgroup processors", optional=True) \
        if target.family.startswith("rdna") else None
    units = units or _value(raw.get("compute_units"), what % "compute units")
    clock = _value(raw.get("clock_mhz"), what % "clock") * 1e6
    peaks = {}
    for key, dtype, scale in (("peak_bf16_dense_tflops", "bf16", 1e12), ("peak_fp16_dense_tflops", "fp16", 1e12),
                              ("peak_int8_dense_tops", "int8", 1e12), ("peak_fp8_dense_tflops", "fp8", 1e12),
                              ("peak_fp32_vector_tflops", "fp32", 1e12)):
        v = _value(raw.get(key), what % key, optional=dtype in ("fp8", "int8"))
        if v is not None:
            peaks[dtype] = v * scale
    wave = target.wave_size
    valu = a["valu_cycles"].get(wave)
    if valu is None:
        raise FactsError("%s lacks the VALU cycles of a wave%d" % (arch, wave))
    cache = _value(raw.get("infinity_cache_bytes"), what % "Infinity Cache", optional=True) or 0.0
    cache_bw = _value(raw.get("infinity_cache_gbps"), what % "Infinity Cache bandwidth", optional=True) or 0.0
    launch = _value(raw.get("launch_overhead_us"), what % "launch overhead", optional=True)
    xcds = _value(raw.get("xcds"), what % "XCDs", optional=True) or 1
    return Device(
        name=name, arch=arch, units=int(units), clock_hz=clock, peak_flops=peaks,
        dram_bytes_per_s=_value(raw.get("memory_bandwidth_gbps"), what % "memory bandwidth") * 1e9,
        l2_bytes=_value(raw.get("l2_bytes"), what % "L2 size"),
        l2_bytes_per_clock=_value(raw.get("l2_bytes_per_clock"), what % "L2 bytes per clock"),
        infinity_cache_bytes=cache, infinity_cache_bytes_per_s=cache_bw * 1e9, xcds=int(xcds),
        issue_interval=a["issue_interval"], valu_cycles={wave: valu},
        trans_cycles=a["trans_cycles"], matrix_cycles=a["matrix_cycles"],
        matrix_on_valu=target.family.startswith("rdna"), lds_bytes_per_clock=a["lds_bytes_per_clock"],
        lds_latency=a["lds_latency"], l1_bytes_per_clock=a["l1_bytes_per_clock"], line_bytes=a["line_bytes"],
        l2_latency=a["l2_latency"], dram_latency=a["dram_latency"],
        launch_s=(launch if launch is not None else model.get("launch_us", 5.0)) * 1e-6, model=dict(model))


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise FactsError("cannot read the device facts %s: %s" % (path, e.strerror)) from None
    except ValueError as e:
        raise FactsError("the device facts %s are not JSON: %s" % (path, e)) from None


def _parse(raw, base_archs=None, where="hk/target/perf.json", base_model=None):
    """(archs, devices, raw) of a facts file; a user's file takes the project's model (its
    calibrated parameters and stated error) unless it gives its own."""
    if not isinstance(raw, dict):
        raise FactsError("%s holds no object of device facts" % where)
    archs = dict(base_archs or {})
    for arch, a in (raw.get("archs") or {}).items():
        if arch not in target_facts.archs():
            raise FactsError("%s gives timing facts of %r, which is not an hk target" % (where, arch),
                             hint="use one of " + ", ".join(target_facts.archs()))
        archs[arch] = _arch(arch, a)
    model = raw.get("model") or base_model or {}
    parameters = dict(model.get("parameters") or {}, error=model.get("error", 0.5))
    devices = {name: _device(name, d, archs, parameters) for name, d in (raw.get("devices") or {}).items()}
    return archs, devices, raw


@functools.lru_cache(maxsize=None)
def _known():
    archs, devices, raw = _parse(_read(_PATH))
    for path in filter(None, os.environ.get("HK_PERF_DEVICES", "").split(os.pathsep)):
        _, more, _ = _parse(_read(path), archs, path, raw.get("model"))
        devices.update(more)
    return archs, devices, raw


def load(path):
    """The devices of a facts file of hk/target/perf.json's shape, by name (they join the known ones)."""
    archs, devices, raw = _known()
    _, more, _ = _parse(_read(path), archs, path, raw.get("model"))
    devices.update(more)
    return more


def get(name=None, arch=None):
    """The Device called `name`, else `arch`'s default device; FactsError naming the known ones."""
    _, devices, _ = _known()
    if name is None:
        if arch not in DEFAULTS:
            raise FactsError("no device is known for %r" % (arch,), hint="use one of " + ", ".join(sorted(DEFAULTS)))
        name = DEFAULTS[arch]
    if name not in devices:
        raise FactsError("unknown device %r" % (name,), hint="use one of: " + "; ".join(sorted(devices)))
    d = devices[name]
    if arch is not None and d.arch != arch:
        raise FactsError("%s is a %s, not a %s" % (name, d.arch, arch),
                         hint="pick a device of the code object's architecture")
    return d


def names():
    return sorted(_known()[1])


def published():
    """The published measurements the model is calibrated against (hk/target/perf.json)."""
    return list(_known()[2].get("published") or [])
