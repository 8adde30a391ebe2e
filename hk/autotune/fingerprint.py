"""Digests of what decides a candidate's result besides the candidate itself: the compiler (the
toolchain, the tile library, hk's tracing and translation) and the evaluator (hk.perf's model
and the emulator under it). A change to any of them makes every cached result a miss."""

import functools
import glob
import hashlib
import os

import hk

_HK = os.path.dirname(os.path.abspath(hk.__file__))

# hk's own files that decide a kernel's C++ (with the toolchain and the headers, its code object).
_COMPILER_FILES = ("types.py", "dsl/*.py", "compiler/*.py", "_mlir/_mlir_libs/*.so")
# The files that decide a prediction.
_MODEL_FILES = ("perf/*.py", "perf/*.so", "target/perf.json", "target/targets.json", "emu/*.py", "emu/*.so")


def _files_digest(patterns):
    digest = hashlib.sha256()
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(_HK, pattern))):
            digest.update(os.path.relpath(path, _HK).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def compiler_digest(toolchain_identity):
    """The compiler's digest: the toolchain (its identity), the tile library, hk's version and
    the sources of its tracing and translation."""
    from hk.runtime import cache

    digest = hashlib.sha256()
    for part in (toolchain_identity, cache.headers_digest(), hk.__version__, _files_digest(_COMPILER_FILES)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def model_version():
    """hk.perf's version as a tuned file records it: hk's version and a digest of the model's
    sources and facts."""
    return "%s+%s" % (hk.__version__, _files_digest(_MODEL_FILES)[:12])
