"""hk.ops' quantization against torch's clamp-then-cast: int8 (rounded to nearest even), fp8
e4m3 and e5m2, OCP and FNUZ; per row and per tensor, and back; bf16, fp16 and fp32, ragged and
row-padded, a row of zeros, saturating values, infinities, NaN and rounding ties; on the
interpreter and the emulator (gfx1100, gfx950, and gfx942 for FNUZ), bit for bit; OCP fp8
refused on gfx942 (FNUZ); opcheck, what they refuse, and the kernels through the gates on every
target. Then RMSNorm fused with per-token quantization
against vLLM's formulas (residual, scale_ub), within one step of the quantized grid."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import quantize
from hk.target import facts

QMAX = {torch.int8: 127.0, torch.float8_e4m3fn: 448.0, torch.float8_e5m2: 57344.0,
        torch.float8_e4m3fnuz: 240.0, torch.float8_e5m2fnuz: 57344.0}
QDTYPES = list(QMAX)
FNUZ = [torch.float8_e4m3fnuz, torch.float8_e5m2fnuz]
FP8 = [q for q in QDTYPES if q != torch.int8]


def to_q(v, qdtype):
    """torch's clamp-then-cast of values already divided by their scale."""
    if qdtype == torch.int8:
        return torch.round(v).clamp(-128, 127).to(torch.int8)
    return v.clamp(-QMAX[qdtype], QMAX[qdtype]).to(qdtype)


def per_row(x, qdtype):
    amax = x.float().abs().amax(-1, keepdim=True).clamp(min=quantize.TINY)
    scale = amax / QMAX[qdtype]
    return to_q(x.float() / scale, qdtype), scale


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert torch.equal(a.view(torch.uint8), b.view(torch.uint8)) if a.element_size() == 1 else torch.equal(a, b)


def same_bits_or_nan(a, b):
    """Bit for bit, NaN where `b` is NaN (an OCP NaN's sign bit is not kept alike everywhere)."""
    assert a.dtype == b.dtype and a.shape == b.shape
    nan = torch.isnan(b.float())
    assert torch.equal(torch.isnan(a.float()), nan)
    same_bits(a[~nan], b[~nan])


def sample(shape, dtype, seed=0, padded=False):
    g = torch.Generator().manual_seed(seed)
    cols = shape[-1] + (64 if padded else 0)
    x = (torch.randn(*shape[:-1], cols, generator=g) * 3)
    x = x.to(dtype)[..., :shape[-1]]
    x.view(-1, shape[-1])[1] = 0  # a row of zeros
    return x


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("qdtype", QDTYPES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(37, 200), (2, 3, 100)])
def test_per_row_per_tensor_and_back(interp, qdtype, dtype, shape):
    x = sample(shape, dtype)
    q, scale = torch.ops.hk.quant_per_row(x, qdtype)
    want_q, want_scale = per_row(x, qdtype)
    same_bits(q, want_q)
    same_bits(scale, want_scale)
    same_bits(torch.ops.hk.dequant(q, scale, dtype), (q.float() * scale).to(dtype))
    s = torch.tensor([0.02])  # small enough that some values saturate
    q2 = torch.ops.hk.quant(x, s, qdtype)
    same_bits(q2, to_q(x.float() / s, qdtype))
    if QMAX[qdtype] < 1000:  # int8's and e4m3's ranges are exceeded, and saturate
        low = -128.0 if qdtype == torch.int8 else -QMAX[qdtype]
        assert (q2.float().max().item(), q2.float().min().item()) == (QMAX[qdtype], low)
    same_bits(torch.ops.hk.dequant(q2, s, dtype), (q2.float() * s).to(dtype))


def test_int8_rounds_ties_to_even_and_saturates(interp):
    x = torch.tensor([[0.25, 0.75, -0.25, -0.75, 1.25, 100.0, -100.0, 0.0] * 2])
    q = torch.ops.hk.quant(x, torch.tensor([0.5]), torch.int8)
    assert q[0, :8].tolist() == [0, 2, 0, -2, 2, 127, -128, 0]


