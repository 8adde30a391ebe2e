"""The compile cache: code objects keyed by the hash of everything that decides them.

The key covers the toolchain's identity, the tile library's headers, the dialect's version,
the flags, the architecture and the source. Entries are written to a temporary name and
renamed into place, so no reader ever sees a partial file; a per-key lock makes concurrent
processes that build the same kernel build it once.

Each entry is a code object and its digest (the sha256 of the whole ELF: code, metadata note,
symbols), written before the code object is renamed into place and checked on every hit. A
damaged entry (a flipped bit on disk, a truncated copy, a hand-edited note) is rebuilt with a
warning; it is never launched nor gated.

    $HK_CACHE_DIR/kernels/<k[:2]>/<k>.co       the code object
    $HK_CACHE_DIR/kernels/<k[:2]>/<k>.sha256   its digest
"""

import contextlib
import fcntl
import functools
import hashlib
import os
import tempfile

import hk
from hk import errors
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
def locked(path):
    """Holds an exclusive lock on the file `path` (created if missing) for the block: processes
    that take it run the block one at a time."""
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _digest(data):
    return hashlib.sha256(data).hexdigest()


def write_atomically(path, data):
    """Writes `data` to `path` through a staged file and a rename (readers see all or nothing)."""
    staged = "%s.%d.tmp" % (path, os.getpid())
    staged = os.path.join(os.path.dirname(path), "." + os.path.basename(staged))
    with open(staged, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(staged, path)


def _damage(path):
    """Why the entry at `path` cannot be trusted, or None when its digest matches."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        with open(path[:-len(".co")] + ".sha256") as f:
            recorded = f.read().strip()
    except OSError as e:
        return "unreadable (%s)" % e.strerror
    if recorded != _digest(data):
        return "its digest does not match (recorded %s, found %s)" % (recorded[:12], _digest(data)[:12])
    return None


def _verified(path):
    """Whether the entry at `path` is present and intact; warns about a damaged one."""
    if not os.path.exists(path):
        return False
    why = _damage(path)
    if why is None:
        return True
    errors.warn("the cached code object %s is damaged: %s; rebuilding it" % (path, why))
    return False


def code_object(source, arch, *, toolchain, flags=()):
    """The path of the compiled code object for `source`, compiling it on a miss or when the
    cached entry fails its digest."""
    k = key(source, arch, toolchain, flags)
    directory = os.path.join(root(), k[:2])
    path = os.path.join(directory, k + ".co")
    if os.path.exists(path) and _damage(path) is None:
        return path, True
    os.makedirs(directory, exist_ok=True)
    with locked(os.path.join(directory, k + ".lock")):
        if _verified(path):  # another process built it while we waited
            return path, True
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a damaged entry: nobody may read it while it is rebuilt
        with tempfile.TemporaryDirectory(prefix="hk-build-") as tmp:
            src = os.path.join(tmp, "kernel.hip")
            with open(src, "w") as f:
                f.write(source)
            out = os.path.join(tmp, "kernel.co")
            compile_lib.compile_hip(src, arch, out, toolchain=toolchain, include_dirs=[include_dir()],
                                    extra_flags=flags, pch_dir=os.path.join(paths.cache_base(), "pch"))
            with open(out, "rb") as f:
                data = f.read()
        # The digest lands first: a reader that sees the code object also sees its digest.
        write_atomically(os.path.join(directory, k + ".sha256"), (_digest(data) + "\n").encode())
        write_atomically(path, data)
    return path, False
