"""W8A8 layers built SGLang's way: an int8 layer (W8A8Int8Config, its linear method's own
processing as on a GPU) on hk.ops.int8_scaled_mm with hk's per-token quantizer, and fp8 layers
(W8A8Fp8Config, Fp8Config) through apply_fp8_linear on hk.ops.scaled_mm, against the dequantized
product and SGLang's own computation; calls routed to the engine reach SGLang's own code. SGLang's
FNUZ fp8 (its on MI300) runs on hk on gfx942, its activations quantized by hk's quantizers (not
SGLang's), and stays SGLang's elsewhere. Block-scaled fp8 layers (Fp8Config with 128 x 128
weight blocks, CompressedTensors' block strategy) run through triton_w8a8_block_fp8_linear on
hk.ops.scaled_mm's block scales, against the block-dequantized product and SGLang's own block
path; the calls hk does not cover reach SGLang's with their reason counted."""

import pytest
import torch
import torch.nn.functional as F

from hk_engine import counters
from hk_engine.plugin import reset_uncovered_warnings
from hk_engine.testing.fnuz import scaled_mm_on_fnuz

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
    x = torch.randn(2, 3, K, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    out, _ = layer(x)
    assert out.shape == (2, 3, N) and out.dtype == torch.bfloat16
    w = q.float() * s
    want = F.linear(x.float(), w, layer.bias.float())
    # Within the activations' per-token quantization error: each element of x off by at most half
    # a step (max|x| / 127), each output by that times the row's sum of |w|, then rounded to bf16.
    half_step = x.float().abs().amax(-1, keepdim=True) / 254
    bound = half_step * w.abs().sum(-1) + want.abs() * 2.0 ** -8 + 1e-4
    assert ((out.float() - want).abs() <= bound).all(), ((out.float() - want).abs() / bound).max()
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
    and torch._scaled_mm on FNUZ operands as the GPU computes it (hk_engine.testing.fnuz)."""
    from sglang.srt.layers.quantization import fp8_utils

    fnuz = torch.float8_e4m3fnuz
    scaled_mm_on_fnuz(monkeypatch)

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


# Block-scaled fp8 (DeepSeek's, Qwen3-FP8's): 128 x 128 weight blocks, activations per token per
# 128 columns, through triton_w8a8_block_fp8_linear (the function SGLang's block dispatcher hands
# the layer where it takes its Triton GEMM: ROCm without AITER, and this CPU).

BK, BN = 256, 384  # two groups of K, three blocks of N
BLOCK_FN = "sglang.srt.layers.quantization.fp8_utils.triton_w8a8_block_fp8_linear"


@pytest.fixture
def block_processing(monkeypatch):
    """Fp8LinearMethod's block processing as on a GPU: on a CPU SGLang repacks the weight for
    its AMX kernel (and refuses a CPU without AMX)."""
    from sglang.srt.layers.quantization import fp8

    monkeypatch.setattr(fp8, "_is_cpu", False)
    return fp8


@pytest.fixture
def sglang_block(monkeypatch):
    """SGLang's own block path's Triton kernels (its per-token-group quantizers and block GEMM,
    which a CPU cannot run) in torch, as they compute: scales max|group| / the platform's fp8 max
    (224 for FNUZ), the last group partial when K is not a multiple of it. `reached` records the
    GEMM's calls, so a test knows SGLang's own function ran."""
    from sglang.srt.layers.quantization import fp8_utils

    reached = []

    def per_token_group_quant_fp8(x, group_size, column_major_scales=False, scale_ue8m0=False, **kwargs):
        assert not column_major_scales
        fmax, chunks = fp8_utils.fp8_max, x.float().split(group_size, -1)
        scales = torch.stack([c.abs().amax(-1).clamp(min=1e-10) / fmax for c in chunks], -1)
        if scale_ue8m0:
            scales = torch.exp2(torch.ceil(torch.log2(scales)))
        q = torch.cat([(c / scales[:, i:i + 1]).clamp(-fmax, fmax) for i, c in enumerate(chunks)], -1)
        return q.to(fp8_utils.fp8_dtype), scales

    def w8a8_block_fp8_matmul_triton(A, B, As, Bs, block_size, output_dtype=torch.float16):
        reached.append(tuple(A.shape))
        return (block_dequantize(A, As, (1, block_size[1])) @ block_dequantize(B, Bs, block_size).t()).to(output_dtype)

    monkeypatch.setattr(fp8_utils, "per_token_group_quant_fp8", per_token_group_quant_fp8)
    monkeypatch.setattr(fp8_utils, "sglang_per_token_group_quant_fp8", per_token_group_quant_fp8)
    monkeypatch.setattr(fp8_utils, "w8a8_block_fp8_matmul_triton", w8a8_block_fp8_matmul_triton)
    return reached


def block_dequantize(q, scale, block):
    """q [R, C] times its scale per block [ceil(R / block[0]), ceil(C / block[1])], in float64."""
    r, c = q.shape
    return q.double() * scale.double().repeat_interleave(block[0], 0).repeat_interleave(block[1], 1)[:r, :c]


def block_layer(k=BK, n=BN, block=(128, 128), bias=False, seed=7):
    """An Fp8LinearMethod layer with weight_block_size `block` as SGLang builds it for a
    DeepSeek-style checkpoint: an e4m3 weight [N, K] and fp32 scales, one per block, apart (so that
    a scale applied to the wrong block shows)."""
    from sglang.srt.layers.linear import ColumnParallelLinear
    from sglang.srt.layers.quantization.fp8 import Fp8Config

    config = Fp8Config(is_checkpoint_fp8_serialized=True, activation_scheme="dynamic", weight_block_size=list(block))
    layer = ColumnParallelLinear(k, n, bias=bias, params_dtype=torch.bfloat16, quant_config=config,
                                 prefix="model.layers.0.mlp.up_proj")
    assert type(layer.quant_method).__name__ == "Fp8LinearMethod" and layer.weight.shape == (n, k)
    g = torch.Generator().manual_seed(seed)
    layer.weight.data.copy_((torch.randn(n, k, generator=g) * 100).clamp(-448, 448).to(torch.float8_e4m3fn))
    layer.weight_scale_inv.data.copy_(torch.rand(layer.weight_scale_inv.shape, generator=g) * 0.004 + 0.0005)
    if bias:
        layer.bias.data.copy_(torch.randn(n, generator=g).to(torch.bfloat16))
    ocp = block_dequantize(layer.weight, layer.weight_scale_inv, block)  # before SGLang's processing
    layer.quant_method.process_weights_after_loading(layer)
    return layer, ocp


def hk_group_quant(x, qdtype=torch.float8_e4m3fn, qmax=448.0):
    """What hk's quantizer gives for the block GEMM, in torch: per token per 128 columns,
    scale max|group| / the format's largest value, clamp-then-cast."""
    groups = x.float().reshape(-1, x.shape[-1] // 128, 128)
    scale = groups.abs().amax(-1, keepdim=True).clamp(min=1e-30) / qmax
    return (groups / scale).clamp(-qmax, qmax).to(qdtype).flatten(1), scale.squeeze(-1)


def hk_block_product(layer, x, qdtype=torch.float8_e4m3fn, qmax=448.0):
    """The float64 product of hk's quantization of x and the layer's block-scaled weight: what
    hk's kernel computes before rounding to bf16."""
    xq, xs = hk_group_quant(x.reshape(-1, x.shape[-1]), qdtype, qmax)
    out = block_dequantize(xq, xs, (1, 128)) @ block_dequantize(layer.weight, layer.weight_scale_inv, (128, 128)).t()
    return out.reshape(*x.shape[:-1], -1)


def near(out, exact, error=0.04):
    """out within e4m3's activation rounding of the unquantized product: 3 bits of mantissa, a
    relative error of about 2.7% over these sums (the largest of 40 random layers; elementwise the
    error of a small output can be large)."""
    diff = (out.double() - exact.double()).norm() / exact.double().norm()
    assert diff < error, diff.item()


@pytest.fixture
def scaled_mm_calls(monkeypatch):
    """The calls of hk.ops.scaled_mm, with their scales."""
    import hk.ops

    calls, own = [], hk.ops.scaled_mm

    def scaled_mm(a, b, scale_a, scale_b, *args, **kwargs):
        calls.append((a, b, scale_a, scale_b))
        return own(a, b, scale_a, scale_b, *args, **kwargs)

    monkeypatch.setattr(hk.ops, "scaled_mm", scaled_mm)
    return calls


def test_a_block_scaled_fp8_layer_runs_on_hks_block_scales(patched, routes, block_processing, sglang_block,
                                                           scaled_mm_calls):
    from hk_engine.contract import resolve

    layer, ocp = block_layer(bias=True)
    # The layer took the patched function from SGLang's dispatcher when it was built.
    assert layer.quant_method.w8a8_block_fp8_linear is resolve(BLOCK_FN)[0]
    x = torch.randn(2, 3, BK, generator=torch.Generator().manual_seed(8)).to(torch.bfloat16)
    out, _ = layer(x)
    assert out.shape == (2, 3, BN) and out.dtype == torch.bfloat16
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"hk": 1}} and sglang_block == []
    (a, b, scale_a, scale_b), = scaled_mm_calls
    # hk's GEMM with the block scales: the activations' per token per 128 columns, the weight's
    # [N/128, K/128] transposed (b is the weight's transpose).
    assert a.dtype == torch.float8_e4m3fn and a.shape == (6, BK) and scale_a.shape == (6, BK // 128)
    assert b.shape == (BK, BN) and torch.equal(b.view(torch.uint8), layer.weight.t().view(torch.uint8))
    assert torch.equal(scale_b, layer.weight_scale_inv.t())
    bias = layer.bias.double()
    torch.testing.assert_close(out.float(), (hk_block_product(layer, x) + bias).float(), rtol=1.6e-2, atol=1e-2)
    near(out, F.linear(x.double(), ocp, bias))
    # SGLang's own function (its quantizer and block GEMM, in torch here): the same numbers.
    routes({"target": "any", "ops": {}})
    engine, _ = layer(x)
    assert sglang_block == [(6, BK)]
    torch.testing.assert_close(engine.float(), out.float(), rtol=1.6e-2, atol=2e-2)
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"hk": 1, "engine": 1}}