def test_out_variants_and_padded_rows(interp):
    x = sample((20, 96), torch.bfloat16, padded=True)
    q, scale = torch.empty(20, 96, dtype=torch.int8), torch.empty(20, 1)
    torch.ops.hk.quant_per_row_out(q, scale, x)
    want_q, want_scale = per_row(x, torch.int8)
    same_bits(q, want_q)
    same_bits(scale, want_scale)
    q2 = torch.empty(20, 96, dtype=torch.float8_e4m3fn)
    torch.ops.hk.quant_out(q2, x, torch.tensor([0.1]))
    same_bits(q2, to_q(x.float() / 0.1, torch.float8_e4m3fn))
    out = torch.empty(20, 96, dtype=torch.bfloat16)
    torch.ops.hk.dequant_out(out, q, scale)
    same_bits(out, (q.float() * scale).to(torch.bfloat16))


def test_scales_sliced_out_of_a_larger_tensor(interp):
    x = sample((9, 100), torch.bfloat16)
    q, scale = per_row(x, torch.int8)
    wide = torch.rand(9, 3)
    wide[:, 1:2] = scale
    # An input: a column of another tensor (strides (3, 1)) is read as it is.
    same_bits(torch.ops.hk.dequant(q, wide[:, 1:2], torch.float32), q.float() * scale)
    # An output is written in place, so one that is not one run of elements is refused.
    with pytest.raises(LaunchError, match="scale \\(shape \\(9, 1\\), strides \\(3, 1\\)\\) is not one run of "
                                          "elements, so it cannot be written in place"):
        torch.ops.hk.quant_per_row_out(torch.empty(9, 100, dtype=torch.int8), wide[:, 1:2], x)


def round_trips_on_the_emulator(monkeypatch, arch, dtype, qdtypes, static_qdtype):
    """quant_per_row, dequant and quant on the emulator, bit for bit against torch."""
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    x = sample((37, 200), dtype)
    for qdtype in qdtypes:
        q, scale = torch.ops.hk.quant_per_row(x, qdtype)
        want_q, want_scale = per_row(x, qdtype)
        same_bits(q, want_q)
        same_bits(scale, want_scale)
        same_bits(torch.ops.hk.dequant(q, scale, dtype), (q.float() * scale).to(dtype))
    s = torch.tensor([0.02])
    same_bits(torch.ops.hk.quant(x, s, static_qdtype), to_q(x.float() / s, static_qdtype))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_on_the_emulator(monkeypatch, arch):
    round_trips_on_the_emulator(monkeypatch, arch, torch.bfloat16, QDTYPES, torch.float8_e5m2)


def test_fnuz_on_the_gfx942_emulator(monkeypatch):
    round_trips_on_the_emulator(monkeypatch, "gfx942", torch.float16, FNUZ, torch.float8_e4m3fnuz)


def edge_values(qdtype):
    """fp32 values at the format's edges, in a [16, 64] tile: NaN, infinities, beyond the range,
    the largest value and the ties around it, -0.0, the least subnormal and its ties."""
    info = torch.finfo(qdtype)
    top, tiny = info.max, info.smallest_normal * 2.0 ** -(3 if "e4m3" in str(qdtype) else 2)
    step = 2.0 ** (torch.tensor(top).log2().floor().item() - (3 if "e4m3" in str(qdtype) else 2))
    v = [float("nan"), float("inf"), float("-inf"), 1e30, -1e30, top, -top, top + step / 2, top + step * 0.49,
         top - step / 2, top - step / 4, -0.0, tiny, tiny / 2, tiny * 1.5, -tiny / 2, tiny / 4, 1.0, -3.3]
    x = torch.zeros(16 * 64)
    x[:len(v)] = torch.tensor(v)
    x[64:64 + len(v)] = -torch.tensor(v)
    return x.view(16, 64)


