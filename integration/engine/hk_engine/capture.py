"""The CUDA-graph contract: what an hk route may do while a graph is being captured.

A captured graph replays the kernels it recorded and nothing else, so under capture an hk op
may only launch what is already there: no compile, no code-object load, no host synchronisation,
no allocation outside torch's caching allocator (whose capture pool keeps addresses fixed).
hk ops never synchronise and allocate only through torch, so what remains is the first launch
of a specialization, which compiles and loads it. The rule: while a stream is capturing, a call
takes its hk route only when the same specialization (its `key`: the op and what selects its
kernel) was launched before in this process, outside capture; otherwise the engine's own kernel
serves it (counted as "engine:capture"). Engines warm up eagerly at every captured size before
capturing, so in practice every captured call finds its kernel loaded.
"""

import threading

_lock = threading.Lock()
_launched = set()


def capturing():
    """Whether the current stream is capturing a CUDA (HIP) graph."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_current_stream_capturing())


def allowed(key):
    """Whether a call of specialization `key` may take its hk route now."""
    if not capturing():
        return True
    with _lock:
        return key in _launched


def launched(key):
    """Records that `key` ran outside capture (its kernel is compiled and loaded)."""
    if not capturing():
        with _lock:
            _launched.add(key)


def reset():
    with _lock:
        _launched.clear()
