"""W8A8 layers built SGLang's way: an int8 layer (W8A8Int8Config, its linear method's own
processing as on a GPU) on hk.ops.int8_scaled_mm with hk's per-token quantizer, and fp8 layers
(W8A8Fp8Config, Fp8Config) through apply_fp8_linear on hk.ops.scaled_mm, against the dequantized
product and SGLang's own computation; calls routed to the engine reach SGLang's own code. SGLang's
FNUZ fp8 (its on MI300) runs on hk on gfx942, its activations quantized by hk's quantizers (not
SGLang's), and stays SGLang's elsewhere."""

import pytest
import torch
import torch.nn.functional as F

from hk_engine import counters
from hk_engine.plugin import reset_uncovered_warnings

K, N = 64, 96


@pytest.fixture
def gpu_processing(monkeypatch):
    """The method's weight processing as on a GPU (transposed to [K, N]): on a CPU without AMX or
    Arm64 SGLang refuses the method."""
    from sglang.srt.layers.quantization import w8a8_int8

    monkeypatch.setattr(w8a8_int8, "_is_cpu", False)
    monkeypatch.setattr(w8a8_int8, "_is_cpu_arm64", False)


def build(bias):
    from sglang.srt.layers.linear import ColumnParallelLinear
    from sglang.srt.layers.quantization.w8a8_int8 import W8A8Int8Config

    config = W8A8Int8Config.from_config({"quant_method": "w8a8_int8"})
    layer = ColumnParallelLinear(K, N, bias=bias, params_dtype=torch.bfloat16, quant_config=config,
                                 prefix="model.layers.0.mlp.up_proj")
    assert type(layer.quant_method).__name__ == "W8A8Int8LinearMethod"
    g = torch.Generator().manual_seed(0)
    q = torch.randint(-127, 128, (N, K), generator=g, dtype=torch.int8)
    s = torch.rand(N, 1, generator=g) * 0.002 + 0.001
    layer.weight.data.copy_(q)
    layer.weight_scale.data.copy_(s)
    if bias:
        layer.bias.data.copy_(torch.randn(N, generator=g).to(torch.bfloat16))
    layer.quant_method.process_weights_after_loading(layer)
    assert layer.weight.shape == (K, N) and layer.weight.stride() == (1, K)
    return layer, q, s


def test_a_w8a8_int8_layer_runs_on_hk(patched, gpu_processing):
    layer, q, s = build(bias=True)
    x = torch.randn(2, 3, K).to(torch.bfloat16)
    out, _ = layer(x)
    assert out.shape == (2, 3, N) and out.dtype == torch.bfloat16
    want = F.linear(x.float(), q.float() * s, layer.bias.float())
    # Within the activations' per-token quantization error (a step of max|x| / 127).
    torch.testing.assert_close(out.float(), want, rtol=3e-2, atol=3e-2)
    assert counters.snapshot() == {"sglang.w8a8_int8": {"hk": 1}}


