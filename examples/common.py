"""What every example shares: its command line, and checking against torch.

    python examples/02_rmsnorm.py                 # run (GPU, else HK_DEVICE=interp), check, time
    python examples/02_rmsnorm.py --dump ir       # the hk module after the passes
    python examples/02_rmsnorm.py --dump cpp      # the C++ it translates to
    python examples/02_rmsnorm.py --build         # compile and gate for --arch (no GPU needed)
"""

import os
import sys
import time

from absl import app, flags

import hk
from hk.runtime import device

FLAGS = flags.FLAGS


def _define_flags():
    # Defined when an example runs as a program, not when a tool imports it for its kernel.
    flags.DEFINE_enum("dump", None, ["ir", "cpp"], "print the kernel's IR or C++ and exit")
    flags.DEFINE_bool("build", False, "compile the kernel, run the gates, print the report and exit")
    flags.DEFINE_string("arch", None, "target architecture (default: HK_ARCH, the GPU's, else gfx1100)")
    flags.DEFINE_integer("repeat", 20, "timed repetitions on a GPU")

# Tolerances per output dtype: (rtol, atol). bf16 keeps 8 bits of mantissa, fp16 11.
TOLERANCES = {"bfloat16": (1.6e-2, 1e-2), "float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5)}


def tolerance(dtype):
    return TOLERANCES[str(dtype).replace("torch.", "")]


def check(name, got, expected, rtol=None, atol=None):
    """Raises AssertionError unless `got` matches `expected` within the dtype's tolerance."""
    import torch

    default = tolerance(got.dtype)
    torch.testing.assert_close(got.float(), expected.float(), rtol=rtol or default[0],
                               atol=atol or default[1], msg=lambda m: "%s: %s" % (name, m))
    print("%-40s ok (max abs err %.3g)" % (name, (got.float() - expected.float()).abs().max().item()))


def ensure_runner():
    """A GPU if there is one, else the interpreter (these examples run on CPU tensors then)."""
    if not os.environ.get("HK_DEVICE") and not device.detected_arch():
        os.environ["HK_DEVICE"] = "interp"
    return os.environ.get("HK_DEVICE") or "gpu"


def timed(fn, repeat):
    """Mean seconds per call of fn() on a GPU (synchronising around the loop)."""
    import torch

    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeat


def run(kernels, checks):
    """The example's main: `kernels` is [(kernel, constants)], `checks` runs the checks."""

    def main(argv):
        del argv
        try:
            return _main()
        except hk.errors.HKError as e:
            print("error: %s" % e, file=sys.stderr)
            return 1

    def _main():
        arch = FLAGS.arch
        if FLAGS.dump:
            for kernel, constants in kernels:
                traced = kernel.trace(arch, **constants)
                print(traced.dump() if FLAGS.dump == "ir" else traced.cpp)
            return 0
        if FLAGS.build:
            for kernel, constants in kernels:
                print(kernel.build(arch, **constants).report())
            return 0
        runner = ensure_runner()
        device_name = "cuda" if runner == "gpu" else "cpu"
        checks(device_name, FLAGS.repeat if runner == "gpu" else 0)
        return 0

    _define_flags()
    app.run(main)
