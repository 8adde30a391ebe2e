"""@hk.func: device functions, inlined into the kernel that calls them while it is traced.

    @hk.func
    def scaled_silu(t, scale):
        return hk.math.silu(t) * scale

    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = scaled_silu(x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)), 0.5)

A function's body goes through the same rewrite as a kernel's, so its `for`, `if` and `while`
on device values become structured control flow, and its operations point at its own lines.
It takes and returns anything Python can pass: tiles, scalars, shared tiles, numbers.
"""

import functools

from hk.dsl import builder as _b
from hk.dsl import rewrite
from hk.errors import Location, TraceError

# Deeper than any real call chain; a function that calls itself on a device condition would
# otherwise recurse until Python gives up.
_MAX_DEPTH = 64


class Func:
    """A device function: called from a kernel being traced, it emits its body in place."""

    def __init__(self, fn):
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise TraceError("@hk.func decorates a Python function, not %r" % (fn,))
        rewrite.refuse_generators(fn, "@hk.func")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._body = None

    def __call__(self, *args, **kwargs):
        if not _b.tracing():
            raise TraceError("%s is an @hk.func: it runs only inside a kernel being traced"
                             % self.fn.__name__, location=Location.of_function(self.fn),
                             hint="call it from an @hk.kernel (or another @hk.func)")
        b = _b.current()
        if b.func_depth >= _MAX_DEPTH:
            raise TraceError("%s calls itself more than %d deep; @hk.func bodies are inlined, so "
                             "recursion must end on a Python value" % (self.fn.__name__, _MAX_DEPTH),
                             location=Location.of_function(self.fn),
                             hint="turn the recursion into an hk.range loop")
        if self._body is None:
            self._body = rewrite.rewrite(self.fn)
        b.func_depth += 1
        try:
            return self._body(*args, **kwargs)
        finally:
            b.func_depth -= 1

    def __repr__(self):
        return "<hk.func %s>" % self.fn.__qualname__


def func(fn=None):
    """Marks `fn` as a device function; `@hk.func` and `@hk.func()` both work."""
    if fn is None:
        return func
    return Func(fn)
