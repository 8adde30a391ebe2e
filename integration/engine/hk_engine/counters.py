"""Calls per patch and route, per process: what an A/B run reads to know which kernels served it.

    hk_engine.counters.snapshot()   {"vllm.linear": {"hk": 412, "engine": 3, "engine:uncovered": 1}}
    HK_ENGINE_COUNTERS=-            dump them to stderr at exit (or =PATH: as JSON to PATH.<pid>)

A route taken for a reason other than the table's (a shape the op does not cover, a graph being
captured before the kernel was loaded) is counted as "engine:<reason>".
"""

import atexit
import collections
import json
import os
import sys
import threading

_lock = threading.Lock()
_counts = collections.defaultdict(collections.Counter)


def count(name, route, n=1):
    with _lock:
        _counts[name][route] += n


def snapshot():
    """{patch name: {route: calls}} so far in this process."""
    with _lock:
        return {name: dict(routes) for name, routes in _counts.items()}


def reset():
    with _lock:
        _counts.clear()


def dump(where=None):
    """Writes the counts as JSON to `where` (a path; "-" or None: stderr)."""
    text = json.dumps(snapshot(), indent=1, sort_keys=True)
    if where in (None, "-"):
        print("hk_engine counters: " + text, file=sys.stderr)
    else:
        with open("%s.%d" % (where, os.getpid()), "w") as f:
            f.write(text + "\n")


def _dump_at_exit():
    where = os.environ.get("HK_ENGINE_COUNTERS")
    if where:
        dump(where)


atexit.register(_dump_at_exit)