def test_block_scaled_fp8_routes_by_rows(patched, routes, block_processing, sglang_block):
    layer, _ = block_layer()
    routes({"target": "any", "ops": {"fp8_block_scaled_mm": [{"when": {"m": [1, 4]}, "route": "hk"}]}})
    x = torch.randn(8, BK, generator=torch.Generator().manual_seed(9)).to(torch.bfloat16)
    engine = layer(x)[0]
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"engine": 1}} and sglang_block == [(8, BK)]
    # A decode's single row (its scales one row: hk reads them as they are) and 4 rows, on hk.
    hk_out = torch.cat([layer(x[:1])[0], layer(x[1:5])[0], layer(x[5:])[0]])
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"engine": 1, "hk": 3}} and sglang_block == [(8, BK)]
    torch.testing.assert_close(hk_out.float(), engine.float(), rtol=1.6e-2, atol=2e-2)


def test_block_scaled_fp8_takes_sglangs_own_rules(patched, routes, block_processing, sglang_block):
    # The tables' block-scaled fp8 rules are SGLang's own (predicted against its kernel) beside
    # the shared ones (vLLM's kernel's): SGLang's calls take its own, whichever way they route.
    layer, _ = block_layer()
    x = torch.randn(3, BK, generator=torch.Generator().manual_seed(11)).to(torch.bfloat16)
    engine, hk = [{"when": {}, "route": "engine"}], [{"when": {}, "route": "hk"}]
    routes({"target": "any", "ops": {"fp8_block_scaled_mm": engine},
            "engines": {"vllm": {"fp8_block_scaled_mm": engine}, "sglang": {"fp8_block_scaled_mm": hk}}})
    layer(x)
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"hk": 1}} and sglang_block == []
    routes({"target": "any", "ops": {"fp8_block_scaled_mm": hk},
            "engines": {"vllm": {"fp8_block_scaled_mm": hk}, "sglang": {"fp8_block_scaled_mm": engine}}})
    layer(x)
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"hk": 1, "engine": 1}} and sglang_block == [(3, BK)]


