"""8-bit hk.mma end to end: int8 x int8 -> int32 and fp8 x fp8 -> fp32 in the four forms, traced,
compiled for each target that has the instruction and run on the emulator, and on the
interpreter; int8 equal to torch's exact integer product, fp8 to a float64 reference. fp8 is OCP
(hk.fp8e4m3, hk.fp8e5m2) on gfx1201 and gfx950 and FNUZ (hk.fp8e4m3fnuz, hk.fp8e5m2fnuz) on
gfx942. What a target lacks is refused at the mma's line, naming the target and what to use
instead: the other format's type, or bf16."""

import inspect

import pytest
import torch

import hk
from hk.errors import VerifyError
from hk.target import facts

M, N, K = 16, 16, 64  # K = 64: gfx950's int8 MFMA step (8-bit tiles take a VGPR per element: small tiles)

TORCH = {hk.i8: torch.int8, hk.fp8e4m3: torch.float8_e4m3fn, hk.fp8e5m2: torch.float8_e5m2,
         hk.fp8e4m3fnuz: torch.float8_e4m3fnuz, hk.fp8e5m2fnuz: torch.float8_e5m2fnuz}
OTHER = {torch.float8_e4m3fn: torch.float8_e4m3fnuz, torch.float8_e5m2: torch.float8_e5m2fnuz,
         torch.float8_e4m3fnuz: torch.float8_e4m3fn, torch.float8_e5m2fnuz: torch.float8_e5m2}
FP8 = {"gfx1201": (hk.fp8e4m3, hk.fp8e5m2), "gfx950": (hk.fp8e4m3, hk.fp8e5m2),
       "gfx942": (hk.fp8e4m3fnuz, hk.fp8e5m2fnuz)}


def four_forms(dtype):
    """A kernel writing A B, A Bt^T, At^T B and At^T Bt^T + A B (the last accumulating onto an
    mma's result) to out[0, 0..3]."""
    acc = hk.i32 if dtype is hk.i8 else hk.fp32

    @hk.kernel(grid=(1,))
    def mma8(a: hk.Tensor[dtype], at: hk.Tensor[dtype], b: hk.Tensor[dtype], bt: hk.Tensor[dtype],
             out: hk.Tensor[acc]):
        x = a[0, 0, 0, 0].load(hk.RT(dtype, M, K))           # M x K
        xt = at[0, 0, 0, 0].load(hk.RT(dtype, K, M, "col"))  # K x M
        y = b[0, 0, 0, 0].load(hk.RT(dtype, K, N, "col"))    # K x N
        yt = bt[0, 0, 0, 0].load(hk.RT(dtype, N, K))         # N x K
        zero = hk.zeros(hk.RT(acc, M, N))
        out[0, 0, 0, 0] = hk.mma_AB(x, y, zero)
        out[0, 1, 0, 0] = hk.mma_ABt(x, yt, zero)
        out[0, 2, 0, 0] = hk.mma_AtB(xt, y, zero)
        out[0, 3, 0, 0] = hk.mma_AtBt(xt, yt, hk.mma_AB(x, y, zero))

    return mma8


KERNELS = {d: four_forms(d) for d in TORCH}


def operands(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype is hk.i8:  # the whole range, -128 and 127 included
        a = torch.randint(-128, 128, (M, K), generator=g, dtype=torch.int8)
        b = torch.randint(-128, 128, (K, N), generator=g, dtype=torch.int8)
        a[0, :] = -128
        b[:, 0] = -128
        b[:, 1] = 127
    else:  # normal and subnormal magnitudes, both signs
        scale = torch.tensor([1.0, 2.0 ** -7, 16.0, 2.0 ** -10]).repeat(K // 4)
        a = (torch.randn(M, K, generator=g) * scale).to(TORCH[dtype])
        b = (torch.randn(K, N, generator=g) * scale.unsqueeze(1)).to(TORCH[dtype])
    return a, b


def reference(dtype, a, b):
    if dtype is hk.i8:
        p = a.long() @ b.long()
        return torch.stack([p, p, p, 2 * p]).to(torch.int32)
    p = a.double() @ b.double()
    return torch.stack([p, p, p, 2 * p])


def run(monkeypatch, device, arch, dtype, a, b):
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)
    four = lambda t: t.contiguous().reshape(1, 1, *t.shape)
    acc = torch.int32 if dtype is hk.i8 else torch.float32
    out = torch.full((1, 4, M, N), 7, dtype=acc)
    KERNELS[dtype](four(a), four(a.t()), four(b), four(b.t()), out)
    return out[0]


def has(arch, dtype):
    return any(s.a == dtype.name for s in facts.target(arch).mma_shapes)


def test_fp8_formats_are_targets_json_facts():
    for arch in facts.archs():
        target = facts.target(arch)
        assert FP8.get(arch, ()) == {"ocp": (hk.fp8e4m3, hk.fp8e5m2), "fnuz": (hk.fp8e4m3fnuz, hk.fp8e5m2fnuz),
                                     None: ()}[target.fp8_format]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942", "gfx950"])
def test_int8_is_torch_exact_integer_product_on_emulator_and_interpreter(monkeypatch, arch):
    assert has(arch, hk.i8)
    a, b = operands(hk.i8, 1)
    want = reference(hk.i8, a, b)
    for device in ("interp", "emu"):
        got = run(monkeypatch, device, arch, hk.i8, a, b)
        assert got.dtype == torch.int32
        assert torch.equal(got, want), "%s on %s:\n%s\n%s" % (device, arch, got, want)


def close_to(got, want):
    """fp32 accumulation of K products, each exact in fp32: within a few ulps of the sum's
    magnitude (the order of the sums is the hardware's)."""
    bound = 8 * K * 2.0 ** -24 * (want.abs().amax() + 1e-30)
    return bool(((got.double() - want).abs() <= bound).all())


FP8_CASES = [(arch, d) for arch, ds in FP8.items() for d in ds]


@pytest.mark.parametrize("arch,dtype", FP8_CASES, ids=["%s-%s" % (a, d.name) for a, d in FP8_CASES])
def test_fp8_is_the_float_product_on_emulator_and_interpreter(monkeypatch, arch, dtype):
    a, b = operands(dtype, 2)
    want = reference(dtype, a, b)
    # The same bytes read in the other format (OCP <-> FNUZ: bias one apart, so about twice or
    # half the product): what a runner reading the wrong format would give.
    other = OTHER[TORCH[dtype]]
    wrong = reference(dtype, a.view(other).float().nan_to_num(), b.view(other).float().nan_to_num())
    interp = run(monkeypatch, "interp", arch, dtype, a, b)
    emu = run(monkeypatch, "emu", arch, dtype, a, b)
    assert close_to(interp, want), (interp, want)
    assert close_to(emu, want), (emu, want)
    assert not close_to(emu, wrong) and not close_to(interp, wrong)


def test_each_target_builds_each_8bit_mma_it_has():
    built = []
    for arch in facts.archs():
        for dtype in (hk.i8,) + FP8.get(arch, ()):
            KERNELS[dtype].build(arch)
            built.append((arch, dtype.name))
    assert len(built) == 4 + 2 * 3  # int8 everywhere; fp8 on gfx1201, gfx950 and gfx942


def mma_line(fn):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, l in enumerate(lines) if "hk.mma_AB(" in l)


