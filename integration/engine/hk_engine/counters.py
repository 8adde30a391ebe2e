"""Calls per patch and route, per process: what an A/B run reads to know which kernels served it.

    hk_engine.counters.snapshot()   {"vllm.linear": {"hk": 412, "engine": 3, "engine:uncovered": 1}}
    HK_ENGINE_COUNTERS=-            dump them to stderr at exit
    HK_ENGINE_COUNTERS=PATH         write them as JSON to PATH.<pid> at exit, and within a second of
                                    each change (engines kill their workers, which then never exit)
    hk_engine.counters.read_all(PATH)   {pid: counts} of every process that wrote PATH.<pid>

A route taken for a reason other than the table's (a shape the op does not cover, a graph being
captured before the kernel was loaded) is counted as "engine:<reason>".
"""

import atexit
import collections
import json
import os
import sys
import threading
import time

_lock = threading.Lock()
_counts = collections.defaultdict(collections.Counter)
_changed = threading.Event()
_writer = None  # after the first count: the thread that writes PATH.<pid> after changes, or False
FLUSH_SECONDS = 0.5


def count(name, route, n=1):
    with _lock:
        _counts[name][route] += n
    _changed.set()
    if _writer is None:
        _start_writer()


def snapshot():
    """{patch name: {route: calls}} so far in this process."""
    with _lock:
        return {name: dict(routes) for name, routes in _counts.items()}


def reset():
    with _lock:
        _counts.clear()


def dump(where=None):
    """Writes the counts as JSON to `where` (a path, as `where`.<pid>; "-" or None: stderr)."""
    text = json.dumps(snapshot(), indent=1, sort_keys=True)
    if where in (None, "-"):
        print("hk_engine counters: " + text, file=sys.stderr)
    else:
        path = "%s.%d" % (where, os.getpid())
        with open(path + ".tmp", "w") as f:
            f.write(text + "\n")
        os.replace(path + ".tmp", path)  # a reader never sees half a file


def read_all(where):
    """{pid: {patch name: {route: calls}}} of the processes that wrote `where`.<pid>."""
    directory, base = os.path.split(os.fspath(where))
    counts = {}
    for name in os.listdir(directory or "."):
        pid = name[len(base) + 1:]
        if name.startswith(base + ".") and pid.isdigit():
            with open(os.path.join(directory, name)) as f:
                counts[int(pid)] = json.load(f)
    return counts


def _start_writer():
    global _writer
    where = os.environ.get("HK_ENGINE_COUNTERS")
    with _lock:
        if _writer is not None:
            return
        _writer = False
        if where and where != "-":
            _writer = threading.Thread(target=_write_changes, args=(where,), name="hk_engine counters", daemon=True)
            _writer.start()


def _forget_writer():
    global _writer
    _writer = None  # a forked child has no threads: it starts its own


os.register_at_fork(after_in_child=_forget_writer)


def _write_changes(where):
    while True:
        _changed.wait()
        time.sleep(FLUSH_SECONDS)
        _changed.clear()
        dump(where)


def _dump_at_exit():
    where = os.environ.get("HK_ENGINE_COUNTERS")
    if where:
        dump(where)


atexit.register(_dump_at_exit)
