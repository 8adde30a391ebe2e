"""Where the HIP compiler and the LLVM tools are.

In order of preference:
  1. HK_CLANG and HK_ROCM_ROOT (and HK_LLVM_BIN for the tools): set by the Bazel rules and
     tests to the hermetic toolchain (@rocm_device, @llvm_toolchain).
  2. The hermetic toolchain in the runfiles of a Bazel-built program (`bazel run`).
  3. HK_ROCM_PATH: an installed ROCm; its llvm/bin/clang++ and llvm/bin tools.
  4. The toolchain `hk-toolchain install` put under $HK_CACHE_DIR/toolchain (the same pinned
     packages as the Bazel build's hermetic one; how a wheel user without ROCm gets a compiler).
  5. /opt/rocm, if it exists.
"""

import dataclasses
import functools
import hashlib
import os
import subprocess
import sys

from hk.errors import ToolchainError
from hk.runtime import paths


@dataclasses.dataclass(frozen=True)
class Toolchain:
    """The programs one compile uses, as absolute paths."""

    clang: str
    rocm_root: str
    llvm_bin: str
    origin: str

    def tool(self, name):
        """The absolute path of an LLVM tool (llvm-readelf, llvm-objdump, llvm-mc, ...)."""
        path = os.path.join(self.llvm_bin, name)
        if not os.access(path, os.X_OK):
            raise ToolchainError("%s not found in %s (toolchain: %s)" % (name, self.llvm_bin, self.origin))
        return path

    @functools.cached_property
    def identity(self):
        """A digest of what decides the compiler's output: its version text and device libraries.

        Part of every compile cache key, so a new compiler or new bitcode never serves old objects.
        """
        digest = hashlib.sha256()
        # Not where it is installed: the same compiler unpacked elsewhere (another clone, a remote
        # executor's sandbox) makes the same code objects and keeps the same cache keys.
        version = "".join(line for line in _version_text(self.clang).splitlines(True)
                          if not line.startswith(("InstalledDir:", "Configuration file:")))
        digest.update(version.encode())
        version_file = os.path.join(self.rocm_root, "share", "hip", "version")
        if os.path.exists(version_file):
            digest.update(open(version_file, "rb").read())
        bitcode = os.path.join(self.rocm_root, "amdgcn", "bitcode")
        if os.path.isdir(bitcode):
            for name in sorted(os.listdir(bitcode)):
                st = os.stat(os.path.join(bitcode, name))
                digest.update(("%s:%d\n" % (name, st.st_size)).encode())
        return digest.hexdigest()


def _version_text(clang):
    """`clang --version`, remembered on disk per compiler file so later processes skip the run."""
    try:
        st = os.stat(clang)
    except OSError:
        raise ToolchainError("the HIP compiler %s does not exist" % clang,
                             hint="check HK_CLANG / HK_ROCM_PATH") from None
    stamp = hashlib.sha256(("%s\0%d\0%d" % (os.path.realpath(clang), st.st_size, st.st_mtime_ns)).encode())
    memo = os.path.join(paths.cache_base(), "toolchains", stamp.hexdigest()[:32] + ".version")
    try:
        with open(memo) as f:
            return f.read()
    except OSError:
        pass
    result = subprocess.run([clang, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    if result.returncode != 0:
        raise ToolchainError("%s --version failed:\n%s" % (clang, result.stdout))
    try:
        os.makedirs(os.path.dirname(memo), exist_ok=True)
        tmp = "%s.%d.tmp" % (memo, os.getpid())
        with open(tmp, "w") as f:
            f.write(result.stdout)
        os.replace(tmp, memo)
    except OSError:
        pass  # a read-only cache costs a subprocess per process, nothing more
    return result.stdout


def _absolute(path):
    return os.path.abspath(path) if path else path


def _runfiles_roots():
    roots = []
    if os.environ.get("RUNFILES_DIR"):
        roots.append(os.environ["RUNFILES_DIR"])
    main = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if main:
        roots.append(main + ".runfiles")
        # Inside the runfiles tree itself: .../<name>.runfiles/<workspace>/<script>
        marker = ".runfiles" + os.sep
        if marker in main:
            roots.append(main[:main.index(marker) + len(marker) - 1])
    return roots


def _from_runfiles():
    """The hermetic toolchain shipped in a Bazel program's runfiles, or None."""
    for root in _runfiles_roots():
        for base in (os.path.join(root, "rocm_device"), os.path.join(root, "hk_dsl", "external", "rocm_device")):
            clang = os.path.join(base, "hip_clang")
            rocm = os.path.join(base, "rocm")
            if os.access(clang, os.X_OK) and os.path.isdir(rocm):
                llvm = os.path.join(os.path.dirname(base), "llvm_toolchain")
                return Toolchain(clang, rocm, llvm, "Bazel runfiles (%s)" % base)
    return None


def find():
    """The toolchain to compile with; ToolchainError naming what to set when there is none."""
    env = os.environ
    if env.get("HK_CLANG"):
        clang = _absolute(env["HK_CLANG"])
        root = _absolute(env.get("HK_ROCM_ROOT", ""))
        if not root and env.get("HK_ROCM_VERSION_FILE"):
            # <root>/share/hip/version, as Bazel can name a file but not a directory.
            root = os.path.dirname(os.path.dirname(os.path.dirname(_absolute(env["HK_ROCM_VERSION_FILE"]))))
        if not root:
            raise ToolchainError("HK_CLANG is set but HK_ROCM_ROOT is not",
                                 hint="set HK_ROCM_ROOT to the ROCm root holding include/hip and amdgcn/bitcode")
        llvm_bin = _absolute(env.get("HK_LLVM_BIN", os.path.dirname(clang)))
        return Toolchain(clang, root, llvm_bin, "HK_CLANG=" + clang)
    hermetic = _from_runfiles()
    if hermetic:
        return hermetic
    rocm_path = env.get("HK_ROCM_PATH")
    if rocm_path:
        return _installed_rocm("HK_ROCM_PATH", rocm_path)
    from hk.runtime import toolchain_install

    root = toolchain_install.installed()
    if root:
        bindir = os.path.join(root, "bin")
        return Toolchain(os.path.join(bindir, "clang++"), os.path.join(root, "rocm"), bindir,
                         "hk-toolchain install (%s)" % root)
    if os.path.isdir("/opt/rocm"):
        return _installed_rocm("/opt/rocm", "/opt/rocm")
    raise ToolchainError(
        "no HIP compiler found",
        hint="run `hk-toolchain install` (the project's pinned clang and HIP headers, from "
             "Debian's archive), or set HK_ROCM_PATH to a ROCm installation")


def _installed_rocm(var, root):
    if not os.path.isdir(root):
        raise ToolchainError("%s=%s is not a directory" % (var, root),
                             hint="point HK_ROCM_PATH at a ROCm installation (e.g. /opt/rocm)")
    clang = os.path.join(root, "llvm", "bin", "clang++")
    if not os.access(clang, os.X_OK):
        raise ToolchainError("%s has no llvm/bin/clang++" % root,
                             hint="point HK_ROCM_PATH at a complete ROCm installation")
    return Toolchain(clang, root, os.path.dirname(clang), "%s (%s)" % (var, root))