def test_a_compressed_tensors_block_layer_runs_on_hk(patched, sglang_block, monkeypatch):
    # llm-compressor's FP8_BLOCK scheme: weights per 128 x 128 block, activations dynamic per
    # token per 128 columns (SGLang checks the GPU's capability: a ROCm MI300's, 9.4).
    from sglang.srt.layers.linear import ColumnParallelLinear
    from sglang.srt.layers.quantization.compressed_tensors.compressed_tensors import CompressedTensorsConfig

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: (9, 4))
    config = CompressedTensorsConfig.from_config({
        "quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": False, "strategy": "block",
                        "block_structure": [128, 128]},
            "input_activations": {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": True,
                                  "strategy": "group", "group_size": 128}}}})
    layer = ColumnParallelLinear(BK, BN, bias=False, params_dtype=torch.bfloat16, quant_config=config,
                                 prefix="model.layers.0.mlp.up_proj")
    assert type(layer.scheme).__name__ == "CompressedTensorsW8A8Fp8"
    g = torch.Generator().manual_seed(10)
    layer.weight.data.copy_((torch.randn(BN, BK, generator=g) * 100).clamp(-448, 448).to(torch.float8_e4m3fn))
    layer.weight_scale.data.copy_(torch.rand(BN // 128, BK // 128, generator=g) * 0.004 + 0.0005)
    layer.quant_method.process_weights_after_loading(layer)
    x = torch.randn(5, BK, generator=g).to(torch.bfloat16)
    out = layer(x)[0]
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"hk": 1}} and sglang_block == []
    w = block_dequantize(layer.weight, layer.weight_scale, (128, 128))
    xq, xs = hk_group_quant(x)
    torch.testing.assert_close(out.float(), (block_dequantize(xq, xs, (1, 128)) @ w.t()).float(), rtol=1.6e-2,
                               atol=1e-2)
    near(out, F.linear(x.double(), w))