def test_routed_to_the_engine_and_uncovered_calls_reach_sglangs_apply(patched, gpu_processing, routes, monkeypatch):
    from sglang.srt.layers.quantization import w8a8_int8

    # SGLang's quantizer (Triton) and GEMM (sgl_kernel's, imported on CUDA only) do not run on a
    # CPU: torch stand-ins, recording that SGLang's own apply called them.
    reached = []

    def per_token_quant_int8(x):
        scale = x.float().abs().amax(-1, keepdim=True) / 127
        return torch.round(x.float() / scale).clamp(-128, 127).to(torch.int8), scale

    def int8_scaled_mm(a, b, scale_a, scale_b, out_dtype, bias=None):
        reached.append(a.shape[0])
        out = (a.float() @ b.float()) * scale_a * scale_b.view(1, -1)
        return (out if bias is None else out + bias.float()).to(out_dtype)

    monkeypatch.setattr(w8a8_int8, "per_token_quant_int8", per_token_quant_int8)
    monkeypatch.setattr(w8a8_int8, "int8_scaled_mm", int8_scaled_mm, raising=False)
    layer, _, _ = build(bias=False)
    routes({"target": "any", "ops": {"int8_scaled_mm": [{"when": {"m": [1, 4]}, "route": "hk"}]}})
    x = torch.randn(8, K).to(torch.bfloat16)
    engine = layer.quant_method.apply(layer, x)
    assert counters.snapshot() == {"sglang.w8a8_int8": {"engine": 1}} and reached == [8]
    # The same rows on hk (4 at a time, as the table routes): SGLang's numbers, to bf16's rounding.
    hk_out = torch.cat([layer.quant_method.apply(layer, x[:4]), layer.quant_method.apply(layer, x[4:])])
    torch.testing.assert_close(hk_out.float(), engine.float(), rtol=1.6e-2, atol=1e-2)
    assert counters.snapshot() == {"sglang.w8a8_int8": {"engine": 1, "hk": 2}} and reached == [8]
    reset_uncovered_warnings()
    with pytest.warns(UserWarning, match=r"sglang.w8a8_int8: .* \(dtype\)"):
        layer.quant_method.apply(layer, torch.randn(2, K))
    assert counters.snapshot()["sglang.w8a8_int8"] == {"engine": 1, "hk": 2, "engine:uncovered": 1}
    assert reached == [8, 2]


def fp8_layer(config, per_channel, bias=False):
    from sglang.srt.layers.linear import ColumnParallelLinear

    layer = ColumnParallelLinear(K, N, bias=bias, params_dtype=torch.bfloat16, quant_config=config,
                                 prefix="model.layers.0.mlp.up_proj")
    g = torch.Generator().manual_seed(1)
    w = torch.randn(N, K, generator=g) * 0.2
    s = (w.abs().amax(-1, keepdim=True) if per_channel else w.abs().amax().reshape(1)) / 448.0
    q = (w / s).to(torch.float8_e4m3fn)
    layer.weight.data.copy_(q)
    layer.weight_scale.data.copy_(s.expand(layer.weight_scale.shape))
    if bias:
        layer.bias.data.copy_(torch.randn(N, generator=g).to(torch.bfloat16))
    layer.quant_method.process_weights_after_loading(layer)
    return layer, q.float() * s


@pytest.fixture
def sglang_fp8_quant(monkeypatch):
    """SGLang's per-token fp8 quantizer (Triton's, which a CPU cannot run) in torch."""
    from sglang.srt.layers.quantization import fp8_utils

    def per_token_group_quant_fp8(x, group_size, **kwargs):
        assert group_size == x.shape[-1]
        scale = (x.float().abs().amax(-1, keepdim=True) / 448.0).clamp(min=1e-10)
        return (x.float() / scale).clamp(-448, 448).to(torch.float8_e4m3fn), scale

    monkeypatch.setattr(fp8_utils, "per_token_group_quant_fp8", per_token_group_quant_fp8)


def test_a_w8a8_fp8_layer_runs_on_hk(patched, routes, sglang_fp8_quant):
    from sglang.srt.layers.quantization.w8a8_fp8 import W8A8Fp8Config

    layer, w = fp8_layer(W8A8Fp8Config(is_checkpoint_fp8_serialized=True), per_channel=True, bias=True)
    assert layer.weight.shape == (K, N) and layer.weight.dtype == torch.float8_e4m3fn
    x = torch.randn(2, 3, K, generator=torch.Generator().manual_seed(2)).to(torch.bfloat16)
    out, _ = layer(x)
    assert out.shape == (2, 3, N) and out.dtype == torch.bfloat16
    # e4m3's activations are 3 bits of mantissa: within 0.15 of the unquantized product (|out| ~ 1.6).
    torch.testing.assert_close(out.float(), F.linear(x.float(), w, layer.bias.float()), rtol=0.1, atol=0.15)
    assert counters.snapshot() == {"sglang.w8a8_fp8": {"hk": 1}}
    # SGLang's own computation (its per-token quantizer, then its unfused dequantizing GEMM; its
    # CPU path takes tokens as rows only).
    routes({"target": "any", "ops": {}})
    x2 = x.view(-1, K)
    torch.testing.assert_close(layer(x2)[0].float(), out.view(-1, N).float(), rtol=1.6e-2, atol=1e-2)
    assert counters.snapshot() == {"sglang.w8a8_fp8": {"hk": 1, "engine": 1}}


