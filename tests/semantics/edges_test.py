"""One semantics (docs/semantics.md): every edge computed by the interpreter and, compiled, by the
emulator on gfx1100 and gfx950, compared bit for bit with each other and with the answer written
out here: memory outside every side of every dimension, casts that saturate or meet NaN, integer
overflow and division by zero, 32-bit scalars, float scalars rounded to fp32, correctly rounded
sqrt and division, hk.rand's draws rounded, NaN in max/min."""

import math
import struct

import pytest
import torch

import hk
from hk.errors import LaunchError
from hk.interp import philox

ARCHS = ["gfx1100", "gfx950"]
T = hk.RT(hk.fp32, 16, 16)
INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1


def run(monkeypatch, arch, kernel, make_args, calls=({},)):
    """The arguments after a run on the interpreter and after one on the emulator (a run is one
    call per entry of `calls`, the kernel's constants)."""
    results = []
    for device in ("interp", "emu"):
        monkeypatch.setenv("HK_DEVICE", device)
        monkeypatch.setenv("HK_ARCH", arch)
        args = make_args()
        for constants in calls:
            kernel(*args, **constants)
        results.append(args)
    return results


def same_bits(a, b):
    """Bitwise equality, every NaN equal to every NaN."""
    if a.is_floating_point():
        nan = torch.isnan(a.float()) & torch.isnan(b.float())
        width = {1: torch.int8, 2: torch.int16, 4: torch.int32}[a.element_size()]
        return bool((nan | (a.view(width) == b.view(width))).all())
    return torch.equal(a, b)


def check(results, index, expected):
    interp, emu = results[0][index], results[1][index]
    assert same_bits(interp, emu), "interpreter and emulator differ:\n%s\n%s" % (interp, emu)
    assert same_bits(interp, expected), "both differ from the expected answer:\n%s\n%s" % (interp, expected)


# Memory outside the tensor ---------------------------------------------------------------------

# Coordinates on both sides of every dimension of a (2, 2, 20, 24) tensor, in tiles of 16 x 16.
# A tile's first row is r * 16 in 32 bits: INT_MAX tiles start at -16 (outside), INT_MIN at 0.
# Before the first slice's first row or column an address would lie before the allocation.
EDGES = [(0, 0, 0, 0), (-1, 0, 0, 0), (2, 0, 0, 0), (0, -1, 0, 0), (0, 2, 0, 0), (1, 1, -1, 0),
         (1, 1, 1, 0), (1, 1, 2, 0), (1, 0, 0, -1), (1, 0, 0, 1), (1, 0, 0, 2), (0, 1, 1, 1),
         (1, 0, 2 ** 31 - 1, 0), (0, 0, 1, -2 ** 31), (0, 0, -1, 0), (0, 0, 0, -1)]


def tile_at(x, coord, rows=16, cols=16):
    """What a load of the tile at `coord` reads: zeros outside the tensor, on every side."""
    out = torch.zeros(rows, cols, dtype=x.dtype)
    b, d, r, c = coord
    for i in range(rows):
        for j in range(cols):
            rr, cc = wrap(r * rows) + i, wrap(c * cols) + j
            if 0 <= b < x.shape[0] and 0 <= d < x.shape[1] and 0 <= rr < x.shape[2] and 0 <= cc < x.shape[3]:
                out[i, j] = x[b, d, rr, cc]
    return out


@hk.kernel(grid=(1,))
def tile_edges(x: hk.Tensor[hk.bf16], loads: hk.Tensor[hk.bf16], stores: hk.Tensor[hk.bf16], *, HALF=0):
    # Half of the edges per call: all 48 constant-address accesses at once outgrow gfx950's SGPRs.
    for k, (b, d, r, c) in enumerate(EDGES[HALF::2]):
        k = 2 * k + HALF
        t = x[b, d, r, c].load(hk.RT(hk.bf16, 16, 16))
        loads[k, 0, 0, 0] = t
        stores[b, d, r, c] = t + 1.0