def through_layer(dtype=torch.bfloat16, **kwargs):
    """(a block_layer's output, the unquantized product) for 3 tokens of `dtype`."""
    layer, ocp = block_layer(**kwargs)
    x = torch.randn(3, ocp.shape[1], generator=torch.Generator().manual_seed(12)).to(dtype)
    return layer(x)[0], F.linear(x.double(), ocp)


def direct_call(change):
    """SGLang's block function called as its linear methods call it on block_layer's weight,
    the call's arguments changed by change(x)."""
    from sglang.srt.layers.quantization import fp8_utils

    layer, ocp = block_layer()
    x = torch.randn(3, BK, generator=torch.Generator().manual_seed(11)).to(torch.bfloat16)
    call = dict(input=x, weight=layer.weight, block_size=[128, 128], weight_scale=layer.weight_scale_inv,
                input_scale=None, bias=None)
    call.update(change(x))
    return fp8_utils.triton_w8a8_block_fp8_linear(**call), F.linear(x.double(), ocp)


def pre_quantized(x):
    q, s = hk_group_quant(x)
    return dict(input=q, input_scale=s)


# Each a call hk does not cover, and why: K not a multiple of 128 (SGLang's kernel takes a partial
# last group), N likewise, another block, float32 activations, activations SGLang's fused
# RMSNorm/activation kernels quantized already, power-of-two (UE8M0) activation scales.
UNCOVERED = {
    "shape (K)": (lambda: through_layer(k=192), "shape"),
    "shape (N)": (lambda: through_layer(n=320), "shape"),
    "block": (lambda: through_layer(block=(128, 64)), "block"),
    "dtype": (lambda: through_layer(torch.float32), "dtype"),
    "pre-quantized": (lambda: direct_call(pre_quantized), "pre-quantized activations"),
    "ue8m0": (lambda: direct_call(lambda x: dict(act_scale_ue8m0=True)), "scale format"),
}


@pytest.mark.parametrize("case", sorted(UNCOVERED))
def test_block_calls_hk_does_not_cover_are_sglangs_with_their_reason(patched, block_processing, sglang_block,
                                                                     scaled_mm_calls, case):
    run, reason = UNCOVERED[case]
    reset_uncovered_warnings()
    with pytest.warns(UserWarning, match=r"sglang.w8a8_fp8_block: .* \(%s\)" % reason):
        out, exact = run()
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"engine:uncovered": 1}}
    assert len(sglang_block) == 1 and scaled_mm_calls == []  # SGLang's GEMM, not hk's
    near(out, exact, error=0.06 if case == "ue8m0" else 0.04)  # (power-of-two scales: up to a bit coarser)


HK_FNUZ = (torch.float8_e4m3fnuz, HK_FNUZ_MAX)


