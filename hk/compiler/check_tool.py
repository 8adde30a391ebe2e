"""hk-check: traces, verifies, compiles and gates the kernels of a Python file for given targets.

    hk-check --src=examples/04_gemm.py --archs=gfx1100,gfx950 \\
        [--kernel=gemm ...] [--divisor=a=64 ...] [--constexpr=KSTEP=32 ...]

(from a source tree: `./bazelw run //hk/compiler:hk-check -- --src=$PWD/FILE.py ...`)

One line per kernel and target: `ok` with its figures (VGPRs, SGPRs, LDS, main-loop instructions
per matrix instruction), or `FAIL` with the error at the user's line. Exit codes: 0 every kernel
passes, 1 some kernel fails (a trace error, a refusal of the resource or the wait gate), 2 the
command itself is wrong (no such file, a file that does not import, an unknown target, no
kernel to check) or a tool is missing.
"""

from absl import flags

FLAGS = flags.FLAGS


def define_flags():
    flags.DEFINE_string("src", None, "the Python file whose kernels to check")
    flags.DEFINE_list("archs", ["gfx1100"], "target architectures")
    flags.DEFINE_multi_string("kernel", [], "a kernel to check (default: every @hk.kernel in the file)")
    flags.DEFINE_multi_string("constexpr", [], "a compile-time constant NAME=VALUE for every kernel")
    flags.DEFINE_multi_string("divisor", [], "what is known of a tensor parameter, NAME=D; or D for all")


def check(name, kernel, arch, divisors, constants):
    """(ok, line) for one kernel on one target."""
    from hk.errors import HKError, ToolchainError
    from hk.runtime import isa_stats

    try:
        built = kernel.build(arch, divisors=divisors, **constants)
    except ToolchainError:
        raise
    except HKError as e:
        return False, "FAIL %-24s %-8s %s" % (name, arch, str(e).replace("\n", "\n     "))
    (s,) = isa_stats.stats(built.path).values()
    loop = "%.2f per matrix instruction" % s.per_matrix if s.per_matrix is not None else "no matrix loop"
    return True, "ok   %-24s %-8s %d VGPRs, %d SGPRs, %d bytes LDS, %s" % (
        name, arch, s.vgprs + s.agprs, s.sgprs, s.lds_bytes, loop)


def main(argv):
    del argv
    from hk.compiler import cli

    cli.check_archs(FLAGS.archs)
    module = cli.load_user_module(FLAGS.src)
    divisors, constants = cli.divisors_of(FLAGS.divisor), cli.parse_constants(FLAGS.constexpr)
    failed = 0
    for name, kernel in cli.kernels_of(module, FLAGS.kernel):
        for arch in FLAGS.archs:
            ok, line = check(name, kernel, arch, divisors, constants)
            print(line)
            failed += not ok
    return 1 if failed else 0


def entry():
    from hk.compiler import cli

    cli.run_tool("hk-check", __doc__, define_flags, main)


if __name__ == "__main__":
    entry()
