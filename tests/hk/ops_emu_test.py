"""The tile library computes what the interpreter says: each group of operations runs as a DSL
kernel on the reference interpreter and, compiled, on the ISA emulator for gfx1100 and gfx950;
both must match torch."""

import math

import pytest
import torch

import hk

T = hk.RT(hk.fp32, 16, 64)
COL = hk.RV(hk.fp32, 16, "col")
ROW = hk.RV(hk.fp32, 64, "row")
ARCHS = ["gfx1100", "gfx950"]

UNARY = ["exp", "exp2", "log", "log2", "abs", "neg", "relu", "gelu", "silu", "sqrt", "rsqrt",
         "round", "floor", "sin", "cos", "tanh", "sigmoid"]


@hk.kernel(grid=(1,))
def unary_ops(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = x[0, 0, 0, 0].load(T)
    for k, fn in enumerate(UNARY):
        o[k, 0, 0, 0] = getattr(hk.math, fn)(t)
    # 2^(-40x) for x in (0.1, 4.1): normal results, denormal ones, and ones below every float.
    o[len(UNARY), 0, 0, 0] = hk.math.exp2(t * -40.0, ftz=True)


@hk.kernel(grid=(1,))
def binary_ops(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], s: float):
    a = x[0, 0, 0, 0].load(T)
    b = y[0, 0, 0, 0].load(T)
    o[0, 0, 0, 0] = a + b
    o[1, 0, 0, 0] = a - b
    o[2, 0, 0, 0] = a * b
    o[3, 0, 0, 0] = a / b
    o[4, 0, 0, 0] = hk.maximum(a, b)
    o[5, 0, 0, 0] = hk.minimum(a, b)
    o[6, 0, 0, 0] = a * s + 1.0
    o[7, 0, 0, 0] = hk.where(a > b, a, -1.0)
    o[8, 0, 0, 0] = hk.causal(a, 0, 0, value=0.0)
    o[9, 0, 0, 0] = hk.triu(a, 0, 0, diagonal=2, value=0.0)
    o[10, 0, 0, 0] = hk.iota(T, "col").to(hk.fp32) + hk.iota(T, "row").to(hk.fp32) * 100.0
    o[11, 0, 0, 0] = hk.math.pow(b, a)
    o[12, 0, 0, 0] = b ** 2.0
    # Device scalars: hk.maximum / minimum of two, and of one with a number.
    o[13, 0, 0, 0] = hk.zeros(T) + hk.maximum(s, 1.0)
    o[14, 0, 0, 0] = hk.zeros(T) + hk.minimum(s * 2.0, s)


@hk.kernel(grid=(1,))
def row_col_ops(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], v: hk.Tensor[hk.fp32]):
    a = x[0, 0, 0, 0].load(T)
    rs = hk.row_sum(a)
    cs = hk.col_sum(a)
    o[0, 0, 0, 0] = hk.sub_row(a, hk.row_max(a))
    o[1, 0, 0, 0] = hk.mul_col(a, cs)
    o[2, 0, 0, 0] = hk.broadcast(hk.row_min(a), T)
    o[3, 0, 0, 0] = hk.broadcast(hk.col_max(a), T)
    v[0, 0, 0, 0] = rs
    v[0, 0, 1, 0] = hk.col_min(a)


@hk.kernel(grid=(1,))
def conversions(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], ob: hk.Tensor[hk.bf16]):
    a = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))
    ob[0, 0, 0, 0] = a.to(hk.bf16)
    ob[1, 0, 0, 0] = a.to(hk.bf16) + a.to(hk.bf16)
    o[0, 0, 0, 0] = a.T


@hk.kernel(grid=(1,))
def bitwise(x: hk.Tensor[hk.i32], y: hk.Tensor[hk.i32], o: hk.Tensor[hk.i32]):
    t = x[0, 0, 0, 0].load(hk.RT(hk.i32, 16, 64))
    u = y[0, 0, 0, 0].load(hk.RT(hk.i32, 16, 64))
    o[0, 0, 0, 0] = t & u
    o[1, 0, 0, 0] = t | 0x0F0
    o[2, 0, 0, 0] = t ^ u
    o[3, 0, 0, 0] = (t >> 28) & 0xF  # the top nibble of negative words too
    o[4, 0, 0, 0] = t << 5
    o[5, 0, 0, 0] = t >> u  # amounts modulo 32
    o[6, 0, 0, 0] = 1 << (u & 7)


