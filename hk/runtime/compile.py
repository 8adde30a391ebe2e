"""The one compile path: HIP C++ to a linked AMDGPU code object.

Both the JIT (Kernel.build) and the Bazel rules (toolchains/hip.bzl, through the command line
below) compile with `compile_hip`, so a kernel built by either is the same object.

    python -m hk.runtime.compile --arch=gfx1100 --out=k.co k.cpp
"""

import os
import subprocess
import sys

from hk.errors import CompileError, HKError
from hk.runtime import pch
from hk.runtime import toolchain as toolchain_lib
from hk.target import facts

# Flags every device compile gets. -O3 and C++20 as the tile library expects; device only and
# no offload bundle, so the output is the ELF code object itself; no compilation-unit id (clang
# derives it from the source's path), so the object does not depend on where it was built.
BASE_FLAGS = ("-x", "hip", "-std=c++20", "-O3", "--cuda-device-only", "--no-gpu-bundle-output",
              "-fuse-cuid=none")


def command(source, arch, out, *, toolchain, include_dirs=(), defines=(), extra_flags=()):
    """The compiler command line for one source, as a list of arguments."""
    facts.target(arch)  # refuses an unknown arch with the list of known ones
    cmd = [toolchain.clang, *BASE_FLAGS, "--offload-arch=" + arch, "--rocm-path=" + toolchain.rocm_root]
    cmd += ["-I" + d for d in include_dirs]
    cmd += ["-D" + d for d in defines]
    cmd += list(extra_flags)
    cmd += ["-o", out, source]
    return cmd


def compile_hip(source, arch, out, *, toolchain=None, include_dirs=(), defines=(), extra_flags=(),
                pch_dir=None):
    """Compiles the HIP file `source` for `arch` into the code object `out`; returns `out`.

    With `pch_dir`, a source that begins with the tile library's include is compiled with the
    library's precompiled headers kept there (hk.runtime.pch): the same object, sooner.

    Raises CompileError with the compiler's diagnostics when it fails.
    """
    toolchain = toolchain or toolchain_lib.find()
    cmd = command(source, arch, out, toolchain=toolchain, include_dirs=include_dirs,
                  defines=defines, extra_flags=extra_flags)
    prefix = _prefix_header(source, arch, toolchain, include_dirs, defines, extra_flags, pch_dir)
    if prefix is not None:
        result = _run(cmd[:-1] + pch.use_flags(prefix) + cmd[-1:])
        if result.returncode == 0:
            return out
        # A failure with the PCH is retried without it, so that the diagnostics are the
        # compiler's usual ones; if the source compiles then, the PCH was at fault.
    result = _run(cmd)
    if prefix is not None and result.returncode == 0:
        pch.discard(prefix)
    if result.returncode != 0:
        raise CompileError("compiling %s for %s failed:\n%s" % (source, arch, result.stdout.rstrip()),
                           hint="the command was: " + " ".join(cmd))
    return out


def _run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)


def _prefix_header(source, arch, toolchain, include_dirs, defines, extra_flags, pch_dir):
    """The PCH to compile `source` with, or None."""
    if pch_dir is None or defines or len(include_dirs) != 1 or not pch.enabled():
        return None
    with open(source) as f:
        if not pch.takes_prefix(f.read(4096)):
            return None
    return pch.ensure(pch_dir, arch, toolchain=toolchain, include_dir=include_dirs[0], flags=extra_flags)


def main(argv):
    from absl import flags

    flags.DEFINE_string("arch", None, "target architecture, e.g. gfx1100", required=True)
    flags.DEFINE_string("out", None, "the code object to write", required=True)
    flags.DEFINE_multi_string("include", [], "an include directory")
    flags.DEFINE_multi_string("define", [], "a preprocessor definition NAME[=VALUE]")
    flags.DEFINE_multi_string("copt", [], "an extra compiler flag")
    argv = flags.FLAGS(argv)
    if len(argv) != 2:
        print("usage: python -m hk.runtime.compile --arch=ARCH --out=OUT SOURCE", file=sys.stderr)
        return 2
    f = flags.FLAGS
    try:
        compile_hip(argv[1], f.arch, f.out, include_dirs=f.include, defines=f.define, extra_flags=f.copt)
    except HKError as e:
        print("hk.runtime.compile: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
