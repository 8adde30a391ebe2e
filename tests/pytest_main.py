"""Runs pytest on the test files given as arguments (the main of every pytest py_test).

Under Bazel only the test's own temporary directory is writable, and HOME is the user's: every
cache a test's libraries keep (Triton's kernel cache, pytest's tmp_path) goes under TEST_TMPDIR,
so a test never reads or writes anything of the user's.
"""

import os
import sys

import pytest


def private_dirs(tmpdir):
    """The environment that sends third-party caches under `tmpdir`, and pytest's arguments."""
    env = {
        "TRITON_HOME": os.path.join(tmpdir, "triton-home"),
        "TRITON_CACHE_DIR": os.path.join(tmpdir, "triton-cache"),
        "XDG_CACHE_HOME": os.path.join(tmpdir, "xdg-cache"),
        "TMPDIR": os.path.join(tmpdir, "tmp"),
    }
    return env, ["--basetemp=" + os.path.join(tmpdir, "pytest")]


if __name__ == "__main__":
    args = ["-q", "-p", "no:cacheprovider"]
    tmpdir = os.environ.get("TEST_TMPDIR")
    if tmpdir:
        env, extra = private_dirs(tmpdir)
        for key, value in env.items():
            os.makedirs(value, exist_ok=True)
            os.environ[key] = value
        args += extra
    sys.exit(pytest.main(args + sys.argv[1:]))
