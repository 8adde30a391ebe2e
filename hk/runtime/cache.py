"""The compile cache: code objects keyed by the hash of everything that decides them.

The key covers the toolchain's identity, the tile library's headers, the dialect's version,
the flags, the architecture and the source. Entries are written to a temporary name and
renamed into place, so no reader ever sees a partial file; a per-key lock makes concurrent
processes that build the same kernel build it once.

    $HK_CACHE_DIR/kernels (default ~/.cache/hk/kernels)
"""

import contextlib
import fcntl
import functools
import hashlib
import os
import tempfile

import hk
from hk.runtime import compile as compile_lib
from hk.runtime import paths

_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(hk.__file__)), "include")


def root():
    return os.path.join(paths.cache_base(), "kernels")


def include_dir():
    """The tile library shipped in the hk package."""
    return _INCLUDE


@functools.lru_cache(maxsize=None)
def headers_digest(include=_INCLUDE):
    """A digest of every tile-library header (content and path)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(include):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            digest.update(os.path.relpath(path, include).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def _dialect_version():
    return hk.__version__


def key(source, arch, toolchain, flags=()):
    digest = hashlib.sha256()
    for part in (toolchain.identity, headers_digest(), _dialect_version(), arch, "\0".join(flags),
                 " ".join(compile_lib.BASE_FLAGS), source):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(path):
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def code_object(source, arch, *, toolchain, flags=()):
    """The path of the compiled code object for `source`, compiling it on a miss."""
    k = key(source, arch, toolchain, flags)
    directory = os.path.join(root(), k[:2])
    path = os.path.join(directory, k + ".co")
    if os.path.exists(path):
        return path, True
    os.makedirs(directory, exist_ok=True)
    with _locked(os.path.join(directory, k + ".lock")):
        if os.path.exists(path):  # another process built it while we waited
            return path, True
        with tempfile.TemporaryDirectory(prefix="hk-build-") as tmp:
            src = os.path.join(tmp, "kernel.hip")
            with open(src, "w") as f:
                f.write(source)
            out = os.path.join(tmp, "kernel.co")
            compile_lib.compile_hip(src, arch, out, toolchain=toolchain, include_dirs=[include_dir()],
                                    extra_flags=flags)
            staged = os.path.join(directory, ".%s.%d.tmp" % (k, os.getpid()))
            with open(out, "rb") as fin, open(staged, "wb") as fout:
                fout.write(fin.read())
                fout.flush()
                os.fsync(fout.fileno())
            os.replace(staged, path)
    return path, False