def test_fnuz_block_fp8_runs_on_hk_on_gfx942(patched, routes, block_processing, sglang_block, monkeypatch):
    # SGLang on MI300 converts the checkpoint's e4m3 blocks to e4m3fnuz (scales doubled); hk's
    # quantizer writes the activations' FNUZ groups (max|group| / 240).
    from sglang.srt.layers.quantization import fp8_utils

    monkeypatch.setenv("HK_ARCH", "gfx942")
    monkeypatch.setattr(block_processing, "_is_fp8_fnuz", True)
    layer, ocp = block_layer()
    assert layer.weight.dtype == torch.float8_e4m3fnuz
    x = torch.randn(4, BK, generator=torch.Generator().manual_seed(13)).to(torch.bfloat16)
    out = layer(x)[0]
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"hk": 1}} and sglang_block == []
    torch.testing.assert_close(out.float(), hk_block_product(layer, x, *HK_FNUZ).float(), rtol=1.6e-2, atol=1e-2)
    exact = F.linear(x.double(), ocp)  # the OCP checkpoint's answer
    near(out, exact)
    # SGLang's own function (its quantizer divides by 224): another grid, as near that answer.
    monkeypatch.setattr(fp8_utils, "fp8_dtype", torch.float8_e4m3fnuz)
    monkeypatch.setattr(fp8_utils, "fp8_max", FNUZ_MAX)
    routes({"target": "any", "ops": {}})
    engine = layer(x)[0]
    assert sglang_block == [(4, BK)]
    near(engine, exact)
    hk_error, sglang_error = ((t.double() - exact).norm().item() for t in (out, engine))
    assert hk_error < 1.25 * sglang_error, (hk_error, sglang_error)
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"hk": 1, "engine": 1}}


@pytest.mark.parametrize("arch, fnuz", [("gfx942", False), ("gfx950", True)])
def test_block_fp8_of_the_targets_other_format_stays_sglangs(patched, block_processing, sglang_block,
                                                              scaled_mm_calls, monkeypatch, arch, fnuz):
    # OCP weights where hk's launches run for gfx942 (hk's quantizers write FNUZ there), FNUZ
    # weights on gfx950 (its matrix instructions read OCP fp8): SGLang's own function, counted.
    from sglang.srt.layers.quantization import fp8_utils

    monkeypatch.setenv("HK_ARCH", arch)
    if fnuz:
        monkeypatch.setattr(block_processing, "_is_fp8_fnuz", True)
        monkeypatch.setattr(fp8_utils, "fp8_dtype", torch.float8_e4m3fnuz)
        monkeypatch.setattr(fp8_utils, "fp8_max", FNUZ_MAX)
    layer, ocp = block_layer()
    x = torch.randn(3, BK, generator=torch.Generator().manual_seed(14)).to(torch.bfloat16)
    reset_uncovered_warnings()
    with pytest.warns(UserWarning, match=r"sglang.w8a8_fp8_block: .* \(target\)"):
        out = layer(x)[0]
    assert counters.snapshot() == {"sglang.w8a8_fp8_block": {"engine:uncovered": 1}}
    assert len(sglang_block) == 1 and scaled_mm_calls == []
    near(out, F.linear(x.double(), ocp))


def test_the_block_seams_hold_and_unregister_gives_sglangs_function_back(patched, block_processing):
    import sglang
    from hk_engine import contract
    from hk_sglang import plugin as hk_plugin
    from hk_sglang import w8a8
    from sglang.srt.layers.quantization import fp8_utils

    target, = [t for t in w8a8.PATCH.targets if t.path == BLOCK_FN]
    assert all(seam in hk_plugin.SEAMS for seam in w8a8.BLOCK_SEAMS)
    assert contract.check("sglang", sglang.__version__, hk_plugin.SUPPORTED, w8a8.BLOCK_SEAMS + [target.seam]) == []
    hooked = fp8_utils.triton_w8a8_block_fp8_linear
    assert fp8_utils.dispatch_w8a8_block_fp8_linear([128, 128]) is hooked
    patched.unregister()
    own = fp8_utils.triton_w8a8_block_fp8_linear
    assert own is not hooked and own.__module__ == fp8_utils.__name__
    assert fp8_utils.dispatch_w8a8_block_fp8_linear([128, 128]) is own
    assert block_layer()[0].quant_method.w8a8_block_fp8_linear is own
