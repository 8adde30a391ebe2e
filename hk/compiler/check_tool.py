"""hk-check: traces, verifies, compiles and gates the kernels of a Python file for given targets.

    python -m hk.compiler.check_tool --src=examples/04_gemm.py --archs=gfx1100,gfx950 \\
        [--kernel=gemm ...] [--divisor=a=64 ...] [--constexpr=KSTEP=32 ...]

One line per kernel and target: `ok` with its figures (VGPRs, SGPRs, LDS, main-loop instructions
per matrix instruction), or `FAIL` with the error at the user's line. Exit codes: 0 every kernel
passes, 1 some kernel fails (a trace error, a refusal of the resource or the wait gate), 2 the
command itself is wrong (no such file, a file that does not import, an unknown target, no
kernel to check) or a tool is missing.
"""

import os
import sys

from absl import flags

FLAGS = flags.FLAGS


def define_flags():
    flags.DEFINE_string("src", None, "the Python file whose kernels to check")
    flags.DEFINE_list("archs", ["gfx1100"], "target architectures")
    flags.DEFINE_multi_string("kernel", [], "a kernel to check (default: every @hk.kernel in the file)")
    flags.DEFINE_multi_string("constexpr", [], "a compile-time constant NAME=VALUE for every kernel")
    flags.DEFINE_multi_string("divisor", [], "what is known of a tensor parameter, NAME=D; or D for all")


class UsageError(Exception):
    """The command line or its file is wrong: exit 2."""


def load_module(path):
    """The module of the Python file `path`; UsageError when there is none or it fails to import."""
    from hk.compiler import cli

    if not path or not os.path.isfile(path):
        raise UsageError("no such file: %r (give the kernel file with --src)" % path)
    try:
        return cli.load_module(path)
    except Exception as e:  # the user's file: say what it raised, where
        raise UsageError("importing %s failed: %s: %s" % (path, type(e).__name__, e)) from e


def kernels_of(module, names):
    """[(name, Kernel)] of the module: those named, else every one it defines."""
    import hk

    found = {n: v for n, v in vars(module).items() if isinstance(v, hk.Kernel) and not n.startswith("_")}
    if names:
        missing = [n for n in names if n not in found]
        if missing:
            raise UsageError("%s has no @hk.kernel named %s (it has: %s)"
                             % (module.__file__, ", ".join(missing), ", ".join(sorted(found)) or "none"))
        return [(n, found[n]) for n in names]
    if not found:
        raise UsageError("%s defines no @hk.kernel" % module.__file__)
    return sorted(found.items())


def divisors_of(items):
    from hk.compiler.cli import parse_constants

    if len(items) == 1 and "=" not in items[0]:
        return int(items[0])
    return {k: int(v) for k, v in parse_constants(items).items()} or None


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


def run(argv):
    del argv
    from hk.compiler.cli import parse_constants
    from hk.errors import HKError
    from hk.target import facts

    for arch in FLAGS.archs:
        try:
            facts.target(arch)
        except HKError as e:
            raise UsageError(str(e)) from e
    module = load_module(FLAGS.src)
    divisors, constants = divisors_of(FLAGS.divisor), parse_constants(FLAGS.constexpr)
    failed = 0
    for name, kernel in kernels_of(module, list(dict.fromkeys(FLAGS.kernel))):
        for arch in FLAGS.archs:
            ok, line = check(name, kernel, arch, divisors, constants)
            print(line)
            failed += not ok
    return 1 if failed else 0


def main(argv):
    from hk.errors import ToolchainError

    try:
        return run(argv)
    except (UsageError, ToolchainError, ValueError, SystemExit) as e:
        if isinstance(e, SystemExit) and isinstance(e.code, int):
            return e.code
        print("hk-check: error: %s" % e, file=sys.stderr)
        return 2


def entry():
    """The command: --help exits 0, a malformed flag 2 (absl alone would exit 1 for both)."""
    define_flags()
    if any(a in ("-h", "--help", "--helpshort") for a in sys.argv[1:]):
        print(__doc__.strip())
        print(FLAGS.main_module_help())
        sys.exit(0)
    try:
        argv = FLAGS(sys.argv)
    except flags.Error as e:
        print("hk-check: error: %s (see --help)" % e, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(argv))


if __name__ == "__main__":
    entry()