@pytest.mark.parametrize("arch", ARCHS)
def test_tiles_outside_every_side_read_zero_and_are_not_written(monkeypatch, arch):
    x = (torch.arange(2 * 2 * 20 * 24) % 97).reshape(2, 2, 20, 24).to(torch.bfloat16)
    make = lambda: (x.clone(), torch.full((len(EDGES), 1, 16, 16), 5.0, dtype=torch.bfloat16),
                    torch.full((2, 2, 20, 24), -3.0, dtype=torch.bfloat16))
    results = run(monkeypatch, arch, tile_edges, make, calls=({"HALF": 0}, {"HALF": 1}))
    check(results, 1, torch.stack([tile_at(x, c) for c in EDGES]).unsqueeze(1))
    stores = torch.full((2, 2, 20, 24), -3.0, dtype=torch.bfloat16)
    for b, d, r, c in EDGES:  # what lies inside the tensor is written, nothing else
        tile = (tile_at(x, (b, d, r, c)).float() + 1.0).to(torch.bfloat16)
        for i in range(16):
            for j in range(16):
                rr, cc = wrap(r * 16) + i, wrap(c * 16) + j
                if 0 <= b < 2 and 0 <= d < 2 and 0 <= rr < 20 and 0 <= cc < 24:
                    stores[b, d, rr, cc] = tile[i, j]
    check(results, 2, stores)


@hk.kernel(grid=(1,))
def vector_and_copy_edges(x: hk.Tensor[hk.fp32], vecs: hk.Tensor[hk.fp32], copies: hk.Tensor[hk.fp32]):
    shared = hk.lds.alloc(hk.ST(hk.fp32, 16, 16))
    for k, (b, d, r, c) in enumerate(EDGES):
        vecs[0, 0, k, 0] = x[b, d, r, c].load(hk.RV(hk.fp32, 16, "row"))
        hk.lds.copy_to(shared, 0, x, hk.tile_coord(b, d, r, c))
        hk.arch.barrier()
        copies[k, 0, 0, 0] = shared[0].load(T)
        hk.arch.barrier()


@pytest.mark.parametrize("arch", ARCHS)
def test_vectors_and_workgroup_copies_outside_every_side_read_zero(monkeypatch, arch):
    x = torch.randint(-50, 50, (2, 2, 20, 24)).float()
    make = lambda: (x.clone(), torch.full((len(EDGES), 16), 9.0), torch.full((len(EDGES), 1, 16, 16), 9.0))
    results = run(monkeypatch, arch, vector_and_copy_edges, make)
    # A vector of 16 is row r, columns 16c .. 16c + 15: a 1 x 16 tile at row r.
    vecs = torch.stack([tile_at(x[:, :, r:r + 1], (b, d, 0, c), 1, 16)[0] if 0 <= r < 20 else torch.zeros(16)
                        for b, d, r, c in EDGES])
    check(results, 1, vecs)
    check(results, 2, torch.stack([tile_at(x, c) for c in EDGES]).unsqueeze(1))


@hk.kernel(grid=(1,))
def rows_by_index(table: hk.Tensor[hk.i32], ids: hk.Tensor[hk.i32], got: hk.Tensor[hk.i32],
                  cache: hk.Tensor[hk.i32]):
    rows = ids[0, 0, 0, 0].load(hk.RV(hk.i32, 16, "col"))
    for k, (b, c) in enumerate([(0, 0), (1, 0), (-1, 0), (2, 0), (0, 1), (0, -1), (1, 2)]):
        t = hk.gather(table, hk.tile_coord(b, 0, 0, c), rows, hk.RT(hk.i32, 16, 16))
        got[k, 0, 0, 0] = t
        hk.scatter(cache, hk.tile_coord(b, 0, 0, c), rows, t + 1000)


@pytest.mark.parametrize("arch", ARCHS)
def test_gather_and_scatter_outside_every_side(monkeypatch, arch):
    table = torch.arange(2 * 30 * 24, dtype=torch.int32).reshape(2, 30, 24)
    ids = torch.tensor([0, 29, 30, -1, 5, 2 ** 31 - 1, -2 ** 31, 7, 1, 2, 3, 4, 28, 31, 6, 8], dtype=torch.int32)
    make = lambda: (table.clone(), ids.clone(), torch.full((7, 16, 16), -7, dtype=torch.int32),
                    torch.full((2, 30, 24), -7, dtype=torch.int32))
    results = run(monkeypatch, arch, rows_by_index, make)
    coords = [(0, 0), (1, 0), (-1, 0), (2, 0), (0, 1), (0, -1), (1, 2)]
    got = torch.zeros(7, 16, 16, dtype=torch.int32)
    cache = torch.full((2, 30, 24), -7, dtype=torch.int32)
    for k, (b, c) in enumerate(coords):
        for i, rid in enumerate(ids.tolist()):
            for j in range(16):
                col = c * 16 + j
                if 0 <= b < 2 and 0 <= rid < 30 and 0 <= col < 24:
                    got[k, i, j] = table[b, rid, col]
                    cache[b, rid, col] = got[k, i, j] + 1000
    check(results, 2, got)
    check(results, 3, cache)