@pytest.mark.parametrize("device, arch", [("interp", "gfx1100"), ("emu", "gfx1100"), ("emu", "gfx942")])
def test_edge_values_saturate_and_keep_nan(monkeypatch, device, arch):
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)
    for qdtype in FP8 if arch != "gfx942" else FNUZ:
        x = edge_values(qdtype)
        q = torch.ops.hk.quant(x, torch.tensor([1.0]), qdtype)
        same_bits_or_nan(q, to_q(x, qdtype))
        assert q.float()[0, 1].item() == QMAX[qdtype] and q.float()[0, 2].item() == -QMAX[qdtype]
        if qdtype in FNUZ:  # the one NaN, and no negative zero
            assert q.view(torch.uint8)[0, 0].item() == 0x80 and q.view(torch.uint8)[0, 11].item() == 0
        # Per row: a row holding NaN gets a NaN scale (torch's amax), one holding inf an inf
        # scale (finite values go to zero, inf to NaN).
        rows = torch.randn(16, 64)
        rows[2, 5], rows[4, 7] = float("nan"), float("inf")
        q, scale = torch.ops.hk.quant_per_row(rows, qdtype)
        want_q, want_scale = per_row(rows, qdtype)
        same_bits_or_nan(q, want_q)
        same_bits_or_nan(scale, want_scale)
        assert torch.isnan(scale[2]).item() and torch.isinf(scale[4]).item()


