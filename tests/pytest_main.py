"""Runs pytest on the test files given as arguments (the main of every pytest py_test)."""

import os
import sys

import pytest

if __name__ == "__main__":
    # Under Bazel only the test's own temporary directory is writable: the compile cache goes there.
    if "TEST_TMPDIR" in os.environ:
        os.environ.setdefault("HK_CACHE_DIR", os.path.join(os.environ["TEST_TMPDIR"], "hk-cache"))
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider"] + sys.argv[1:]))