@hk.kernel(grid=(1,))
def element_edges(x: hk.Tensor[hk.fp32], got: hk.Tensor[hk.fp32], dst: hk.Tensor[hk.fp32],
                  counts: hk.Tensor[hk.i32], b: int, d: int, r: int, c: int):
    v = x.load_scalar(b, d, r, c)
    got.store_scalar(0, 0, 0, 0, v)
    dst.store_scalar(b, d, r, c, 42.0)
    counts.atomic_add(b, d, r, c, 1)


ELEMENT_EDGES = [(0, 0, 0, 0), (1, 1, 4, 5), (-1, 0, 0, 0), (2, 0, 0, 0), (0, -1, 0, 0), (0, 2, 0, 0),
                 (0, 0, -1, 0), (0, 0, 5, 0), (0, 0, 0, -1), (0, 0, 0, 6), (INT_MAX, 0, 0, 0),
                 (0, 0, INT_MIN, 0), (0, 0, 0, INT_MAX)]


@pytest.mark.parametrize("arch", ARCHS)
def test_single_elements_outside_every_side(monkeypatch, arch):
    x = torch.arange(2 * 2 * 5 * 6).float().reshape(2, 2, 5, 6) + 1.0
    for b, d, r, c in ELEMENT_EDGES:
        make = lambda: (x.clone(), torch.full((1,), -1.0), torch.zeros(2, 2, 5, 6),
                        torch.zeros(2, 2, 5, 6, dtype=torch.int32), b, d, r, c)
        results = run(monkeypatch, arch, element_edges, make)
        inside = 0 <= b < 2 and 0 <= d < 2 and 0 <= r < 5 and 0 <= c < 6
        check(results, 1, torch.tensor([x[b, d, r, c].item() if inside else 0.0]))
        dst, counts = torch.zeros(2, 2, 5, 6), torch.zeros(2, 2, 5, 6, dtype=torch.int32)
        if inside:
            dst[b, d, r, c], counts[b, d, r, c] = 42.0, 1
        check(results, 2, dst)
        check(results, 3, counts)


@hk.kernel(grid=lambda p: (p.n,))
def empty_or_not(e: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], n: int):
    o[0, 0, 0, 0] = e[0, 0, 0, 0].load(T)


def test_an_empty_tensor_is_refused_when_workgroups_run_and_fine_when_none_do(monkeypatch):
    for device in ("interp", "emu"):
        monkeypatch.setenv("HK_DEVICE", device)
        with pytest.raises(LaunchError, match="argument 'e' has no elements but the grid"):
            empty_or_not(torch.zeros(0, 16), torch.zeros(16, 16), 1)
        empty_or_not(torch.zeros(0, 16), torch.zeros(16, 16), 0)  # an empty grid runs nothing


# Casts ---------------------------------------------------------------------------------------

SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 127.5, -128.5, 300.0, -300.0, 2.0 ** 31, -2.0 ** 31,
           2.0 ** 31 - 128, 3e9, -3e9, 1e20, -1e20, math.inf, -math.inf, math.nan, 448.0, 464.0,
           480.0, 57344.0, 61440.0, 65504.0, 65520.0, 1e-8, -1e-45, 3.4e38]


@hk.kernel(grid=(1,))
def casts(x: hk.Tensor[hk.fp32], i32: hk.Tensor[hk.i32], i8: hk.Tensor[hk.i8], e4: hk.Tensor[hk.fp8e4m3],
          e5: hk.Tensor[hk.fp8e5m2], h: hk.Tensor[hk.fp16], b: hk.Tensor[hk.bf16], n8: hk.Tensor[hk.i8],
          s: hk.Tensor[hk.i32]):
    t = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))
    i32[0, 0, 0, 0] = t.to(hk.i32)
    i8[0, 0, 0, 0] = t.to(hk.i8)
    e4[0, 0, 0, 0] = t.to(hk.fp8e4m3)
    e5[0, 0, 0, 0] = t.to(hk.fp8e5m2)
    h[0, 0, 0, 0] = t.to(hk.fp16)
    b[0, 0, 0, 0] = t.to(hk.bf16)
    n8[0, 0, 0, 0] = t.to(hk.i32).to(hk.i8)        # int -> narrower int saturates too
    for k in range(len(SPECIAL)):                    # and a float scalar converts like a tile
        s.store_scalar(0, 0, 0, k, x.load_scalar(0, 0, 0, k).to(hk.i32))


