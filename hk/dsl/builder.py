"""The tracing state: the MLIR module being built and where the next operation goes.

Every DSL call that emits an operation goes through `current()`; the operation is located at
the user's file:line:col, so the passes' diagnostics point at the kernel's source.
"""

import contextlib
import threading

from hk.errors import TraceError, frame_column, user_frame

_state = threading.local()


def current():
    """The Builder of the kernel being traced; TraceError outside a kernel."""
    builder = getattr(_state, "builder", None)
    if builder is None:
        raise TraceError("this hk operation can only be used inside an @hk.kernel or @hk.func "
                         "while it is traced", hint="call it from the body of a kernel")
    return builder


def tracing():
    return getattr(_state, "builder", None) is not None


class Builder:
    """Builds one kernel's module with the hk._mlir bindings."""

    def __init__(self, ir, dialects, arch=None):
        self.ir = ir
        self.arch = arch  # the target being traced for
        self.d = dialects  # namespace: hk, arith, func, scf
        self.context = ir.Context()
        self.module = None
        self.constants = {}
        self.block_stack = []
        self.func_depth = 0  # @hk.func calls being inlined

    # Locations -------------------------------------------------------------------------------

    def loc(self):
        """The MLIR location of the user's line that is running."""
        frame = user_frame(2)
        if frame is None:
            return self.ir.Location.unknown(self.context)
        return self.ir.Location.file(frame.f_code.co_filename, frame.f_lineno,
                                     frame_column(frame) or 1, self.context)

    # Insertion -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def insert_into(self, block):
        self.block_stack.append(block)
        try:
            with self.ir.InsertionPoint(block):
                yield
        finally:
            self.block_stack.pop()
            # Constants of a finished block do not dominate what comes after it.
            gone = id(block)
            for key in [k for k in self.constants if k[0] == gone]:
                del self.constants[key]

    def type(self, text):
        return self.ir.Type.parse(text, self.context)

    def index_constant(self, value):
        """An index constant, emitted once per enclosing block and value."""
        check_int(value, "index")
        key = (id(self.block_stack[-1]) if self.block_stack else 0, "index", value)
        cached = self.constants.get(key)
        if cached is not None:
            return cached
        with self.loc():
            result = self.d.arith.constant(self.ir.IndexType.get(self.context), value)
        self.constants[key] = result
        return result

    def constant(self, type_text, value):
        key = (id(self.block_stack[-1]) if self.block_stack else 0, type_text, value)
        cached = self.constants.get(key)
        if cached is not None:
            return cached
        with self.loc():
            t = self.type(type_text)
            if type_text in ("f32", "f16", "bf16"):
                attr = self.ir.FloatAttr.get(t, float(value))
            else:
                check_int(value, type_text)
                attr = self.ir.IntegerAttr.get(t, int(value))
            result = self.d.arith.constant(t, attr)
        self.constants[key] = result
        return result


# Compiled code holds index and i32 scalars in 32 bits; a wider constant would wrap there and not
# on the interpreter.
_INT_RANGES = {"index": (-2 ** 31, 2 ** 31 - 1), "i32": (-2 ** 31, 2 ** 31 - 1), "i8": (-128, 127),
               "i1": (0, 1), "i64": (-2 ** 63, 2 ** 63 - 1)}


def check_int(value, type_text):
    lo, hi = _INT_RANGES.get(type_text, (None, None))
    if lo is not None and not lo <= int(value) <= hi:
        raise TraceError("the constant %d does not fit %s (%d .. %d)"
                         % (value, "a 32-bit int" if type_text in ("index", "i32") else type_text, lo, hi),
                         hint="kernel integers are 32-bit; compute with smaller values or in floats")


@contextlib.contextmanager
def active(builder):
    previous = getattr(_state, "builder", None)
    _state.builder = builder
    try:
        with builder.context:
            yield builder
    finally:
        _state.builder = previous
