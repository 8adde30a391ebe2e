"""hk-warm: compiles kernels into hk's cache before their first call, so that no launch waits
for the compiler (a server's first request, a benchmark's first iteration).

    hk-warm --src=mykernels.py [--src=more.py] --archs=gfx1100,gfx950 \\
        [--kernel=NAME ...] [--constexpr=NAME=VALUE ...] [--divisor=NAME=D | --divisor=D] [--jobs=2]

Every @hk.kernel of each file (or those named) is traced, compiled and gated for each target,
as kernel.build() does, and lands in the cache a launch reads ($HK_CACHE_DIR/kernels). A call
specializes on its constants and on its tensors' divisors, so warm with those the calls will
have (--divisor=64 for tensors of whole 128-byte rows). A progress bar goes to stderr; then one
line per kernel that failed. Exit codes: 0 every kernel is in the cache, 1 some kernel failed
to trace, compile or pass the gates, 2 a wrong command or no toolchain.
"""

import concurrent.futures
import multiprocessing
import sys

from absl import flags

FLAGS = flags.FLAGS


def define_flags():
    flags.DEFINE_multi_string("src", [], "a Python file whose kernels to compile (repeatable)")
    flags.DEFINE_list("archs", ["gfx1100"], "target architectures")
    flags.DEFINE_multi_string("kernel", [], "a kernel to compile (default: every @hk.kernel of each file)")
    flags.DEFINE_multi_string("constexpr", [], "a compile-time constant NAME=VALUE for every kernel")
    flags.DEFINE_multi_string("divisor", [], "what is known of a tensor parameter, NAME=D; or D for all")
    flags.DEFINE_integer("jobs", 1, "kernels compiled at once (each compile takes a core and ~200 MB)",
                         lower_bound=1)


# The jobs of a warm() in progress: forked workers inherit them and are sent only an index (a
# kernel, which holds the user's function, need not pickle).
_JOBS = []


def _build(index):
    """(label, error or None, cached) of one kernel on one target; run in a worker."""
    from hk.errors import HKError, ToolchainError

    label, kernel, arch, divisors, constants = _JOBS[index]
    try:
        built = kernel.build(arch, divisors=divisors, **constants)
    except ToolchainError:
        raise
    except HKError as e:
        return label, str(e), False
    return label, None, built.cached


def jobs_of(paths, names, archs, divisors, constants):
    """[(label, kernel, arch, divisors, constants)] for every kernel of the files on every target."""
    from hk.compiler import cli

    jobs = []
    for path in paths:
        for name, kernel in cli.kernels_of(cli.load_user_module(path), names):
            for arch in archs:
                jobs.append(("%s:%s %s" % (path, name, arch), kernel, arch, divisors, constants))
    return jobs


def warm(jobs, workers=1, progress=None):
    """Builds every job; ([(label, error)] of those that failed, how many were cached already).
    With more than one worker the builds run in forked processes (the cache is safe under
    concurrent writers). progress: show the bar (None: when stderr is a terminal)."""
    from tqdm import tqdm

    failed, results = [], []
    _JOBS[:] = jobs
    bar = tqdm(total=len(jobs), unit="kernel", file=sys.stderr,
               disable=None if progress is None else not progress)
    try:
        if workers > 1 and len(jobs) > 1:
            context = multiprocessing.get_context("fork")  # workers inherit the loaded kernels
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
                for result in pool.map(_build, range(len(jobs))):
                    results.append(result)
                    bar.update()
        else:
            for i in range(len(jobs)):
                results.append(_build(i))
                bar.update()
    finally:
        bar.close()
        _JOBS.clear()
    for label, error, _ in results:
        if error is not None:
            failed.append((label, error))
    return failed, sum(1 for _, error, cached in results if error is None and cached)


def main(argv):
    from hk.compiler import cli

    if len(argv) > 1:
        raise cli.UsageError("unexpected arguments %s (files are given with --src)" % " ".join(argv[1:]))
    if not FLAGS.src:
        raise cli.UsageError("give the kernel files with --src")
    cli.check_archs(FLAGS.archs)
    jobs = jobs_of(FLAGS.src, FLAGS.kernel, FLAGS.archs, cli.divisors_of(FLAGS.divisor),
                   cli.parse_constants(FLAGS.constexpr))
    failed, cached = warm(jobs, FLAGS.jobs)
    for label, error in failed:
        print("FAIL %s: %s" % (label, error.replace("\n", "\n     ")))
    print("hk-warm: %d of %d kernels in the cache (%d already were), %d failed"
          % (len(jobs) - len(failed), len(jobs), cached, len(failed)))
    return 1 if failed else 0


def entry():
    from hk.compiler import cli

    cli.run_tool("hk-warm", __doc__, define_flags, main)


if __name__ == "__main__":
    entry()
