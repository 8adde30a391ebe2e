"""Where hk keeps what it caches on disk."""

import os


def cache_base():
    """$HK_CACHE_DIR; under a Bazel test (only its temporary directory is writable) the test's
    own directory; else $XDG_CACHE_HOME/hk or ~/.cache/hk."""
    base = os.environ.get("HK_CACHE_DIR")
    if not base and os.environ.get("TEST_TMPDIR"):
        base = os.path.join(os.environ["TEST_TMPDIR"], "hk-cache")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hk")
    return base