@hk.kernel(grid=(1,))
def finite_conversions(x: hk.Tensor[hk.fp32], a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16],
                       ob: hk.Tensor[hk.bf16]):
    # finite=True through each path of the conversion: in place, across lanes, and an
    # accumulator into a matrix operand's layout (gfx11's P of attention).
    t = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))
    p = t.to(hk.bf16, finite=True)
    ob[0, 0, 0, 0] = p + p  # not only stored: a store would convert for itself
    ob[1, 0, 0, 0] = t.to(hk.bf16, "col", finite=True)
    acc = hk.mma_ABt(a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16)), b[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16)),
                     hk.zeros(hk.RT(hk.fp32, 16, 16)))
    ob[2, 0, 0, 0] = acc.to(hk.bf16, "col", finite=True)


@hk.kernel(grid=(1,))
def mmas(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    # a is 32 x 32 and b is 32 x 32; each form reads them as its operands want.
    acc = hk.zeros(hk.RT(hk.fp32, 32, 32))
    ar = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 32, 32, "row"))
    ac = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 32, 32, "col"))
    br = b[0, 0, 0, 0].load(hk.RT(hk.bf16, 32, 32, "row"))
    bc = b[0, 0, 0, 0].load(hk.RT(hk.bf16, 32, 32, "col"))
    o[0, 0, 0, 0] = hk.mma_AB(ar, bc, acc)
    o[1, 0, 0, 0] = hk.mma_ABt(ar, br, acc)
    o[2, 0, 0, 0] = hk.mma_AtB(ac, bc, acc)
    o[3, 0, 0, 0] = hk.mma_AtBt(ac, br, acc)


@hk.kernel(grid=(1,))
def lds_columns(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    # Column-layout reads of a row-major LDS tile (gfx950: the transposing LDS read), whole and
    # at offsets, with K in chunks of 32 and a last one of 16; then one as the B of A·B.
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 64))
    hk.lds.commit(s, 0, hk.lds.issue(s, x, hk.tile_coord(0, 0, 0, 0)))
    hk.arch.barrier()
    o[0, 0, 0, 0] = s[0].subtile(32, 32, 1, 0).load(hk.RT(hk.bf16, 32, 32, "col"))
    o[1, 0, 0, 0] = s[0].subtile(16, 32, 1, 1).load(hk.RT(hk.bf16, 16, 32, "col"))
    o[2, 0, 0, 0] = s[0].subtile(32, 16, 1, 3).load(hk.RT(hk.bf16, 32, 16, "col"))
    a = b[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    bt = s[0].subtile(32, 32, 0, 1).load(hk.RT(hk.bf16, 32, 32, "col"))
    c[0, 0, 0, 0] = hk.mma_AB(a, bt, hk.zeros(hk.RT(hk.fp32, 16, 32)))


@hk.kernel(grid=(1,))
def rows_by_index(table: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.i32], out: hk.Tensor[hk.bf16],
                  slots: hk.Tensor[hk.i32], cache: hk.Tensor[hk.bf16]):
    rows = ids[0, 0, 0, 0].load(hk.RV(hk.i32, 16, "col"))
    t = hk.gather(table, hk.tile_coord(0, 0, 0, 0), rows, hk.RT(hk.bf16, 16, 64))
    out[0, 0, 0, 0] = t
    where = slots[0, 0, 0, 0].load(hk.RV(hk.i32, 16, "col"))
    hk.scatter(cache, hk.tile_coord(0, 0, 0, 0), where, t)


@hk.kernel(grid=(1,))
def random(o: hk.Tensor[hk.fp32], seed: int):
    offsets = hk.iota(T, "row") * 64 + hk.iota(T, "col")
    o[0, 0, 0, 0] = hk.rand(seed, offsets)