@pytest.mark.parametrize("input_scale", [None, 3.0 / 448])
def test_apply_fp8_linear_with_per_tensor_scales_runs_on_hk(patched, input_scale):
    # Fp8Config's per-tensor layers call it so (their loading requantizes with sgl_kernel, which
    # a CPU build lacks): per-tensor weight scales, activations quantized per tensor by the static
    # scale or dynamically.
    from sglang.srt.layers.quantization import fp8_utils

    g = torch.Generator().manual_seed(1)
    w = torch.randn(N, K, generator=g) * 0.2
    s = w.abs().amax().reshape(1) / 448.0
    q = (w / s).to(torch.float8_e4m3fn)
    x = torch.randn(5, K, generator=g).to(torch.bfloat16)
    scale = None if input_scale is None else torch.tensor([input_scale])
    out = fp8_utils.apply_fp8_linear(x, q.t(), s, input_scale=scale)
    torch.testing.assert_close(out.float(), F.linear(x.float(), q.float() * s), rtol=0.1, atol=0.15)
    assert counters.snapshot()["sglang.w8a8_fp8"] == {"hk": 1}
    reset_uncovered_warnings()  # (warned once per process)
    with pytest.warns(UserWarning, match=r"sglang.w8a8_fp8: .* \(scale bound\)"):
        with pytest.raises(Exception):  # SGLang's own path, which needs sgl_kernel here
            fp8_utils.apply_fp8_linear(x, q.t(), s, input_scale=scale, input_scale_ub=torch.tensor([1.0]))
    assert counters.snapshot()["sglang.w8a8_fp8"] == {"hk": 1, "engine:uncovered": 1}


FNUZ_MAX = 224.0  # the largest value SGLang's quantizers write in float8_e4m3fnuz


@pytest.fixture
def sglang_fnuz(monkeypatch):
    """SGLang as on MI300 (gfx942): its fp8 is float8_e4m3fnuz (read at import: set here as there),
    its quantizers (Triton's and sgl_kernel's, which a CPU cannot run) in torch, as they compute,
    and torch._scaled_mm on FNUZ operands as hipBLASLt computes it: torch's CPU build takes them
    or not depending on the host (its oneDNN path, chosen on CPUs with AMX, refuses FNUZ)."""
    from sglang.srt.layers.quantization import fp8_utils

    fnuz = torch.float8_e4m3fnuz
    scaled_mm = torch._scaled_mm

    def fnuz_scaled_mm(a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, **kwargs):
        if a.dtype != fnuz:
            return scaled_mm(a, b, scale_a, scale_b, bias=bias, scale_result=scale_result, out_dtype=out_dtype,
                             **kwargs)
        assert b.dtype == fnuz and scale_result is None and not kwargs, (b.dtype, kwargs)
        out = (a.float() @ b.float()) * scale_a.float() * scale_b.float()
        return (out if bias is None else out + bias.float()).to(out_dtype or a.dtype)

    monkeypatch.setattr(torch, "_scaled_mm", fnuz_scaled_mm)

    def to_fnuz(x, scale):
        return (x.float() / scale).clamp(-FNUZ_MAX, FNUZ_MAX).to(fnuz), scale

    def per_token_group_quant_fp8(x, group_size, **kwargs):
        assert group_size == x.shape[-1]
        return to_fnuz(x, (x.float().abs().amax(-1, keepdim=True) / FNUZ_MAX).clamp(min=1e-10))

    def scaled_fp8_quant(input, scale=None, num_token_padding=None, use_per_token_if_dynamic=False):
        assert scale is None and not num_token_padding
        if use_per_token_if_dynamic:
            return per_token_group_quant_fp8(input, input.shape[-1])
        return to_fnuz(input, (input.float().abs().amax() / FNUZ_MAX).clamp(min=1e-12).reshape(1))

    monkeypatch.setattr(fp8_utils, "fp8_dtype", fnuz)
    monkeypatch.setattr(fp8_utils, "per_token_group_quant_fp8", per_token_group_quant_fp8)
    monkeypatch.setattr(fp8_utils, "scaled_fp8_quant", scaled_fp8_quant)
    monkeypatch.setattr(fp8_utils, "static_quant_fp8", lambda x, x_s, repeat_scale=False: to_fnuz(x, x_s))
    return fp8_utils


