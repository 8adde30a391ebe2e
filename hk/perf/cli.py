"""Predicts a launch of any AMDGPU code object's kernel: time, throughput, share of the peak, bound.

    hk-perf --kernel=NAME --grid=X[,Y[,Z]] --block=N --arg=bf16[8192,8192] --arg=i32=8192 ... FILE.co
    hk-perf --devices

Each --arg is one of the kernel's explicit arguments, in order: DTYPE[d0,d1,...] a buffer of that
shape, zero-filled (its contents are not read back, and cost memory only where the kernel
writes); DTYPE=VALUE a scalar (i8/i16/i32/i64/u32/u64, f16/f32/f64); null a null pointer;
bytes=N a by-value argument of N zero bytes. The code object may be hk's, Triton's compiled
ahead of time, HipKittens'... (an offload bundle's AMDGPU object included). The prediction is
printed with the model's stated error; it is not a measured time.

Exit codes: 0 predicted, 2 a wrong command (a missing or unreadable file, a kernel the code
object lacks, arguments its metadata refuses, an unknown device, facts the model lacks).
"""

import os
import re

import numpy as np
from absl import flags

FLAGS = flags.FLAGS

_BUFFER = re.compile(r"^(\w+)\[([\d,\s]+)\]$")
_SCALAR = re.compile(r"^(\w+)=(.+)$")
_DTYPES = {"bf16": np.uint16, "f16": np.float16, "fp16": np.float16, "f32": np.float32, "fp32": np.float32,
           "f64": np.float64, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
           "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "fp8": np.uint8}


def define_flags():
    flags.DEFINE_string("kernel", None, "the kernel's name in the code object")
    flags.DEFINE_list("grid", ["1"], "workgroups per dimension: X[,Y[,Z]]")
    flags.DEFINE_list("block", None, "work-items per workgroup: X[,Y[,Z]]")
    flags.DEFINE_multi_string("arg", [], "one explicit argument, in order (see the description)")
    flags.DEFINE_string("device", None, "the device (default: the code object's architecture's; see --devices)")
    flags.DEFINE_float("flops", None, "the launch's FLOPs (default: those of its matrix instructions)")
    flags.DEFINE_integer("shared_mem", 0, "dynamic LDS bytes")
    flags.DEFINE_bool("devices", False, "list the devices the model knows and exit")
    flags.DEFINE_bool("hazards", True, "run the emulator's hazard check (off: code that relies on the "
                      "hardware's interlocks, which the check refuses)")


def parse_arg(text):
    """An --arg as hk.emu.launch takes it."""
    from hk.compiler.cli import UsageError
    from hk.emu import Zeros

    text = text.strip()
    if text == "null":
        return None
    m = _BUFFER.match(text)
    if m:
        dtype = _DTYPES.get(m.group(1))
        dims = [int(d) for d in m.group(2).split(",") if d.strip()]
        if dtype is None or not dims:
            raise UsageError("--arg=%s: a buffer is DTYPE[d0,d1,...] with DTYPE one of %s" % (text, ", ".join(_DTYPES)))
        return Zeros(int(np.prod(dims)) * np.dtype(dtype).itemsize)
    m = _SCALAR.match(text)
    if m and m.group(1) == "bytes":
        return bytes(int(m.group(2)))
    if m and m.group(1) in _DTYPES:
        dtype = np.dtype(_DTYPES[m.group(1)])
        try:
            value = float(m.group(2)) if dtype.kind == "f" else int(m.group(2), 0)
            return dtype.type(value)
        except (ValueError, OverflowError):
            raise UsageError("--arg=%s: %r is not a %s" % (text, m.group(2), m.group(1))) from None
    raise UsageError("--arg=%s: give DTYPE[d0,d1,...], DTYPE=VALUE, bytes=N or null" % text)


def _dims(values, what):
    from hk.compiler.cli import UsageError

    try:
        dims = [int(v) for v in values]
    except (TypeError, ValueError):
        raise UsageError("--%s takes 1 to 3 integers, not %s" % (what, ",".join(values or []))) from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise UsageError("--%s takes 1 to 3 positive integers, not %s" % (what, ",".join(values)))
    return tuple(dims)


def report(p):
    """The lines hk-perf prints for a Prediction."""
    lines = [str(p)]
    lines.append("  %d workgroups, %d wave(s) per SIMD; profiled whole: %s (they stand for every workgroup)"
                 % (p.workgroups, p.waves_per_simd, ", ".join("(%d,%d,%d)" % g for g in p.profiled)))
    lines.append("  busy: " + ", ".join("%s %.0f%%" % (k, 100 * v) for k, v in sorted(p.busy.items(), key=lambda kv: -kv[1])))
    if p.flops:
        lines.append("  %.3g FLOP, %.3g bytes from DRAM" % (p.flops, p.dram_bytes))
    else:
        lines.append("  %.3g bytes from DRAM" % p.dram_bytes)
    return lines


def main(argv):
    from hk.compiler.cli import UsageError
    from hk.perf import device, model

    if FLAGS.devices:
        for name in device.names():
            d = device.get(name)
            print("%-20s %s  %d units at %.0f MHz, %.0f GB/s" % (name, d.arch, d.units, d.clock_hz / 1e6,
                                                                 d.dram_bytes_per_s / 1e9))
        return 0
    paths = argv[1:]
    if len(paths) != 1:
        raise UsageError("name one code object (see --help)")
    if not os.path.isfile(paths[0]):
        raise UsageError("no such file: %s" % paths[0])
    if not FLAGS.kernel:
        raise UsageError("name the kernel with --kernel")
    if not FLAGS.block:
        raise UsageError("give the workgroup's size with --block")
    args = [parse_arg(a) for a in FLAGS.arg]
    p = model.predict_code_object(paths[0], FLAGS.kernel, _dims(FLAGS.grid, "grid"), _dims(FLAGS.block, "block"),
                                  args, device=FLAGS.device, flops=FLAGS.flops, shared_mem=FLAGS.shared_mem,
                                  hazards=FLAGS.hazards)
    for line in report(p):
        print(line)
    return 0


def entry():
    from hk.compiler import cli

    cli.run_tool("hk-perf", __doc__, define_flags, main)


if __name__ == "__main__":
    entry()