def to_int(v, lo, hi):
    if v != v:
        return 0
    return int(max(lo, min(hi, math.trunc(v)))) if math.isfinite(v) else (hi if v > 0 else lo)


def to_fp8(v, dtype, top):
    if v != v:
        return math.nan
    if math.isinf(v):
        return v if dtype is torch.float8_e5m2 else math.nan  # e4m3fn has no infinity
    return float(torch.tensor(max(-top, min(top, v))).to(dtype).float())


@pytest.mark.parametrize("arch", ARCHS)
def test_casts_saturate_and_send_nan_to_zero(monkeypatch, arch):
    x = torch.zeros(16, 32)
    x[0, :len(SPECIAL)] = torch.tensor(SPECIAL)
    outs = [torch.int32, torch.int8, torch.float8_e4m3fn, torch.float8_e5m2, torch.float16, torch.bfloat16, torch.int8]
    make = lambda: [x.clone()] + [torch.zeros(16, 32, dtype=d) for d in outs] + [torch.zeros(len(SPECIAL), dtype=torch.int32)]
    results = run(monkeypatch, arch, casts, make)
    f = x[0].tolist()
    row = lambda values, dtype: torch.tensor(values, dtype=torch.float64).to(dtype)
    rows = {1: row([to_int(v, INT_MIN, INT_MAX) for v in f], torch.int32),
            2: row([to_int(v, -128, 127) for v in f], torch.int8),
            3: torch.tensor([to_fp8(v, torch.float8_e4m3fn, 448.0) for v in f]).to(torch.float8_e4m3fn),
            4: torch.tensor([to_fp8(v, torch.float8_e5m2, 57344.0) for v in f]).to(torch.float8_e5m2),
            5: torch.tensor(f).to(torch.float16), 6: torch.tensor(f).to(torch.bfloat16),
            7: row([max(-128, min(127, to_int(v, INT_MIN, INT_MAX))) for v in f], torch.int8)}
    for index, expected_row in rows.items():
        expected = torch.zeros(16, 32, dtype=expected_row.dtype)
        expected[0] = expected_row
        check(results, index, expected)
    check(results, 8, torch.tensor([to_int(v, INT_MIN, INT_MAX) for v in SPECIAL], dtype=torch.int32))


# Integers ------------------------------------------------------------------------------------

