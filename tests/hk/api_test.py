"""The rest of the public API on the interpreter: dtypes, row/column broadcasts, fills, LDS
vectors, the generic mma, transpose and tril, a device scalar left of a tile, and the Kernel /
TracedKernel objects."""

import pytest
import torch

import hk

T = hk.RT(hk.fp32, 16, 64)
COL = hk.RV(hk.fp32, 16, "col")
ROW = hk.RV(hk.fp32, 64, "row")


@pytest.fixture(autouse=True)
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


def test_dtypes_are_dtype_objects():
    for d, bits, is_float in [(hk.bf16, 16, True), (hk.fp16, 16, True), (hk.fp32, 32, True),
                              (hk.i32, 32, False), (hk.i8, 8, False), (hk.fp8e4m3, 8, True),
                              (hk.fp8e5m2, 8, True), (hk.fp8e4m3fnuz, 8, True), (hk.fp8e5m2fnuz, 8, True)]:
        assert isinstance(d, hk.DType) and d.bits == bits and d.is_float == is_float
    assert repr(hk.fp8e4m3) == "hk.fp8e4m3"
    assert hk.types.from_torch(torch.float8_e4m3fnuz) is hk.fp8e4m3fnuz
    assert hk.types.from_torch(torch.float8_e5m2fnuz) is hk.fp8e5m2fnuz
    assert hk.types.from_mlir("f8E4M3FNUZ") is hk.fp8e4m3fnuz


@hk.kernel(grid=(1,))
def row_col(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = x[0, 0, 0, 0].load(T)
    c = hk.row_sum(t)          # one per row
    r = hk.col_max(t)          # one per column
    o[0, 0, 0, 0] = hk.add_row(t, c)
    o[1, 0, 0, 0] = hk.sub_row(t, c)
    o[2, 0, 0, 0] = hk.mul_row(t, c)
    o[3, 0, 0, 0] = hk.div_row(t, c)
    o[4, 0, 0, 0] = hk.max_row(t, c)
    o[5, 0, 0, 0] = hk.min_row(t, c)
    o[6, 0, 0, 0] = hk.add_col(t, r)
    o[7, 0, 0, 0] = hk.sub_col(t, r)
    o[8, 0, 0, 0] = hk.mul_col(t, r)
    o[9, 0, 0, 0] = hk.div_col(t, r)
    o[10, 0, 0, 0] = hk.max_col(t, r * 0.5)
    o[11, 0, 0, 0] = hk.min_col(t, r * 0.5)


def test_row_and_column_broadcasts():
    x = torch.rand(16, 64) + 0.5
    o = torch.zeros(12, 16, 64)
    row_col(x, o)
    c, r = x.sum(1, keepdim=True), x.amax(0, keepdim=True)
    refs = [x + c, x - c, x * c, x / c, torch.maximum(x, c), torch.minimum(x, c), x + r, x - r, x * r, x / r,
            torch.maximum(x, r * 0.5), torch.minimum(x, r * 0.5)]
    for k, ref in enumerate(refs):
        torch.testing.assert_close(o[k], ref)


@hk.kernel(grid=(1,), warps=2)
def fills_and_lds(o: hk.Tensor[hk.fp32]):
    w = hk.arch.warp_id()
    shared = hk.lds.alloc(hk.SV(hk.fp32, 16, 2))
    shared[w].store(hk.full(COL, 3.0) + w.to(hk.fp32))
    hk.arch.barrier()
    total = shared[0].load(COL) + shared[1].load(COL)
    o[0, 0, 0, 0] = hk.broadcast(total, T)
    o[1, 0, 0, 0] = hk.neg_infty(T)
    o[2, 0, 0, 0] = hk.tril(hk.full(T, 1.0), 0, 0, diagonal=1, value=0.0)


def test_fills_masks_and_shared_vectors():
    o = torch.zeros(3, 16, 64)
    fills_and_lds(o)
    assert torch.equal(o[0], torch.full((16, 64), 7.0))   # (3 + 0) + (3 + 1)
    assert torch.equal(o[1], torch.full((16, 64), float("-inf")))
    r, c = torch.arange(16).unsqueeze(1), torch.arange(64).unsqueeze(0)
    assert torch.equal(o[2], (c - r <= 1).float())


@hk.kernel(grid=(1,))
def narrow_dtypes(h: hk.Tensor[hk.fp16], q: hk.Tensor[hk.i8], f8: hk.Tensor[hk.fp32],
                  oh: hk.Tensor[hk.fp32], oq: hk.Tensor[hk.i8], o8: hk.Tensor[hk.fp32]):
    oh[0, 0, 0, 0] = h[0, 0, 0, 0].load(hk.RT(hk.fp16, 16, 64)).to(hk.fp32)
    oq[0, 0, 0, 0] = q[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 64))
    x = f8[0, 0, 0, 0].load(T)
    o8[0, 0, 0, 0] = x.to(hk.fp8e4m3).to(hk.fp32)
    o8[1, 0, 0, 0] = x.to(hk.fp8e5m2).to(hk.fp32)