def fnuz_weight(per_channel, input_scale=None, seed=3):
    """An OCP checkpoint's weight [N, K] converted to FNUZ by SGLang (its scales doubled), with the
    OCP weight dequantized."""
    from sglang.srt.layers.quantization.fp8_utils import normalize_e4m3fn_to_e4m3fnuz

    w = torch.randn(N, K, generator=torch.Generator().manual_seed(seed)) * 0.2
    s = (w.abs().amax(-1, keepdim=True) if per_channel else w.abs().amax().reshape(1)) / 448.0
    q = (w / s).to(torch.float8_e4m3fn)
    scale = None if input_scale is None else torch.tensor([input_scale])
    qz, sz, iz = normalize_e4m3fn_to_e4m3fnuz(q.clone(), s, scale)
    return qz, sz, iz, q.float() * s


HK_FNUZ_MAX = 240.0  # float8_e4m3fnuz's largest value, hk's QMAX


def hk_fnuz_quant(x, input_scale, per_token):
    """What hk's quantizers give, in torch: clamp-then-cast to float8_e4m3fnuz by the static
    scale, per token (max|x| / 240) or per tensor."""
    x = x.float()
    if input_scale is not None:
        scale = input_scale.reshape(1)
    elif per_token:
        scale = x.abs().amax(-1, keepdim=True).clamp(min=1e-30) / HK_FNUZ_MAX
    else:
        scale = (x.abs().amax() / HK_FNUZ_MAX).clamp(min=1e-12).reshape(1)
    return (x / scale).clamp(-HK_FNUZ_MAX, HK_FNUZ_MAX).to(torch.float8_e4m3fnuz), scale


# (A static scale that saturates nothing: |x| < 5.)
@pytest.mark.parametrize("per_channel, input_scale", [(True, None), (False, None), (False, 5.0 / 448)])
def test_fnuz_fp8_runs_on_hk_on_gfx942(patched, routes, sglang_fnuz, monkeypatch, per_channel, input_scale):
    monkeypatch.setenv("HK_ARCH", "gfx942")
    sglangs = []  # calls of SGLang's own quantizers
    for name in ("static_quant_fp8", "scaled_fp8_quant", "per_token_group_quant_fp8"):
        own = getattr(sglang_fnuz, name)
        monkeypatch.setattr(sglang_fnuz, name,
                            lambda *a, _own=own, _name=name, **k: sglangs.append(_name) or _own(*a, **k))
    qz, sz, iz, w = fnuz_weight(per_channel, input_scale)
    x = torch.randn(5, K, generator=torch.Generator().manual_seed(4)).to(torch.bfloat16)
    out = sglang_fnuz.apply_fp8_linear(x, qz.t(), sz, input_scale=iz)
    assert out.shape == (5, N) and out.dtype == torch.bfloat16
    assert counters.snapshot()["sglang.w8a8_fp8"] == {"hk": 1}
    assert sglangs == []  # hk quantized the activations
    # The float64 product of what hk's quantizer gives: hk's fp8 MFMA adds only bf16's rounding.
    xq, xs = hk_fnuz_quant(x, iz, per_channel)
    want = (xq.double() * xs.double()) @ (qz.double() * sz.double().reshape(-1, 1)).t()
    torch.testing.assert_close(out.float(), want.float(), rtol=1.6e-2, atol=1e-2)
    # The OCP checkpoint's answer, within e4m3's activation error.
    torch.testing.assert_close(out.float(), F.linear(x.float(), w), rtol=0.1, atol=0.15)
    if per_channel:  # SGLang's own computation (on a CPU: per-token activations by max|x| / 224,
        # its unfused GEMM): another grid, as near the OCP checkpoint's answer as hk's.
        routes({"target": "any", "ops": {}})
        engine = sglang_fnuz.apply_fp8_linear(x, qz.t(), sz)
        assert sglangs
        exact = F.linear(x.float(), w)
        torch.testing.assert_close(engine.float(), exact, rtol=0.1, atol=0.15)
        hk_error, sglang_error = ((t.float() - exact).abs().mean().item() for t in (out, engine))
        assert hk_error < 1.25 * sglang_error, (hk_error, sglang_error)
        assert counters.snapshot()["sglang.w8a8_fp8"] == {"hk": 1, "engine": 1}