@hk.kernel(grid=(1,))
def through_subtiles(x: hk.Tensor[hk.bf16], strips: hk.Tensor[hk.bf16], blocks: hk.Tensor[hk.bf16],
                     nested: hk.Tensor[hk.bf16]):
    # x (64 x 64) goes to LDS whole; its 16-row strips come back in reverse order through
    # subtiles of the other buffer, its 32 x 32 quadrants leave with their positions swapped,
    # and a subtile of a subtile reads the bottom half of the last quadrant.
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 64, 2))
    hk.lds.copy_to(s, 1, x, hk.tile_coord(0, 0, 0, 0))
    hk.arch.barrier()
    for i in range(4):
        strip = s[1].subtile(16, 64, i, 0).load(hk.RT(hk.bf16, 16, 64))
        s[0].subtile(16, 64, 3 - i, 0).store(strip)
    for i in range(2):
        for j in range(2):
            blocks[0, 0, j, i] = s[1].subtile(32, 32, i, j).load(hk.RT(hk.bf16, 32, 32))
    nested[0, 0, 0, 0] = s[1].subtile(32, 32, 1, 1).subtile(16, 32, 1, 0).load(hk.RT(hk.bf16, 16, 32))
    hk.arch.barrier()
    hk.lds.copy_from(strips, hk.tile_coord(0, 0, 0, 0), s, 0)


@hk.kernel(grid=(3,), warps=2)
def counters(n: hk.Tensor[hk.i32], f: hk.Tensor[hk.fp32]):
    # Once per wave: six waves in all.
    n.atomic_add(0, 0, 0, 0, 1)
    n.atomic_add(0, 0, 0, 1 + hk.arch.block_idx.x, (hk.arch.warp_id() + 1).to(hk.i32))
    f.atomic_add(0, 0, 0, 0, 0.5)


def run_on(device, arch, monkeypatch, kernel, *args):
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)
    kernel(*args)


def both(monkeypatch, arch, kernel, make_args):
    """The kernel's outputs on the interpreter and on the emulator, from the same inputs."""
    results = []
    for device in ("interp", "emu"):
        args = make_args()
        run_on(device, arch, monkeypatch, kernel, *args)
        results.append(args)
    return results


def close(a, b, rtol=1e-5, atol=1e-5):
    torch.testing.assert_close(a.float(), b.float(), rtol=rtol, atol=atol, equal_nan=True)


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(0)


@pytest.mark.parametrize("arch", ARCHS)
def test_unary(monkeypatch, arch):
    x = torch.rand(16, 64) * 4 + 0.1
    interp, emu = both(monkeypatch, arch, unary_ops, lambda: (x.clone(), torch.zeros(len(UNARY) + 1, 16, 64)))
    refs = [torch.exp(x), torch.exp2(x), torch.log(x), torch.log2(x), x.abs(), -x, x.relu(),
            torch.nn.functional.gelu(x, approximate="tanh"), torch.nn.functional.silu(x), x.sqrt(), x.rsqrt(),
            torch.round(x), torch.floor(x), torch.sin(x), torch.cos(x), torch.tanh(x), torch.sigmoid(x)]
    exact = torch.exp2(x * -40.0)
    flushed = torch.where(exact < 2.0 ** -126, torch.zeros_like(exact), exact)
    assert (flushed == 0).any() and (flushed > 0).any() and ((exact > 0) & (exact < 2.0 ** -126)).any()
    refs.append(flushed)
    for k, ref in enumerate(refs):
        close(interp[1][k], ref, rtol=1e-5, atol=1e-5)
        # The hardware's transcendentals are within a few ulp of the correctly rounded ones.
        close(emu[1][k], ref, rtol=2e-5, atol=1e-5)
    # exp2(ftz=True): zero exactly where the result would be below 2^-126, on both runners.
    for got in (interp[1][-1], emu[1][-1]):
        assert torch.equal(got == 0, flushed == 0)
        close(got, flushed, rtol=2e-5, atol=0)