def test_fp16_i8_and_fp8_round_trips():
    h = torch.randn(16, 64, dtype=torch.float16)
    q = torch.randint(-128, 127, (16, 64), dtype=torch.int8)
    x = torch.randn(16, 64) * 8
    oh, oq, o8 = torch.zeros(16, 64), torch.zeros(16, 64, dtype=torch.int8), torch.zeros(2, 16, 64)
    narrow_dtypes(h, q, x, oh, oq, o8)
    assert torch.equal(oh, h.float())
    assert torch.equal(oq, q)
    assert torch.equal(o8[0], x.to(torch.float8_e4m3fn).float())
    assert torch.equal(o8[1], x.to(torch.float8_e5m2).float())


@hk.kernel(grid=(1,))
def generic_mma(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    ta = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    tb = b[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    d = hk.mma("ABt", ta, tb, hk.zeros(hk.RT(hk.fp32, 16, 16)))
    o[0, 0, 0, 0] = hk.transpose(d)


def test_generic_mma_and_transpose():
    a = torch.randn(16, 32, dtype=torch.bfloat16)
    b = torch.randn(16, 32, dtype=torch.bfloat16)
    o = torch.zeros(16, 16)
    generic_mma(a, b, o)
    torch.testing.assert_close(o, (a.float() @ b.float().t()).t(), rtol=1e-5, atol=1e-5)
    with pytest.raises(hk.errors.TraceError, match="mma kind must be one of"):
        @hk.kernel(grid=(1,))
        def bad(a: hk.Tensor[hk.bf16]):
            t = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
            hk.mma("BA", t, t, hk.zeros(hk.RT(hk.fp32, 16, 16)))
        bad.trace(arch="gfx1100")


@hk.kernel(grid=(1,))
def scalar_first(x: hk.Tensor[hk.fp32], i: hk.Tensor[hk.i32], o: hk.Tensor[hk.fp32], oi: hk.Tensor[hk.i32],
                 s: float, n: int):
    t = x[0, 0, 0, 0].load(T)
    o[0, 0, 0, 0] = s - t
    o[1, 0, 0, 0] = s / t
    o[2, 0, 0, 0] = s * t
    oi[0, 0, 0, 0] = n - i[0, 0, 0, 0].load(hk.RT(hk.i32, 16, 64))


@pytest.mark.parametrize("s", [1.5, -0.0])
def test_a_device_scalar_on_the_left_of_a_tile(s):
    x = torch.randn(16, 64)
    x[0, :4] = torch.tensor([0.0, -0.0, float("inf"), float("nan")])
    i = torch.randint(-100, 100, (16, 64), dtype=torch.int32)
    o, oi = torch.zeros(3, 16, 64), torch.zeros(16, 64, dtype=torch.int32)
    scalar_first(x, i, o, oi, s, 7)
    splat = torch.full_like(x, s)  # torch's s / x multiplies by x's reciprocal: not IEEE division
    for got, ref in zip(o, (splat - x, splat / x, splat * x)):
        torch.testing.assert_close(got, ref, rtol=0, atol=0, equal_nan=True)
        numbers = ~ref.isnan()
        assert torch.equal(got[numbers].signbit(), ref[numbers].signbit())  # -0.0 - 0.0 is -0.0
    torch.testing.assert_close(oi, 7 - i, rtol=0, atol=0)


def test_kernel_and_traced_kernel_objects():
    assert isinstance(generic_mma, hk.Kernel)
    traced = generic_mma.trace(arch="gfx942")
    assert isinstance(traced, hk.TracedKernel)
    assert traced.arch == "gfx942" and traced.name == "generic_mma" and traced.warps == 1
    assert [p.name for p in traced.params] == ["a", "b", "o"]
    assert str(traced) == traced.dump()
    assert traced.warnings == []


@hk.kernel(grid=(1,))
def per_target(o: hk.Tensor[hk.fp32]):
    # A schedule chosen by the target's facts while the kernel traces.
    t = hk.arch.target()
    o.store_scalar(0, 0, 0, 0, float(t.wave_size))
    o.store_scalar(0, 0, 0, 1, 1.0 if t.lds_transpose_read else 0.0)


@pytest.mark.parametrize("arch, wave, transpose", [("gfx1100", 32, 0), ("gfx942", 64, 0), ("gfx950", 64, 1)])
def test_a_kernel_reads_the_facts_of_its_target(monkeypatch, arch, wave, transpose):
    monkeypatch.setenv("HK_ARCH", arch)
    o = torch.zeros(2)
    per_target(o)
    assert o.tolist() == [wave, transpose]
    assert per_target.trace(arch).arch == arch


def test_target_outside_a_kernel_is_a_trace_error():
    with pytest.raises(hk.errors.TraceError, match="inside an @hk.kernel"):
        hk.arch.target()


@hk.kernel(grid=lambda p: (p.N,), schedule={"gfx950": {"N": 3, "V": 2.0}})
def scheduled(o: hk.Tensor[hk.fp32], *, N=2, V=1.0):
    # One value per program: the grid and the body both see the target's constants.
    o.store_scalar(0, 0, 0, hk.arch.block_idx.x, V)


@hk.kernel(grid=(1,), schedule=lambda t: {"V": float(t.wave_size)})
def scheduled_by_facts(o: hk.Tensor[hk.fp32], *, V=0.0):
    o.store_scalar(0, 0, 0, 0, V)


@pytest.mark.parametrize("arch, values", [("gfx1100", [1.0, 1.0, 0.0]), ("gfx950", [2.0, 2.0, 2.0])])
def test_a_schedule_gives_each_target_its_constants(monkeypatch, arch, values):
    monkeypatch.setenv("HK_ARCH", arch)
    o = torch.zeros(3)
    scheduled(o)
    assert o.tolist() == values
    assert scheduled.trace(arch).constants == ({"N": 3, "V": 2.0} if arch == "gfx950" else {"N": 2, "V": 1.0})
    # A caller's constants win over the schedule's.
    o.zero_()
    scheduled(o, V=5.0)
    assert o.tolist() == [5.0 if v else 0.0 for v in values]


@pytest.mark.parametrize("arch, wave", [("gfx1100", 32.0), ("gfx942", 64.0)])
def test_a_schedule_may_be_a_function_of_the_targets_facts(monkeypatch, arch, wave):
    monkeypatch.setenv("HK_ARCH", arch)
    o = torch.zeros(1)
    scheduled_by_facts(o)
    assert o.tolist() == [wave]


def test_a_schedule_of_unknown_constants_is_refused_naming_them():
    @hk.kernel(grid=(1,), schedule={"gfx1100": {"BK": 64}})
    def wrong(o: hk.Tensor[hk.fp32], *, BN=64):
        o.store_scalar(0, 0, 0, 0, 1.0)

    with pytest.raises(hk.errors.TraceError, match="schedule for gfx1100 sets BK, which is not among its constants"):
        wrong.trace("gfx1100")
    wrong.trace("gfx942")  # no entry for gfx942: the signature's defaults
    with pytest.raises(hk.errors.TraceError, match="schedule="):
        hk.kernel(grid=(1,), schedule=[("gfx1100", {})])(lambda o: None)
