"""Precompiled tile-library headers for the compile cache.

Every translated kernel begins with `#include "hk/hk.cuh"`, and parsing it (HIP's device headers
under it) is about half of a kernel's compile. So the cache compiles that header once per
toolchain, headers, include directory, target and flags into a precompiled header (PCH) and
passes it to clang with -include-pch: the code object is byte-identical to one compiled without
it (tests/runtime:pch_test checks this on every target).

    $HK_CACHE_DIR/pch/<k>.pch    one per key, written under a private name and renamed into place

clang does not re-check the headers a PCH was made from (-fno-validate-pch): the key holds
their digest and their directory, so a PCH is only ever used with the headers it was made of.
HK_PCH=0 turns it off.
"""

import hashlib
import os
import subprocess
import tempfile

from hk import errors

# The first line (after comments and blank lines) of a source that can take the PCH.
PREFIX = '#include "hk/hk.cuh"'


def enabled():
    return os.environ.get("HK_PCH", "1") != "0"


def takes_prefix(source_text):
    """Whether the source's first line of code is the tile library's include, so that putting
    the PCH before it changes nothing."""
    for line in source_text.splitlines():
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        return line == PREFIX
    return False


def key(arch, toolchain, include_dir, flags):
    """The key of a PCH: what decides its content and the paths it will be used with."""
    from hk.runtime import cache, compile as compile_lib

    digest = hashlib.sha256()
    for part in (toolchain.identity, cache.headers_digest(include_dir), os.path.realpath(include_dir), arch,
                 "\0".join(flags), " ".join(compile_lib.BASE_FLAGS)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def use_flags(path):
    """The flags that put the PCH at `path` in front of a source."""
    return ["-Xclang", "-include-pch", "-Xclang", path, "-Xclang", "-fno-validate-pch"]


def ensure(directory, arch, *, toolchain, include_dir, flags=()):
    """The path of the PCH for these settings, built on first use; None (with a warning) when
    clang cannot make one, in which case compiles go on without it."""
    from hk.runtime import cache, compile as compile_lib

    path = os.path.join(directory, key(arch, toolchain, include_dir, flags) + ".pch")
    if os.path.exists(path):
        return path
    os.makedirs(directory, exist_ok=True)
    with cache.locked(path[:-len(".pch")] + ".lock"):
        if os.path.exists(path):  # another process built it while we waited
            return path
        with tempfile.TemporaryDirectory(prefix="hk-pch-", dir=directory) as tmp:
            header = os.path.join(tmp, "prefix.hip")
            with open(header, "w") as f:
                f.write(PREFIX + "\n")
            staged = os.path.join(tmp, "prefix.pch")
            # -S stops the driver before its link step; -emit-pch makes the front end write the
            # AST instead of code.
            cmd = compile_lib.command(header, arch, staged, toolchain=toolchain, include_dirs=[include_dir],
                                      extra_flags=list(flags) + ["-S", "-Xclang", "-emit-pch"])
            result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    universal_newlines=True)
            if result.returncode != 0 or not os.path.exists(staged):
                errors.warn("could not precompile the tile library's headers for %s (compiling without): %s"
                            % (arch, result.stdout.strip()[-500:]))
                return None
            os.replace(staged, path)
    return path


def discard(path):
    """Removes a PCH clang could not use (damaged on disk): the next compile makes a new one."""
    errors.warn("the precompiled headers %s could not be used; removing them" % path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