@hk.kernel(grid=(1,))
def signed_zeros(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = x[0, 0, 0, 0].load(T)
    o[0, 0, 0, 0] = hk.math.abs(t)
    o[1, 0, 0, 0] = hk.math.neg(t)
    o[2, 0, 0, 0] = hk.math.abs(t.to(hk.bf16)).to(hk.fp32)


@pytest.mark.parametrize("arch", ARCHS)
def test_abs_and_neg_of_signed_zeros_bit_for_bit(monkeypatch, arch):
    x = torch.zeros(16, 64)
    x[:, ::2] = -0.0
    x[0, 1] = -3.5
    interp, emu = both(monkeypatch, arch, signed_zeros, lambda: (x.clone(), torch.zeros(3, 16, 64)))
    for got in (interp[1], emu[1]):
        bits = got.view(torch.int32)
        assert torch.equal(bits[0], x.abs().view(torch.int32))    # every zero +0.0
        assert torch.equal(bits[1], (-x).view(torch.int32))       # signs flipped
        assert torch.equal(bits[2], x.abs().view(torch.int32))


@pytest.mark.parametrize("arch", ARCHS)
def test_binary_masks_and_indices(monkeypatch, arch):
    x, y = torch.randn(16, 64), torch.rand(16, 64) + 0.5
    interp, emu = both(monkeypatch, arch, binary_ops, lambda: (x.clone(), y.clone(), torch.zeros(15, 16, 64), 2.5))
    r, c = torch.arange(16).unsqueeze(1), torch.arange(64).unsqueeze(0)
    refs = [x + y, x - y, x * y, x / y, torch.maximum(x, y), torch.minimum(x, y), x * 2.5 + 1.0,
            torch.where(x > y, x, torch.tensor(-1.0)), torch.where(c <= r, x, torch.tensor(0.0)),
            torch.where(c - r >= 2, x, torch.tensor(0.0)), (c + r * 100).float().expand(16, 64),
            torch.pow(y, x), y * y, torch.full((16, 64), 2.5), torch.full((16, 64), 2.5)]
    for k, ref in enumerate(refs):
        close(interp[2][k], ref)
        close(emu[2][k], ref)


@hk.kernel(grid=(1,))
def masks_of_16_bit_tiles(x: hk.Tensor[hk.bf16], y: hk.Tensor[hk.fp16], o: hk.Tensor[hk.bf16],
                          p: hk.Tensor[hk.fp16]):
    # Comparisons of 16-bit tiles and selections between them, in both layouts, with masks of
    # their own comparisons and of a 32-bit tile's.
    a = x[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    b = y[0, 0, 0, 0].load(hk.RT(hk.fp16, 16, 32, "col"))
    o[0, 0, 0, 0] = hk.where(a > 0.0, a, -1.0)
    o[1, 0, 0, 0] = hk.where(hk.iota(hk.RT(hk.i32, 16, 32), "col") < 5, a, 0.0)
    p[0, 0, 0, 0] = hk.where(b <= b * 0.5, b, b * 0.5)
    ac = a.to(hk.fp16, "col")
    p[1, 0, 0, 0] = hk.where(ac == b, b, ac)


@pytest.mark.parametrize("arch", ARCHS)
def test_masks_of_16_bit_tiles(monkeypatch, arch):
    x = torch.randn(16, 32).bfloat16()
    y = torch.randn(16, 32).half()
    y[:, ::3] = x[:, ::3].half()  # some equal pairs
    interp, emu = both(monkeypatch, arch, masks_of_16_bit_tiles,
                       lambda: (x.clone(), y.clone(), torch.zeros(2, 16, 32).bfloat16(), torch.zeros(2, 16, 32).half()))
    c = torch.arange(32).unsqueeze(0)
    xh = x.half()
    for got in (interp, emu):
        assert torch.equal(got[2][0], torch.where(x > 0, x, torch.tensor(-1.0).bfloat16()))
        assert torch.equal(got[2][1], torch.where(c < 5, x, torch.tensor(0.0).bfloat16()))
        assert torch.equal(got[3][0], torch.minimum(y, y * 0.5))
        assert torch.equal(got[3][1], torch.where(xh == y, y, xh))
        assert (xh == y).any() and (xh != y).any()


@pytest.mark.parametrize("arch", ARCHS)
def test_reductions_and_broadcasts(monkeypatch, arch):
    x = torch.randn(16, 64)
    interp, emu = both(monkeypatch, arch, row_col_ops, lambda: (x.clone(), torch.zeros(4, 16, 64), torch.zeros(2, 64)))
    tiles = [x - x.amax(1, keepdim=True), x * x.sum(0, keepdim=True), x.amin(1, keepdim=True).expand(16, 64),
             x.amax(0, keepdim=True).expand(16, 64)]
    for got in (interp, emu):
        for k, ref in enumerate(tiles):
            close(got[1][k], ref, rtol=1e-5, atol=1e-4)
        close(got[2][0, :16], x.sum(1), atol=1e-4)
        close(got[2][1], x.amin(0))


@pytest.mark.parametrize("arch", ARCHS)
def test_conversions_and_transpose(monkeypatch, arch):
    x = torch.randn(16, 32)
    interp, emu = both(monkeypatch, arch, conversions,
                       lambda: (x.clone(), torch.zeros(32, 16), torch.zeros(2, 16, 32, dtype=torch.bfloat16)))
    for got in (interp, emu):
        assert torch.equal(got[2][0], x.to(torch.bfloat16))  # round to nearest even, exactly
        assert torch.equal(got[2][1], x.to(torch.bfloat16) + x.to(torch.bfloat16))
        assert torch.equal(got[1], x.t())


@pytest.mark.parametrize("arch", ARCHS)
def test_bitwise_operations_on_i32_tiles(monkeypatch, arch):
    x = torch.randint(-2 ** 31, 2 ** 31 - 1, (16, 64), dtype=torch.int64).to(torch.int32)
    y = torch.randint(0, 70, (16, 64), dtype=torch.int32)
    interp, emu = both(monkeypatch, arch, bitwise, lambda: (x.clone(), y.clone(), torch.zeros(7, 16, 64, dtype=torch.int32)))
    wide = x.to(torch.int64)
    want = [x & y, x | 0x0F0, x ^ y, (x >> 28) & 0xF, ((wide << 5) & 0xFFFFFFFF).to(torch.int64),
            x >> (y & 31), 1 << (y & 7)]
    want[4] = torch.where(want[4] >= 2 ** 31, want[4] - 2 ** 32, want[4]).to(torch.int32)
    for got in (interp, emu):
        for i, w in enumerate(want):
            assert torch.equal(got[2][i], w.to(torch.int32)), i


def test_bitwise_operations_are_for_i32():
    @hk.kernel(grid=(1,))
    def on_floats(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        t = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))
        o[0, 0, 0, 0] = t & t

    with pytest.raises(hk.errors.TraceError, match="& is defined on i32 tiles and vectors"):
        on_floats.trace("gfx1100")


@pytest.mark.parametrize("arch", ARCHS)
def test_finite_conversions_round_to_nearest_even(monkeypatch, arch):
    x = torch.randn(16, 16) * 100
    bits = x.view(torch.int32)
    bits[::2] = (bits[::2] & ~0xFFFF) | 0x8000  # exact ties, half of them on an odd bf16
    # Integers: the product is exact in fp32, and its halves (odd ones above 256) round.
    a = torch.randint(-40, 40, (16, 16)).to(torch.bfloat16)
    b = torch.randint(-40, 40, (16, 16)).to(torch.bfloat16)
    acc = a.float() @ b.float().t()
    interp, emu = both(monkeypatch, arch, finite_conversions,
                       lambda: (x.clone(), a, b, torch.zeros(3, 16, 16, dtype=torch.bfloat16)))
    for got in (interp, emu):
        assert torch.equal(got[3][0], x.to(torch.bfloat16) * 2)
        assert torch.equal(got[3][1], x.to(torch.bfloat16))
        assert torch.equal(got[3][2], acc.to(torch.bfloat16))


def test_finite_is_a_narrowing_of_fp32():
    @hk.kernel(grid=(1,))
    def widening(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = x[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16)).to(hk.fp32, finite=True)

    with pytest.raises(hk.errors.TraceError, match="finite=True narrows fp32 to bf16 or fp16, not bf16 to fp32"):
        widening.trace("gfx1100")


@pytest.mark.parametrize("arch", ARCHS)
def test_all_four_mma_forms(monkeypatch, arch):
    a = torch.randn(32, 32, dtype=torch.bfloat16)
    b = torch.randn(32, 32, dtype=torch.bfloat16)
    interp, emu = both(monkeypatch, arch, mmas, lambda: (a.clone(), b.clone(), torch.zeros(4, 32, 32)))
    A, B = a.float(), b.float()
    refs = [A @ B, A @ B.t(), A.t() @ B, A.t() @ B.t()]
    for got in (interp, emu):
        for k, ref in enumerate(refs):
            close(got[2][k], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_column_layout_reads_from_lds(monkeypatch, arch):
    x = torch.randn(64, 64).to(torch.bfloat16)
    a = torch.randn(16, 32).to(torch.bfloat16)
    make = lambda: (x.clone(), torch.zeros(3, 32, 32, dtype=torch.bfloat16), a.clone(), torch.zeros(16, 32))
    interp, emu = both(monkeypatch, arch, lds_columns, make)
    for got in (interp, emu):
        assert torch.equal(got[1][0], x[32:64, :32])
        assert torch.equal(got[1][1, :16, :32], x[16:32, 32:64])
        assert torch.equal(got[1][2, :32, :16], x[32:64, 48:64])
        close(got[3], a.float() @ x[:32, 32:64].float(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_gather_and_scatter_drop_padding(monkeypatch, arch):
    table = torch.randn(40, 64).to(torch.bfloat16)
    ids = torch.tensor([3, 0, 39, 7, -1, 5, 5, 12, 1, 2, 30, 31, 32, 33, -1, 8], dtype=torch.int32)
    slots = torch.tensor([0, 1, 2, 3, -1, 5, 6, 7, 8, 9, 10, 11, 12, 13, -1, 15], dtype=torch.int32)
    make = lambda: (table.clone(), ids.clone(), torch.zeros(16, 64, dtype=torch.bfloat16), slots.clone(),
                    torch.full((16, 64), 7.0, dtype=torch.bfloat16))
    interp, emu = both(monkeypatch, arch, rows_by_index, make)
    expected = torch.stack([table[i] if i >= 0 else torch.zeros(64, dtype=torch.bfloat16) for i in ids.tolist()])
    cache = torch.full((16, 64), 7.0, dtype=torch.bfloat16)
    for i, s in enumerate(slots.tolist()):
        if s >= 0:
            cache[s] = expected[i]
    for got in (interp, emu):
        assert torch.equal(got[2], expected)
        assert torch.equal(got[4], cache)  # rows 4 and 14 were padding: untouched


@pytest.mark.parametrize("arch", ARCHS)
def test_rand_is_the_same_stream(monkeypatch, arch):
    interp, emu = both(monkeypatch, arch, random, lambda: (torch.zeros(16, 64), 1234))
    assert torch.equal(interp[0], emu[0])
    values = interp[0]
    assert values.min() >= 0 and values.max() < 1
    assert abs(values.mean().item() - 0.5) < 0.05


@pytest.mark.parametrize("arch", ARCHS)
def test_subtiles_address_their_root(monkeypatch, arch):
    x = torch.randn(64, 64).to(torch.bfloat16)
    make = lambda: (x.clone(), torch.zeros(64, 64, dtype=torch.bfloat16), torch.zeros(64, 64, dtype=torch.bfloat16),
                    torch.zeros(16, 32, dtype=torch.bfloat16))
    interp, emu = both(monkeypatch, arch, through_subtiles, make)
    strips = torch.cat([x[16 * i:16 * (i + 1)] for i in reversed(range(4))])
    q = lambda t, i, j: t[32 * i:32 * (i + 1), 32 * j:32 * (j + 1)]
    blocks = torch.cat([torch.cat([q(x, 0, 0), q(x, 1, 0)], 1), torch.cat([q(x, 0, 1), q(x, 1, 1)], 1)])
    for got in (interp, emu):
        assert torch.equal(got[1], strips)
        assert torch.equal(got[2], blocks)
        assert torch.equal(got[3], x[48:64, 32:64])


@pytest.mark.parametrize("arch", ARCHS)
def test_atomic_add_counts_waves(monkeypatch, arch):
    make = lambda: (torch.zeros(4, dtype=torch.int32), torch.zeros(1))
    for got in both(monkeypatch, arch, counters, make):
        assert got[0].tolist() == [6, 3, 3, 3]
        assert got[1].item() == 3.0