def test_hks_quantizers_write_fnuz_where_sglang_would(patched, sglang_fnuz, monkeypatch):
    # The quantizer apply_fp8_linear hands hk's GEMM: FNUZ bytes bit for bit as torch casts them,
    # saturating a static scale's outliers at 240, on gfx942.
    from hk_sglang import w8a8

    monkeypatch.setenv("HK_ARCH", "gfx942")
    qz, sz, iz, _ = fnuz_weight(False, 1.0 / 448)
    x = (torch.randn(7, K, generator=torch.Generator().manual_seed(5)) * 200).to(torch.bfloat16)
    for input_scale, weight_scale, per_token in ((iz, sz, False), (None, sz, False), (None, sz, True),
                                                 (None, torch.ones(N, 1), False)):
        q, scale = w8a8.fp8_quantizer(qz.t(), weight_scale, input_scale, per_token)(x)
        want_q, want_scale = hk_fnuz_quant(x, input_scale, per_token or weight_scale.numel() != 1)
        assert q.dtype == torch.float8_e4m3fnuz
        assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
        assert torch.equal(scale.reshape(want_scale.shape), want_scale)
    assert w8a8.fp8_quantizer(qz.t(), sz, iz, False)(x)[0].float().abs().max().item() == HK_FNUZ_MAX


def test_fnuz_fp8_stays_sglangs_on_other_targets(patched, sglang_fnuz, monkeypatch):
    # gfx950's matrix instructions read OCP fp8, not FNUZ: SGLang's own path serves, counted.
    monkeypatch.setenv("HK_ARCH", "gfx950")
    qz, sz, _, w = fnuz_weight(True)
    x = torch.randn(3, K).to(torch.bfloat16)
    reset_uncovered_warnings()
    with pytest.warns(UserWarning, match=r"sglang.w8a8_fp8: .* \(target\)"):
        out = sglang_fnuz.apply_fp8_linear(x, qz.t(), sz)
    torch.testing.assert_close(out.float(), F.linear(x.float(), w), rtol=0.1, atol=0.15)
    assert counters.snapshot()["sglang.w8a8_fp8"] == {"engine:uncovered": 1}


def test_ocp_fp8_stays_sglangs_on_gfx942(patched, sglang_fp8_quant, monkeypatch):
    # hk's quantizers write no OCP fp8 on gfx942 (its fp8 is FNUZ): SGLang's own path, counted.
    from sglang.srt.layers.quantization import fp8_utils

    monkeypatch.setenv("HK_ARCH", "gfx942")
    _, _, _, w = fnuz_weight(True)
    s = w.abs().amax(-1, keepdim=True) / 448.0
    q = (w / s).to(torch.float8_e4m3fn)
    x = torch.randn(3, K).to(torch.bfloat16)
    reset_uncovered_warnings()
    with pytest.warns(UserWarning, match=r"sglang.w8a8_fp8: .* \(target\)"):
        out = fp8_utils.apply_fp8_linear(x, q.t(), s)
    torch.testing.assert_close(out.float(), F.linear(x.float(), q.float() * s), rtol=0.1, atol=0.15)
    assert counters.snapshot()["sglang.w8a8_fp8"] == {"engine:uncovered": 1}