REFUSALS = [
    ("gfx1100", hk.fp8e4m3, "gfx1100 has no fp8 matrix instruction; use i8 (v_wmma_i32_16x16x16_iu8) "
                            "or convert to bf16"),
    ("gfx1100", hk.fp8e5m2, "gfx1100 has no fp8 matrix instruction"),
    ("gfx1100", hk.fp8e4m3fnuz, "gfx1100 has no fp8 matrix instruction; use i8 (v_wmma_i32_16x16x16_iu8) "
                                "or convert to bf16"),
    ("gfx1100", hk.fp8e5m2fnuz, "gfx1100 has no fp8 matrix instruction"),
    ("gfx942", hk.fp8e4m3, "gfx942's fp8 matrix instructions read the FNUZ formats, not 'f8E4M3FN' (hk.fp8e4m3, "
                           "OCP); use hk.fp8e4m3fnuz (FNUZ) or convert to bf16"),
    ("gfx942", hk.fp8e5m2, "gfx942's fp8 matrix instructions read the FNUZ formats, not 'f8E5M2' (hk.fp8e5m2, "
                           "OCP); use hk.fp8e5m2fnuz (FNUZ) or convert to bf16"),
    ("gfx950", hk.fp8e4m3fnuz, "gfx950's fp8 matrix instructions read the OCP formats, not 'f8E4M3FNUZ' "
                               "(hk.fp8e4m3fnuz, FNUZ); use hk.fp8e4m3 (OCP) or convert to bf16"),
    ("gfx950", hk.fp8e5m2fnuz, "gfx950's fp8 matrix instructions read the OCP formats, not 'f8E5M2FNUZ' "
                               "(hk.fp8e5m2fnuz, FNUZ); use hk.fp8e5m2 (OCP) or convert to bf16"),
    ("gfx1201", hk.fp8e4m3fnuz, "gfx1201's fp8 matrix instructions read the OCP formats, not 'f8E4M3FNUZ' "
                                "(hk.fp8e4m3fnuz, FNUZ); use hk.fp8e4m3 (OCP) or convert to bf16"),
    ("gfx1201", hk.fp8e5m2fnuz, "gfx1201's fp8 matrix instructions read the OCP formats, not 'f8E5M2FNUZ' "
                                "(hk.fp8e5m2fnuz, FNUZ); use hk.fp8e5m2 (OCP) or convert to bf16"),

]


@pytest.mark.parametrize("arch,dtype,message", REFUSALS, ids=["%s-%s" % (a, d.name) for a, d, _ in REFUSALS])
def test_what_the_target_lacks_is_refused_at_the_mma(arch, dtype, message):
    with pytest.raises(VerifyError) as e:
        KERNELS[dtype].trace(arch=arch)
    assert message in e.value.message
    assert e.value.location.line == mma_line(KERNELS[dtype].fn)
    assert e.value.location.file == KERNELS[dtype].fn.__code__.co_filename
    assert str(e.value).startswith("%s:%d" % (e.value.location.file, e.value.location.line))


def test_int8_k_below_gfx950s_step_is_refused():
    @hk.kernel(grid=(1,))
    def short_k(a: hk.Tensor[hk.i8], out: hk.Tensor[hk.i32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 32))
        out[0, 0, 0, 0] = hk.mma_ABt(x, a[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 32)), hk.zeros(hk.RT(hk.i32, 16, 16)))

    short_k.trace(arch="gfx942")  # 16x16x32 there
    with pytest.raises(VerifyError, match="gfx950's i8 matrix instruction takes K in multiples of 64"):
        short_k.trace(arch="gfx950")
