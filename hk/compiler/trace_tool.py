"""Traces one DSL kernel to its hk MLIR (after the passes) and its C++, for the Bazel rules.

    python -m hk.compiler.trace_tool --src=kernels/add.py --kernel=add --arch=gfx1100 \\
        --constexpr=BLOCK=64 --divisor=a=64 --mlir_out=add.mlir --cpp_out=add.cpp

The same trace and translation Kernel.trace() and Kernel.source() run; errors print the
user's file:line and exit 1.
"""

import sys

from absl import app, flags

from hk.compiler.cli import load_module, parse_constants

FLAGS = flags.FLAGS
flags.DEFINE_string("src", None, "the Python file that defines the kernel", required=True)
flags.DEFINE_string("kernel", None, "the name of the @hk.kernel in it", required=True)
flags.DEFINE_string("arch", None, "target architecture", required=True)
flags.DEFINE_multi_string("constexpr", [], "a compile-time constant NAME=VALUE (a Python literal)")
flags.DEFINE_multi_string("divisor", [], "what is known of a tensor parameter, NAME=D (see "
                          "hk.types.divisor_of); unnamed tensors get 1")
flags.DEFINE_string("mlir_out", None, "where to write the hk module after the passes")
flags.DEFINE_string("cpp_out", None, "where to write the C++")


def load_kernel(path, name):
    """The Kernel object `name` of the Python file `path`."""
    import hk

    kernel = getattr(load_module(path), name, None)
    if not isinstance(kernel, hk.Kernel):
        raise SystemExit("%s has no @hk.kernel named %r" % (path, name))
    return kernel


def main(argv):
    del argv
    from hk.errors import HKError

    try:
        kernel = load_kernel(FLAGS.src, FLAGS.kernel)
        divisors = {k: int(v) for k, v in parse_constants(FLAGS.divisor).items()}
        traced = kernel.trace(FLAGS.arch, divisors=divisors, **parse_constants(FLAGS.constexpr))
        if FLAGS.mlir_out:
            with open(FLAGS.mlir_out, "w") as f:
                f.write(traced.dump())
        if FLAGS.cpp_out:
            with open(FLAGS.cpp_out, "w") as f:
                f.write(traced.cpp)
    except HKError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    app.run(main)