def wrap(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def c_div(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return wrap(q)


def c_rem(a, b):
    return a if b == 0 else wrap(a - c_div(a, b) * b) if b != -1 else 0


def c_ceil(a, b):
    if b == 0:
        return 0
    q, r = c_div(a, b), c_rem(a, b)
    return wrap(q + 1) if r != 0 and (r < 0) == (b < 0) else q


SCALAR_OPS = [
    ("a + b", lambda a, b: wrap(a + b)), ("a - b", lambda a, b: wrap(a - b)),
    ("a * b", lambda a, b: wrap(a * b)), ("a // b", c_div), ("a % b", c_rem),
    ("hk.cdiv(a, b)", c_ceil), ("a << b", lambda a, b: wrap(a << (b & 31))),
    ("a >> b", lambda a, b: a >> (b & 31)), ("hk.maximum(a, b)", max), ("hk.minimum(a, b)", min),
    ("(a < b).to(hk.i32)", lambda a, b: int(a < b)),
]


def scalar_kernel():
    lines = ["def scalars(o: hk.Tensor[hk.i32], f: hk.Tensor[hk.fp32], a: int, b: int, x: float):"]
    for k, (expr, _) in enumerate(SCALAR_OPS):
        lines.append("    o.store_scalar(0, 0, 0, %d, %s)" % (k, expr))
    lines.append("    f.store_scalar(0, 0, 0, 0, x)")
    lines.append("    f.store_scalar(0, 0, 0, 1, a.to(hk.fp32))")
    namespace = {"hk": hk}
    exec(compile("\n".join(lines), __file__, "exec"), namespace)  # noqa: S102 - the table above
    return hk.kernel(namespace["scalars"], grid=(1,))


SCALARS = scalar_kernel()
PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (-5, 0), (INT_MIN, -1), (INT_MAX, 1),
         (INT_MAX, INT_MAX), (INT_MIN, INT_MIN), (1, 31), (1, 32), (1, 33), (-1, -1), (3, -3), (0, 0)]


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


@pytest.mark.parametrize("arch", ARCHS)
def test_integer_scalars_wrap_and_divide_by_zero_to_zero(monkeypatch, arch):
    for a, b in PAIRS:
        x = 0.1 * a
        make = lambda: (torch.zeros(len(SCALAR_OPS), dtype=torch.int32), torch.zeros(2), a, b, x)
        results = run(monkeypatch, arch, SCALARS, make)
        check(results, 0, torch.tensor([fn(a, b) for _, fn in SCALAR_OPS], dtype=torch.int32))
        # A float argument is an fp32 (rounded once), an int converts with rounding to nearest.
        check(results, 1, torch.tensor([f32(x), f32(float(a))]))


@hk.kernel(grid=(1,))
def int_tiles(a: hk.Tensor[hk.i32], b: hk.Tensor[hk.i32], n: hk.Tensor[hk.i8], m: hk.Tensor[hk.i8],
              o: hk.Tensor[hk.i32], o8: hk.Tensor[hk.i8]):
    x, y = a[0, 0, 0, 0].load(hk.RT(hk.i32, 16, 16)), b[0, 0, 0, 0].load(hk.RT(hk.i32, 16, 16))
    o[0, 0, 0, 0] = x + y
    o[1, 0, 0, 0] = x * y
    o[2, 0, 0, 0] = x / y
    o[3, 0, 0, 0] = x - 2147483647
    o[4, 0, 0, 0] = -x
    v = n[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 16))
    o8[0, 0, 0, 0] = v * 3
    o8[1, 0, 0, 0] = v - 2147483647             # computed in 32 bits (wrapping), then saturated
    o8[2, 0, 0, 0] = hk.math.abs(v)
    w = m[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 16))   # i8 + i8 saturates: 16-bit adds with clamp
    o8[3, 0, 0, 0] = v + w
    o8[4, 0, 0, 0] = v - w
    o8[5, 0, 0, 0] = v + 127


@pytest.mark.parametrize("arch", ARCHS)
def test_integer_tiles_wrap_i8_saturates_and_division_by_zero_is_zero(monkeypatch, arch):
    g = torch.Generator().manual_seed(3)
    a = torch.randint(INT_MIN, INT_MAX, (16, 16), generator=g, dtype=torch.int64)
    b = torch.randint(-3, 4, (16, 16), generator=g, dtype=torch.int64)
    a[0, :4], b[0, :4] = torch.tensor([INT_MIN, INT_MIN, 7, INT_MAX]), torch.tensor([-1, 0, 0, INT_MAX])
    n = torch.arange(-128, 128, dtype=torch.int64).reshape(16, 16)
    m = n.t().contiguous()               # every pair from (-128, -128) to (127, 127), both ways
    make = lambda: (a.to(torch.int32), b.to(torch.int32), n.to(torch.int8), m.to(torch.int8),
                    torch.zeros(5, 16, 16, dtype=torch.int32), torch.zeros(6, 16, 16, dtype=torch.int8))
    results = run(monkeypatch, arch, int_tiles, make)
    w = lambda t: torch.tensor([[wrap(v) for v in row] for row in t.tolist()], dtype=torch.int32)
    q = torch.tensor([[c_div(x, y) for x, y in zip(r, s)] for r, s in zip(a.tolist(), b.tolist())], dtype=torch.int32)
    check(results, 4, torch.stack([w(a + b), w(a * b), q, w(a - INT_MAX), w(-a)]))
    sat = lambda t: torch.clamp(t, -128, 127).to(torch.int8)
    check(results, 5, torch.stack([sat(n * 3), sat(w(n - INT_MAX).long()), sat(n.abs()), sat(n + m), sat(n - m),
                                   sat(n + 127)]))


def test_an_int_beyond_32_bits_is_refused_on_every_runner(monkeypatch):
    for device in ("interp", "emu"):
        monkeypatch.setenv("HK_DEVICE", device)
        with pytest.raises(LaunchError, match="does not fit the kernel's 32-bit int"):
            SCALARS(torch.zeros(len(SCALAR_OPS), dtype=torch.int32), torch.zeros(2), 2 ** 31, 1, 0.0)


