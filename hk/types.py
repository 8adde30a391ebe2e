"""The dtypes and the tile, vector and tensor types a kernel is written in.

    hk.Tensor[hk.bf16]            a kernel parameter: a tensor in global memory (4-D view)
    hk.RT(hk.bf16, 16, 64)        a register tile owned by one wave (layout "row" or "col")
    hk.RV(hk.fp32, 16, "col")     a register vector: one element per row ("col") or column ("row")
    hk.ST(hk.bf16, 64, 64, 2)     a shared (LDS) tile with 2 buffers
    hk.SV(hk.fp32, 64)            a shared vector
"""

import dataclasses

from hk.errors import TraceError


@dataclasses.dataclass(frozen=True)
class DType:
    """An element type: its hk name, its MLIR spelling and its size."""

    name: str
    mlir: str
    bits: int
    is_float: bool
    torch_name: str

    def __repr__(self):
        return "hk." + self.name

    @property
    def bytes(self):
        return max(1, self.bits // 8)

    @property
    def is_operand(self):
        """A matrix operand type (16- and 8-bit): its register tiles are laid out as the matrix
        cores read operands, a row in each lane for "row" (every other type's "row" holds a
        column in each lane, as the accumulator does)."""
        return self.bits in (8, 16)

    @property
    def wide(self):
        """The 32-bit type that holds every value of this one exactly."""
        return fp32 if self.is_float else i32


bf16 = DType("bf16", "bf16", 16, True, "bfloat16")
fp16 = DType("fp16", "f16", 16, True, "float16")
fp32 = DType("fp32", "f32", 32, True, "float32")
i32 = DType("i32", "i32", 32, False, "int32")
i8 = DType("i8", "i8", 8, False, "int8")
fp8e4m3 = DType("fp8e4m3", "f8E4M3FN", 8, True, "float8_e4m3fn")
fp8e5m2 = DType("fp8e5m2", "f8E5M2", 8, True, "float8_e5m2")
# The FNUZ variants (gfx942's matrix cores): bias one larger, no infinities, no negative zero,
# one NaN (0x80); torch.float8_e4m3fnuz / float8_e5m2fnuz.
fp8e4m3fnuz = DType("fp8e4m3fnuz", "f8E4M3FNUZ", 8, True, "float8_e4m3fnuz")
fp8e5m2fnuz = DType("fp8e5m2fnuz", "f8E5M2FNUZ", 8, True, "float8_e5m2fnuz")
mask = DType("mask", "i1", 1, False, "bool")

DTYPES = (bf16, fp16, fp32, i32, i8, fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz)
FP8 = (fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz)
FNUZ = (fp8e4m3fnuz, fp8e5m2fnuz)
_BY_MLIR = {d.mlir: d for d in DTYPES + (mask,)}
_BY_TORCH = {d.torch_name: d for d in DTYPES + (mask,)}


def from_mlir(name):
    return _BY_MLIR[name]


def from_torch(dtype):
    """The hk dtype of a torch dtype, or None."""
    return _BY_TORCH.get(str(dtype).replace("torch.", ""))


def _check_dtype(dtype, what):
    if not isinstance(dtype, DType) or dtype is mask:
        raise TraceError("%s needs an hk dtype (hk.bf16, hk.fp16, hk.fp32, hk.i32, hk.i8, "
                         "hk.fp8e4m3, hk.fp8e5m2, hk.fp8e4m3fnuz, hk.fp8e5m2fnuz) but got %r" % (what, dtype),
                         hint="there are no bool, 64-bit or unsigned element types: keep masks and "
                              "flags as hk.i8 or hk.i32, indices as hk.i32")


def _check_tile_dim(n, what):
    if not isinstance(n, int) or n <= 0 or n % 16:
        raise TraceError("%s must be a positive multiple of 16 but got %r" % (what, n),
                         hint="register and shared tiles are made of 16x16 base tiles")


class _TensorAnnotation(type):
    def __getitem__(cls, dtype):
        _check_dtype(dtype, "hk.Tensor[...]")
        return TensorType(dtype)


class Tensor(metaclass=_TensorAnnotation):
    """`hk.Tensor[dtype]` annotates a kernel parameter that is a tensor in global memory.

    Inside the kernel it is a 4-D view (batch, depth, rows, cols) with runtime extents; see
    view4d for how a torch tensor of 1 to 4 dimensions maps onto it.
    """


# Divisors a kernel is specialized for (see divisor_of): powers of two up to this.
MAX_DIVISOR = 64


@dataclasses.dataclass(frozen=True)
class TensorType:
    """A tensor parameter; `divisor` is what its specialization knows of it (see divisor_of)."""

    dtype: DType
    divisor: int = 1

    def mlir(self):
        if self.divisor == 1:
            return "!hk.gl<%s>" % self.dtype.mlir
        return "!hk.gl<%s, div %d>" % (self.dtype.mlir, self.divisor)

    def __repr__(self):
        return "hk.Tensor[%r]" % (self.dtype,)


def divisor_of(shape, strides, data_ptr, element_size):
    """The largest power of two, up to MAX_DIVISOR, that divides a tensor's columns and every
    stride of its 4-D view and aligns its data (in elements): what a kernel specialized for the
    tensor may assume."""
    shape4, strides4 = view4d(shape), view4d_strides(strides)
    d = MAX_DIVISOR
    values = [shape4[3]] + [st for st, n in zip(strides4[:3], shape4[:3]) if n > 1]
    while d > 1 and (any(v % d for v in values) or data_ptr % (d * element_size)):
        d //= 2
    return d


@dataclasses.dataclass(frozen=True)
class RT:
    """A register tile type: `rows` x `cols` elements of `dtype`, owned by one wave."""

    dtype: DType
    rows: int
    cols: int
    layout: str = "row"

    def __post_init__(self):
        if self.dtype is not mask:
            _check_dtype(self.dtype, "hk.RT")
        _check_tile_dim(self.rows, "register tile rows")
        _check_tile_dim(self.cols, "register tile cols")
        if self.layout not in ("row", "col"):
            raise TraceError("register tile layout must be 'row' or 'col' but got %r" % (self.layout,))

    def mlir(self):
        return "!hk.rt<%s, %dx%d, %s>" % (self.dtype.mlir, self.rows, self.cols, self.layout)

    @property
    def shape(self):
        return (self.rows, self.cols)


@dataclasses.dataclass(frozen=True)
class RV:
    """A register vector type: `length` elements of `dtype`; axis "col" holds one per row."""

    dtype: DType
    length: int
    axis: str = "col"

    def __post_init__(self):
        _check_dtype(self.dtype, "hk.RV")
        _check_tile_dim(self.length, "register vector length")
        if self.axis not in ("row", "col"):
            raise TraceError("register vector axis must be 'row' or 'col' but got %r" % (self.axis,))

    def mlir(self):
        return "!hk.rv<%s, %d, %s>" % (self.dtype.mlir, self.length, self.axis)


@dataclasses.dataclass(frozen=True)
class ST:
    """A shared (LDS) tile type with `buffers` copies."""

    dtype: DType
    rows: int
    cols: int
    buffers: int = 1

    def __post_init__(self):
        _check_dtype(self.dtype, "hk.ST")
        _check_tile_dim(self.rows, "shared tile rows")
        _check_tile_dim(self.cols, "shared tile cols")
        if not isinstance(self.buffers, int) or self.buffers < 1:
            raise TraceError("a shared tile needs at least 1 buffer but got %r" % (self.buffers,))

    def mlir(self):
        return "!hk.st<%s, %dx%d, %d>" % (self.dtype.mlir, self.rows, self.cols, self.buffers)

    @property
    def bytes(self):
        return self.rows * self.cols * self.dtype.bytes * self.buffers


@dataclasses.dataclass(frozen=True)
class SV:
    """A shared (LDS) vector type with `buffers` copies."""

    dtype: DType
    length: int
    buffers: int = 1

    def __post_init__(self):
        _check_dtype(self.dtype, "hk.SV")
        _check_tile_dim(self.length, "shared vector length")
        if not isinstance(self.buffers, int) or self.buffers < 1:
            raise TraceError("a shared vector needs at least 1 buffer but got %r" % (self.buffers,))

    def mlir(self):
        return "!hk.sv<%s, %d, %d>" % (self.dtype.mlir, self.length, self.buffers)


@dataclasses.dataclass(frozen=True)
class Staged:
    """The type of a workgroup copy in flight (hk.lds.issue): a rows x cols tile of dtype held
    by every thread of the workgroup, on its way to a shared tile of the same shape."""

    dtype: DType
    rows: int
    cols: int
    transposed: bool = False  # for a shared tile of the transposed shape (hk.lds.issue(transpose=True))

    def mlir(self):
        return "!hk.staged<%s, %dx%d>" % (self.dtype.mlir, self.rows, self.cols)


def view4d(shape):
    """The (batch, depth, rows, cols) a tensor of 1 to 4 dimensions is seen as.

    [cols] -> (1, 1, 1, cols); [rows, cols] -> (1, 1, rows, cols); [batch, rows, cols] ->
    (batch, 1, rows, cols); 4-D tensors as they are.
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) == 1:
        return (1, 1, 1) + shape
    if len(shape) == 2:
        return (1, 1) + shape
    if len(shape) == 3:
        return (shape[0], 1, shape[1], shape[2])
    if len(shape) == 4:
        return shape
    raise ValueError("a tensor argument must have 1 to 4 dimensions, not %d" % len(shape))


def view4d_strides(strides):
    """The (batch, depth, row) strides, and the unit column stride, of the view view4d gives."""
    strides = tuple(int(x) for x in strides)
    if len(strides) == 3:  # [batch, rows, cols] -> (batch, 1, rows, cols)
        return (strides[0], 0, strides[1], strides[2])
    return (0,) * (4 - len(strides)) + strides


def parse_mlir_type(text):
    """The hk type spec of an MLIR type string (for the interpreter and reports)."""
    import re

    m = re.match(r"!hk\.rt<(\w+), (\d+)x(\d+), (row|col)(?:, \w+)?>", text)
    if m:
        return RT(from_mlir(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4))
    m = re.match(r"!hk\.rv<(\w+), (\d+), (row|col)>", text)
    if m:
        return RV(from_mlir(m.group(1)), int(m.group(2)), m.group(3))
    m = re.match(r"!hk\.st<(\w+), (\d+)x(\d+), (\d+)>", text)
    if m:
        return ST(from_mlir(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)))
    m = re.match(r"!hk\.sv<(\w+), (\d+), (\d+)>", text)
    if m:
        return SV(from_mlir(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = re.match(r"!hk\.gl<(\w+)(?:, div (\d+))?>", text)
    if m:
        return TensorType(from_mlir(m.group(1)), int(m.group(2) or 1))
    m = re.match(r"!hk\.staged<(\w+), (\d+)x(\d+)>", text)
    if m:
        return Staged(from_mlir(m.group(1)), int(m.group(2)), int(m.group(3)))
    return None