def test_ocp_fp8_is_refused_on_gfx942_and_fnuz_and_int8_run(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.setenv("HK_ARCH", "gfx942")
    x = sample((16, 64), torch.bfloat16)
    with pytest.raises(LaunchError, match="FNUZ") as error:
        torch.ops.hk.quant_per_row(x, torch.float8_e4m3fn)
    assert "quantize to torch.float8_e4m3fnuz" in str(error.value)
    same_bits(torch.ops.hk.quant_per_row(x, torch.int8)[0], per_row(x, torch.int8)[0])
    same_bits(torch.ops.hk.quant_per_row(x, torch.float8_e4m3fnuz)[0], per_row(x, torch.float8_e4m3fnuz)[0])


def test_bad_arguments_are_launch_errors(interp):
    x = sample((4, 64), torch.bfloat16)
    with pytest.raises(LaunchError, match="cannot quantize to torch.int16") as error:
        torch.ops.hk.quant_per_row(x, torch.int16)
    assert "torch.float8_e4m3fnuz" in str(error.value)
    with pytest.raises(LaunchError, match="scale is torch.float32 \\(2,\\)"):
        torch.ops.hk.quant(x, torch.ones(2), torch.int8)
    with pytest.raises(LaunchError, match="scale is torch.float16"):
        torch.ops.hk.quant(x, torch.ones(1, dtype=torch.float16), torch.int8)
    with pytest.raises(LaunchError, match="q is \\(4, 32\\) on cpu; it must be \\(4, 64\\)"):
        torch.ops.hk.quant_out(torch.empty(4, 32, dtype=torch.int8), x, torch.ones(1))
    with pytest.raises(LaunchError, match="scale is torch.float32 \\(3, 1\\)"):
        torch.ops.hk.dequant(torch.zeros(4, 64, dtype=torch.int8), torch.ones(3, 1), torch.bfloat16)


def test_opcheck(interp):
    x = sample((16, 64), torch.bfloat16)
    q, scale = per_row(x, torch.int8)
    for args, op in (((x, torch.int8), torch.ops.hk.quant_per_row),
                     ((x, torch.tensor([0.1]), torch.float8_e4m3fn), torch.ops.hk.quant),
                     ((x, torch.float8_e4m3fnuz), torch.ops.hk.quant_per_row),
                     ((x, torch.tensor([0.1]), torch.float8_e5m2fnuz), torch.ops.hk.quant),
                     ((q, scale, torch.bfloat16), torch.ops.hk.dequant),
                     ((torch.empty_like(q), torch.empty_like(scale), x), torch.ops.hk.quant_per_row_out),
                     ((torch.empty_like(q), x, torch.tensor([0.1])), torch.ops.hk.quant_out),
                     ((torch.empty_like(x), q, scale), torch.ops.hk.dequant_out)):
        torch.library.opcheck(op.default, args)


@pytest.mark.parametrize("arch", facts.archs())
def test_the_kernels_pass_the_gates(arch):
    # The FNUZ conversions are software ones, and build on every target.
    forms = [(hk.bf16, q) for q in (hk.i8, hk.fp8e4m3, hk.fp8e5m2, hk.fp8e4m3fnuz, hk.fp8e5m2fnuz)] + [
        (hk.fp32, hk.i8), (hk.fp16, hk.fp8e4m3fnuz)]
    for dtype, qdtype in forms:
        for kernel in (quantize.quant_per_row_kernel(dtype, qdtype), quantize.quant_kernel(dtype, qdtype),
                       quantize.dequant_kernel(qdtype, dtype, True), quantize.dequant_kernel(qdtype, dtype, False)):
            built = kernel.build(arch, divisors=1)
            assert built.meta.spills == 0, built.report()


# RMSNorm fused with per-token quantization (vLLM's rms_norm_dynamic_per_token_quant) -------------

def rms_quant_reference(x, weight, eps, qdtype, scale_ub=None, residual=None):
    """vLLM's: the sum in fp32, normalized, rounded to x's dtype, times the weight in x's dtype;
    scale = max(min(amax, ub) * (1 / QMAX), floor); int8 y * (1 / scale) rounded, fp8 y / scale;
    returns (q, scale, the new residual)."""
    s = x.float() + (residual.float() if residual is not None else 0.0)
    y = (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight
    amax = y.abs().amax(-1, keepdim=True).float()
    if scale_ub is not None:
        amax = amax.clamp(max=scale_ub)
    scale = (amax * (1.0 / QMAX[qdtype])).clamp(min=quantize.min_scale(quantize.QDTYPES[qdtype][0]))
    v = y.float() * (1.0 / scale) if qdtype == torch.int8 else y.float() / scale
    return to_q(v, qdtype), scale, s.to(x.dtype) if residual is not None else None


def close_q(q, want, qdtype):
    """q within one step of its grid of `want` (rsqrt's last bit may differ from torch's)."""
    assert q.dtype == want.dtype and q.shape == want.shape
    a, b = q.float(), want.float()
    if qdtype == torch.int8:
        assert (a - b).abs().max() <= 1
        assert (a != b).float().mean() < 0.01
    else:
        mantissa = 3 if "e4m3" in str(qdtype) else 2
        step = 2.0 ** (torch.floor(torch.log2(b.abs().clamp(min=2.0 ** -6))) - mantissa)
        assert bool(((a - b).abs() <= step).all())


@pytest.mark.parametrize("qdtype, with_residual, bounded", [(q, r, b) for q in QDTYPES for r, b in (
    (False, False), (True, False), (True, True)) if not (b and q == torch.int8)])  # (scale_ub: fp8's)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_rms_norm_quant_on_the_interpreter(interp, qdtype, dtype, with_residual, bounded):
    x = sample((37, 200), dtype, padded=True)
    g = torch.Generator().manual_seed(3)
    weight = (torch.randn(200, generator=g) * 0.5 + 1).to(dtype)
    residual = (torch.randn(37, 200, generator=g)).to(dtype) if with_residual else None
    ub = torch.tensor([0.6]) if bounded else None  # below most rows' amax: the bound is active
    want_q, want_scale, want_res = rms_quant_reference(x, weight, 1e-6, qdtype, ub, residual)
    mine = residual.clone() if with_residual else None
    q, scale = torch.ops.hk.rms_norm_dynamic_per_token_quant(x, weight, 1e-6, qdtype, ub, mine)
    close_q(q, want_q, qdtype)
    torch.testing.assert_close(scale, want_scale, rtol=1e-6, atol=0)
    if with_residual:
        same_bits(mine, want_res)
    if bounded:
        assert (scale == ub * (1.0 / QMAX[qdtype])).float().mean() > 0.5


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950", "gfx942"])
def test_rms_norm_quant_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    x = sample((20, 300), torch.bfloat16)
    weight = torch.linspace(0.5, 1.5, 300).to(torch.bfloat16)
    residual = sample((20, 300), torch.bfloat16, seed=4)
    forms = ((torch.float8_e4m3fnuz, residual, torch.tensor([1.0])), (torch.float8_e5m2fnuz, None, None))
    if arch != "gfx942":
        forms += ((torch.int8, residual, None), (torch.float8_e4m3fn, None, torch.tensor([1.0])))
    for qdtype, res, ub in forms:
        want_q, want_scale, want_res = rms_quant_reference(x, weight, 1e-5, qdtype, ub, res)
        mine = res.clone() if res is not None else None
        q, scale = torch.ops.hk.rms_norm_dynamic_per_token_quant(x, weight, 1e-5, qdtype, ub, mine)
        close_q(q, want_q, qdtype)
        torch.testing.assert_close(scale, want_scale, rtol=1e-6, atol=0)
        if res is not None:
            same_bits(mine, want_res)


def test_rms_norm_quant_opcheck_and_refusals(interp, monkeypatch):
    x = sample((16, 64), torch.bfloat16)
    w = torch.ones(64, dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.hk.rms_norm_dynamic_per_token_quant.default,
                          (x, w, 1e-6, torch.int8, None, x.clone()))
    op = torch.ops.hk.rms_norm_dynamic_per_token_quant
    with pytest.raises(LaunchError, match=r"weight has shape \[32\]; it must be \[64\]"):
        op(x, w[:32], 1e-6, torch.int8)
    with pytest.raises(LaunchError, match=r"residual has shape \[16, 32\]"):
        op(x, w, 1e-6, torch.int8, None, x[:, :32].clone())
    with pytest.raises(LaunchError, match="scale_ub bounds fp8 scales"):
        op(x, w, 1e-6, torch.int8, torch.tensor([1.0]))
    with pytest.raises(LaunchError, match="scale_ub is torch.float16"):
        op(x, w, 1e-6, torch.float8_e4m3fn, torch.tensor([1.0], dtype=torch.float16))
    with pytest.raises(LaunchError, match="cannot quantize to torch.int16"):
        op(x, w, 1e-6, torch.int16)
    torch.library.opcheck(torch.ops.hk.rms_norm_dynamic_per_token_quant.default,
                          (x, w, 1e-6, torch.float8_e4m3fnuz, torch.tensor([1.0]), x.clone()))
    monkeypatch.setenv("HK_ARCH", "gfx942")
    with pytest.raises(LaunchError, match="FNUZ"):
        op(x, w, 1e-6, torch.float8_e4m3fn)


@pytest.mark.parametrize("arch", facts.archs())
def test_the_rms_quant_kernels_pass_the_gates(arch):
    fnuz = facts.target(arch).fp8_format == "fnuz"  # (OCP fp8 is refused there)
    qdtypes = (hk.i8, hk.fp8e4m3fnuz) + (() if fnuz else (hk.fp8e4m3,))
    for qdtype in qdtypes:
        for residual, bounded in ((True, qdtype != hk.i8), (False, False)):
            built = quantize.rms_quant_kernel(hk.bf16, qdtype, residual, bounded).build(arch, divisors=1)
            assert built.meta.spills == 0, built.report()