# Correctly rounded: sqrt, division, hk.rand's draws ----------------------------------------------

# Products of the dyadics the fuzzer draws (9.28125 = 2.75 * 3.375), inputs the compiled sqrt
# scales first (below 2^-96), denormals, the largest float, and what has no square root.
ROUNDING_EDGES = [9.28125, 2.0, 0.5, 3.0, 2.0 ** -100, 1e-30, 3e-39, 1e-45, 1e30, 3.4e38, 0.0, -0.0,
                  math.inf, -1.0, math.nan, 7.0]


@hk.kernel(grid=(1,))
def rounded_ops(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    a, b = x[0, 0, 0, 0].load(T), y[0, 0, 0, 0].load(T)
    o[0, 0, 0, 0] = hk.math.sqrt(a)
    o[1, 0, 0, 0] = a / b


@pytest.mark.parametrize("arch", ARCHS)
def test_sqrt_and_division_are_correctly_rounded(monkeypatch, arch):
    g = torch.Generator().manual_seed(4)
    dyadic = lambda: torch.randint(-31, 32, (16, 16), generator=g).float() / 8.0
    x, y = (dyadic() * dyadic()).abs(), dyadic()
    x[0], y[0] = torch.tensor(ROUNDING_EDGES), torch.tensor(ROUNDING_EDGES).flip(0)
    results = run(monkeypatch, arch, rounded_ops, lambda: (x.clone(), y.clone(), torch.zeros(2, 16, 16)))
    # In float64 and then rounded to fp32: one rounding's worth, as sqrt and / of fp32 are
    # correctly rounded at double the precision.
    check(results, 2, torch.stack([x.double().sqrt().float(), (x.double() / y.double()).float()]))


def test_the_interpreters_sqrt_is_correctly_rounded_whatever_the_cpu():
    # torch's own fp32 sqrt is an ulp off for many inputs on some CPUs (AVX-512): the
    # interpreter must not inherit that.
    from hk import types
    from hk.interp import semantics

    g = torch.Generator().manual_seed(7)
    x = torch.rand(100_000, generator=g) * 100.0
    exact = x.double().sqrt().float()
    assert same_bits(semantics.unary("sqrt", x, types.fp32), exact)
    assert same_bits(semantics.unary("sqrt", x.bfloat16(), types.bf16), x.bfloat16().double().sqrt().float().bfloat16())


@hk.kernel(grid=(1,))
def rand_then_add(o: hk.Tensor[hk.fp32]):
    offsets = hk.iota(hk.RT(hk.fp32, 32, 32), "col") + hk.iota(hk.RT(hk.fp32, 32, 32), "row") * 32
    o[0, 0, 0, 0] = hk.rand(47, offsets) + 1.625     # each draw used once, as an fma could take it
    o[1, 0, 0, 0] = hk.rand(61, offsets) - 1.25


@pytest.mark.parametrize("arch", ARCHS)
def test_a_draw_is_rounded_before_what_uses_it(monkeypatch, arch):
    # hk.rand's value is tl.rand's, rounded: its scaling is not fused into an fma with the add
    # after it (which moved 5% of the sums by an ulp).
    results = run(monkeypatch, arch, rand_then_add, lambda: (torch.zeros(2, 32, 32),))
    draw = lambda seed: philox.uniform(seed, torch.arange(32 * 32, dtype=torch.int32)).reshape(32, 32)
    check(results, 0, torch.stack([draw(47) + 1.625, draw(61) - 1.25]))


# NaN in max and min --------------------------------------------------------------------------

@hk.kernel(grid=(1,))
def nan_extremes(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], v: hk.Tensor[hk.fp32]):
    a, b = x[0, 0, 0, 0].load(T), y[0, 0, 0, 0].load(T)
    o[0, 0, 0, 0] = hk.maximum(a, b)
    o[1, 0, 0, 0] = hk.minimum(a, b)
    v[0, 0, 0, 0] = hk.row_max(a)
    v[0, 0, 1, 0] = hk.col_min(a)


@pytest.mark.parametrize("arch", ARCHS)
def test_max_and_min_ignore_a_nan_operand(monkeypatch, arch):
    x = torch.randn(16, 16, generator=torch.Generator().manual_seed(1))
    y = torch.randn(16, 16, generator=torch.Generator().manual_seed(2))
    x[0, :3], y[0, :3] = torch.tensor([math.nan, 1.0, math.nan]), torch.tensor([2.0, math.nan, math.nan])
    x[5, :] = math.nan                     # a row of NaN: its max is NaN
    make = lambda: (x.clone(), y.clone(), torch.zeros(2, 16, 16), torch.zeros(2, 16))
    results = run(monkeypatch, arch, nan_extremes, make)
    check(results, 2, torch.stack([torch.fmax(x, y), torch.fmin(x, y)]))
    no_nan = lambda t, fill: torch.where(torch.isnan(t), torch.full_like(t, fill), t)
    rmax = no_nan(x, -math.inf).amax(1)
    rmax[5] = math.nan
    cmin = no_nan(x, math.inf).amin(0)
    check(results, 3, torch.stack([rmax, cmin]))


# fp32 -> bf16: to nearest even, NaN stays NaN ---------------------------------------------------

# As bit patterns: ties to even both ways, just off the tie, the largest finite values (which
# round to infinity), subnormals, signed zeros, and NaNs whose payload would carry into the
# exponent or the sign under a plain "add half and truncate".
BF16_EDGES = [0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x7F7FFFFF, 0x7F7F7FFF, 0xFF7FFFFF,
              0x7F800000, 0xFF800000, 0x00008000, 0x00018000, 0x80000001, 0x00000000, 0x80000000,
              0x7FC00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x7F800001, 0x7FFF8000, 0xFF800001, 0x7FBFFFFF]


@hk.kernel(grid=(1,))
def to_bf16(x: hk.Tensor[hk.fp32], b: hk.Tensor[hk.bf16]):
    b[0, 0, 0, 0] = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32)).to(hk.bf16)


@pytest.mark.parametrize("arch", ARCHS)
def test_bf16_rounds_to_nearest_even_and_keeps_nan(monkeypatch, arch):
    x = torch.zeros(16, 32)
    bits = torch.tensor([v - 2 ** 32 if v >= 2 ** 31 else v for v in BF16_EDGES], dtype=torch.int32)
    x[0, :len(BF16_EDGES)] = bits.view(torch.float32)
    results = run(monkeypatch, arch, to_bf16, lambda: (x.clone(), torch.zeros(16, 32, dtype=torch.bfloat16)))
    check(results, 1, x.to(torch.bfloat16))
    for got in (results[0][1], results[1][1]):
        nan = torch.isnan(got[0, :len(BF16_EDGES)].float())
        assert nan.tolist() == torch.isnan(x[0, :len(BF16_EDGES)]).tolist(), got[0]


@hk.kernel(grid=(1,))
def accumulator_to_bf16_operand(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    # An accumulator (x + 0·0) to the bf16 B operand of an mma in col layout, as attention's P:
    # on gfx11 its own conversion path (rounded words packed by v_perm_b32).
    acc = hk.mma_ABt(hk.zeros(hk.RT(hk.bf16, 16, 16)), hk.zeros(hk.RT(hk.bf16, 16, 16)),
                     x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16)))
    p = acc.to(hk.bf16, "col")
    o[0, 0, 0, 0] = p
    c[0, 0, 0, 0] = hk.mma_AB(hk.zeros(hk.RT(hk.bf16, 16, 16)), p, hk.zeros(hk.RT(hk.fp32, 16, 16)))


@pytest.mark.parametrize("arch", ARCHS)
def test_an_accumulator_rounds_to_a_bf16_operand_to_nearest_even(monkeypatch, arch):
    # Zeros lose their sign in x + 0·0; every other edge is kept.
    edges = [v for v in BF16_EDGES if v & 0x7FFFFFFF]
    bits = torch.tensor([v - 2 ** 32 if v >= 2 ** 31 else v for v in edges], dtype=torch.int32)
    x = torch.randn(16, 16, generator=torch.Generator().manual_seed(3))
    x.view(-1)[:len(edges)] = bits.view(torch.float32)
    results = run(monkeypatch, arch, accumulator_to_bf16_operand,
                  lambda: (x.clone(), torch.zeros(16, 16, dtype=torch.bfloat16), torch.zeros(16, 16)))
    check(results, 1, x.to(torch.bfloat16))
    for got in (results[0][1], results[1][1]):
        assert torch.equal(torch.isnan(got.float()), torch.isnan(x)), got
