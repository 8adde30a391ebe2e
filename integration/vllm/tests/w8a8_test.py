"""vLLM's W8A8 linear layers, built through its own quantization configs (CompressedTensors int8:
static and dynamic activations, symmetric and with a zero point; CompressedTensors fp8 and
Fp8LinearMethod) with hk's plugin loaded, take hk's kernel classes and compute through
hk.ops.int8_scaled_mm / hk.ops.scaled_mm on hk's interpreter, matching the dequantized product
(and, for fp8, vLLM's own torch._scaled_mm kernel). Calls the routing table sends to the engine,
and layers hk's kernel refuses, run on the kernel vLLM would have chosen, counted. vLLM's FNUZ fp8
(its platform's on MI300) is hk's on gfx942 and vLLM's on other targets. Block-scaled fp8
(Fp8LinearMethod with 128 x 128 weight blocks) takes hk's block kernel class, against the float64
product of what vLLM's quantizer gives."""

import json

import pytest
import torch
import torch.nn.functional as F

from conftest import close
from hk_engine.plugin import reset_uncovered_warnings
from hk_engine.testing.fnuz import scaled_mm_on_fnuz

ROUTES = {"target": "any", "provenance": "tests",
          "ops": {op: [{"when": {"m": [1, 64]}, "route": "hk"}] for op in ("int8_scaled_mm", "fp8_scaled_mm",
                                                                              "fp8_block_scaled_mm")}}
K, N = 64, 96


@pytest.fixture(autouse=True)
def routes(tmp_path, monkeypatch):
    from hk_engine import routing

    path = tmp_path / "routes.json"
    path.write_text(json.dumps(ROUTES))
    monkeypatch.setenv("HK_ENGINE_ROUTES", str(path))
    routing.clear_cache()
    yield
    routing.clear_cache()


@pytest.fixture(scope="module", autouse=True)
def c_stand_ins():
    # vLLM's scaled_int8_quant and scaled_fp8_quant run torch.ops._C, which the CPU wheel lacks:
    # hk_vllm's stand-ins (its CPU mode's).
    from hk_vllm import cpu_kernels

    cpu_kernels.define()


@pytest.fixture
def rocm_kernels(loaded, monkeypatch):
    """hk's plugin with its CPU mode, whose layers choose among vLLM's ROCm kernel lists (hk's
    kernels first, then Triton's int8 kernel, the torch._scaled_mm fp8 kernels): vLLM's CPU
    kernels need torch.ops._C's oneDNN GEMMs; for block scales Triton's kernel, its GEMM in
    torch). hk's three classes."""
    from vllm.model_executor.kernels import linear as kl
    from vllm.platforms import PlatformEnum

    from hk_vllm import cpu, w8a8

    monkeypatch.setenv("HK_DEVICE", "interp")
    cpu.install(loaded)
    int8, fp8, block = w8a8.KERNELS
    assert kl._POSSIBLE_INT8_KERNELS[PlatformEnum.ROCM][0] is int8
    assert kl._POSSIBLE_FP8_KERNELS[PlatformEnum.ROCM][0] is fp8
    assert kl._POSSIBLE_FP8_BLOCK_KERNELS[PlatformEnum.ROCM][0] is block
    yield int8, fp8, block
    cpu.uninstall()


def compressed_tensors(kind, weight_strategy, act_strategy, dynamic, symmetric=True):
    from vllm.model_executor.layers.quantization.compressed_tensors.compressed_tensors import CompressedTensorsConfig

    bits = {"num_bits": 8, "type": kind}
    return CompressedTensorsConfig.from_config({
        "quant_method": "compressed-tensors", "format": "int-quantized" if kind == "int" else "float-quantized",
        "ignore": [],
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": dict(bits, symmetric=True, strategy=weight_strategy, dynamic=False),
            "input_activations": dict(bits, symmetric=symmetric, strategy=act_strategy, dynamic=dynamic)}}})


def build(config, bias=False):
    """A bf16 model's layer, built under the model's default dtype as vLLM's loader builds it."""
    from vllm.model_executor.layers.linear import ColumnParallelLinear
    from vllm.utils.torch_utils import set_default_torch_dtype

    with set_default_torch_dtype(torch.bfloat16):
        return ColumnParallelLinear(K, N, bias=bias, params_dtype=torch.bfloat16, quant_config=config,
                                    prefix="mlp.up")


def kernel_of(layer):
    method = getattr(layer, "scheme", None) or layer.quant_method
    return getattr(method, "kernel", None) or method.fp8_linear


def put(layer, **tensors):
    with torch.no_grad():
        for name, t in tensors.items():
            getattr(layer, name).copy_(t)
    layer.quant_method.process_weights_after_loading(layer)


def int8_weight(g):
    q = torch.randint(-127, 128, (N, K), generator=g, dtype=torch.int8)
    s = torch.rand(N, 1, generator=g) * 0.002 + 0.001
    return q, s


@pytest.mark.parametrize("dynamic, symmetric", [(True, True), (True, False), (False, True), (False, False)])
def test_int8_layers(rocm_kernels, vllm_config, counts, dynamic, symmetric):
    layer = build(compressed_tensors("int", "channel", "token" if dynamic else "tensor", dynamic, symmetric), bias=True)
    kernel = kernel_of(layer)
    assert type(kernel) is rocm_kernels[0] and type(kernel.fallback).__name__ == "TritonInt8ScaledMMLinearKernel"
    g = torch.Generator().manual_seed(0)
    q, s = int8_weight(g)
    # Activations in [-1, 3]: a zero point away from 0 (-64, static) where the scheme has one.
    x = (torch.rand(5, K, generator=g) * 4 - 1).to(torch.bfloat16)
    b = torch.randn(N, generator=g).to(torch.bfloat16)
    tensors = {"weight": q, "weight_scale": s}
    if not dynamic:
        tensors["input_scale"] = torch.tensor([4.0 / 255 if not symmetric else 3.0 / 127])
        if not symmetric:
            tensors["input_zero_point"] = torch.tensor([-64], dtype=torch.int8)
    put(layer, **tensors)
    with torch.no_grad():
        layer.bias.copy_(b)
    out = layer(x)[0]
    want = F.linear(x.float(), q.float() * s, b.float())
    # The activations' quantization error (a step of 4/255 at most) dominates: ~1e-2 of outputs ~1.
    torch.testing.assert_close(out.float(), want, rtol=3e-2, atol=3e-2)
    assert counts.snapshot()["vllm.w8a8_int8"] == {"hk": 1}
    # Past the table's 64 tokens the engine's kernel serves (Triton's, which this CPU cannot run:
    # its answer stands in).
    engine = torch.full((65, N), 7.0, dtype=torch.bfloat16)
    kernel.fallback.apply_weights = lambda layer_, x_, bias_: engine
    assert layer(torch.zeros(65, K, dtype=torch.bfloat16))[0] is engine
    assert counts.snapshot()["vllm.w8a8_int8"] == {"hk": 1, "engine": 1}


def test_int8_layer_with_a_zero_point_is_exact_against_its_own_quantization(rocm_kernels, vllm_config,
                                                                            counts):
    # The product of what vLLM's quantizer gives, dequantized: hk's GEMM adds no error of its own
    # beyond bf16's rounding of the output.
    from vllm import _custom_ops

    layer = build(compressed_tensors("int", "channel", "token", True, False))
    g = torch.Generator().manual_seed(3)
    q, s = int8_weight(g)
    put(layer, weight=q, weight_scale=s)
    x = (torch.rand(7, K, generator=g) * 3 - 0.5).to(torch.bfloat16)
    xq, xs, azp = _custom_ops.scaled_int8_quant(x, None, None, symmetric=False)
    assert azp is not None and int(azp.abs().max()) > 0
    want = ((xq.float() - azp.float()) * xs) @ (q.float() * s).t()
    close(layer(x)[0], want)
    assert counts.snapshot()["vllm.w8a8_int8"] == {"hk": 1}


def fp8_weight(g, per_channel):
    w = torch.randn(N, K, generator=g) * 0.2
    s = (w.abs().amax(-1, keepdim=True) if per_channel else w.abs().amax().reshape(1)) / 448.0
    return (w / s).to(torch.float8_e4m3fn), s


def vllm_reference(layer, x):
    """vLLM's own kernel (the one hk's falls back to) on the same layer."""
    return kernel_of(layer).fallback.apply_weights(layer, x, None)


@pytest.mark.parametrize("weights, acts, dynamic", [("channel", "token", True), ("tensor", "tensor", True),
                                                    ("tensor", "tensor", False)])
def test_compressed_tensors_fp8_layers(rocm_kernels, vllm_config, counts, weights, acts, dynamic):
    layer = build(compressed_tensors("float", weights, acts, dynamic))
    kernel = kernel_of(layer)
    assert type(kernel) is rocm_kernels[1] and kernel.fallback is not None
    g = torch.Generator().manual_seed(1)
    q, s = fp8_weight(g, weights == "channel")
    tensors = {"weight": q, "weight_scale": s if weights == "channel" else s.expand(layer.weight_scale.shape)}
    if not dynamic:
        tensors["input_scale"] = torch.full(layer.input_scale.shape, 3.0 / 448)
    put(layer, **tensors)
    x = torch.randn(6, K, generator=g).to(torch.bfloat16)
    out = layer(x)[0]
    # e4m3's activations are 3 bits of mantissa: within 0.15 of the unquantized product (|out| ~ 1.6).
    torch.testing.assert_close(out.float(), F.linear(x.float(), q.float() * s), rtol=0.1, atol=0.15)
    close(out, vllm_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8"] == {"hk": 1}
    # Past the table's 64 tokens: vLLM's torch._scaled_mm kernel, the same numbers.
    x = torch.randn(70, K, generator=g).to(torch.bfloat16)
    assert torch.equal(layer(x)[0], vllm_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8"] == {"hk": 1, "engine": 1}


def test_fp8_linear_method(rocm_kernels, vllm_config, counts):
    from vllm.model_executor.layers.quantization.fp8 import Fp8Config, Fp8LinearMethod

    layer = build(Fp8Config(is_checkpoint_fp8_serialized=True, activation_scheme="dynamic"))
    assert isinstance(layer.quant_method, Fp8LinearMethod)
    assert type(layer.quant_method.fp8_linear) is rocm_kernels[1]
    g = torch.Generator().manual_seed(2)
    q, s = fp8_weight(g, False)
    put(layer, weight=q, weight_scale=s.expand(layer.weight_scale.shape))
    x = torch.randn(3, 2, K, generator=g).to(torch.bfloat16)
    out = layer(x)[0]
    assert out.shape == (3, 2, N)
    close(out, vllm_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8"] == {"hk": 1}


def test_uncovered_calls_run_on_vllms_kernel(rocm_kernels, vllm_config, counts):
    # fp32 activations: hk's GEMM writes bf16 or fp16, so vLLM's kernel serves them.
    layer = build(compressed_tensors("float", "channel", "token", True))
    g = torch.Generator().manual_seed(4)
    q, s = fp8_weight(g, True)
    put(layer, weight=q, weight_scale=s)
    x = torch.randn(4, K, generator=g)
    with pytest.warns(UserWarning, match="vllm.w8a8_fp8: hk's kernel does not cover these calls \\(dtype\\)"):
        out = layer(x)[0]
    assert torch.equal(out, vllm_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8"] == {"engine:uncovered": 1}


def test_fp8_kernel_refuses_what_hk_cannot_serve(rocm_kernels):
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearLayerConfig
    from vllm.model_executor.layers.quantization.utils.quant_utils import kFp8DynamicTokenSym, kFp8StaticTensorSym

    config = FP8ScaledMMLinearLayerConfig(weight_quant_key=kFp8StaticTensorSym, activation_quant_key=kFp8DynamicTokenSym,
                                          weight_shape=(N, K), input_dtype=torch.float32, out_dtype=torch.float32)
    ok, why = rocm_kernels[1].can_implement(config)
    assert not ok and "bf16 or fp16" in why


def test_without_another_kernel_an_unserved_call_says_what_to_do(rocm_kernels, vllm_config, monkeypatch):
    from hk.errors import HKError
    from vllm.model_executor.kernels import linear as kl
    from vllm.platforms import PlatformEnum

    monkeypatch.setitem(kl._POSSIBLE_FP8_KERNELS, PlatformEnum.CPU, [rocm_kernels[1]])
    layer = build(compressed_tensors("float", "channel", "token", True))
    assert kernel_of(layer).fallback is None
    q, s = fp8_weight(torch.Generator().manual_seed(5), True)
    put(layer, weight=q, weight_scale=s)
    assert layer(torch.randn(2, K).to(torch.bfloat16))[0].shape == (2, N)  # hk serves what it covers
    with pytest.raises(HKError, match="HkFP8ScaledMMLinearKernel cannot serve this call \\(dtype\\)") as raised:
        layer(torch.randn(2, K))
    assert "HK_VLLM_W8A8=0" in str(raised.value)


@pytest.fixture
def fnuz_platform(monkeypatch):
    """vLLM as on MI300 (gfx942): its platform's fp8 is float8_e4m3fnuz, so it converts OCP
    checkpoints to FNUZ (scales doubled) and QuantFP8 quantizes activations to FNUZ, 224 the
    largest value it writes (vLLM reads these at import: set here as on that platform); its own
    fallback GEMM's torch._scaled_mm on FNUZ as the GPU computes it (hk_engine.testing.fnuz)."""
    from vllm.model_executor.layers.quantization import input_quant_fp8
    from vllm.platforms import current_platform

    scaled_mm_on_fnuz(monkeypatch)

    platform = type(current_platform)
    monkeypatch.setattr(platform, "is_fp8_fnuz", classmethod(lambda cls: True))
    monkeypatch.setattr(platform, "fp8_dtype", classmethod(lambda cls: torch.float8_e4m3fnuz))
    monkeypatch.setattr(input_quant_fp8, "_FP8_DTYPE", torch.float8_e4m3fnuz)
    monkeypatch.setattr(input_quant_fp8, "_FP8_MIN", -224.0)
    monkeypatch.setattr(input_quant_fp8, "_FP8_MAX", 224.0)
    monkeypatch.setattr(input_quant_fp8, "_FP8_MIN_SCALING_FACTOR", 1.0 / (224.0 * 512.0))


def fnuz_layer(weights, acts, dynamic=True, seed=6):
    """A CompressedTensors fp8 layer filled from an OCP checkpoint, which vLLM converts to FNUZ."""
    layer = build(compressed_tensors("float", weights, acts, dynamic))
    q, s = fp8_weight(torch.Generator().manual_seed(seed), weights == "channel")
    tensors = {"weight": q, "weight_scale": s if weights == "channel" else s.expand(layer.weight_scale.shape)}
    if not dynamic:
        tensors["input_scale"] = torch.full(layer.input_scale.shape, 3.0 / 448)
    put(layer, **tensors)
    return layer, q, s


@pytest.mark.parametrize("weights, acts, dynamic", [("channel", "token", True), ("tensor", "tensor", True),
                                                    ("tensor", "tensor", False)])
def test_fnuz_layers_on_gfx942(rocm_kernels, vllm_config, counts, fnuz_platform, monkeypatch, weights, acts,
                               dynamic):
    monkeypatch.setenv("HK_ARCH", "gfx942")
    layer, q, s = fnuz_layer(weights, acts, dynamic)
    kernel = kernel_of(layer)
    assert type(kernel) is rocm_kernels[1] and kernel.fallback is not None
    assert layer.weight.dtype == torch.float8_e4m3fnuz  # vLLM's conversion of the checkpoint
    x = torch.randn(6, K, generator=torch.Generator().manual_seed(7)).to(torch.bfloat16)
    out = layer(x)[0]
    assert counts.snapshot()["vllm.w8a8_fp8"] == {"hk": 1}
    # The product of what vLLM quantized, in float64: hk's fp8 MFMA adds only bf16's rounding.
    xq, xs = kernel.quant_fp8(x, getattr(layer, "input_scale", None), None)
    assert xq.dtype == torch.float8_e4m3fnuz
    w = layer.weight.double() * layer.weight_scale.double().reshape(1, -1)
    close(out, (xq.double() * xs.double()) @ w)
    # The same answer as the OCP checkpoint's, within e4m3's activation error.
    torch.testing.assert_close(out.float(), F.linear(x.float(), q.float() * s), rtol=0.1, atol=0.15)
    close(out, vllm_reference(layer, x))


def test_fnuz_layers_are_vllms_on_other_targets(rocm_kernels, vllm_config, counts, fnuz_platform, monkeypatch):
    # gfx950's matrix instructions read OCP fp8, not FNUZ: vLLM's kernel is chosen for the layer.
    monkeypatch.setenv("HK_ARCH", "gfx950")
    layer, _, _ = fnuz_layer("channel", "token")
    assert type(kernel_of(layer)) is not rocm_kernels[1]
    ok, why = rocm_kernels[1].can_implement(kernel_of(layer).config)
    assert not ok and "FNUZ fp8 on gfx942 only" in why and "gfx950" in why
    # A layer hk took on gfx942 whose launches then run for gfx950: each call is vLLM's, counted.
    monkeypatch.setenv("HK_ARCH", "gfx942")
    layer, _, _ = fnuz_layer("channel", "token")
    kernel = kernel_of(layer)
    assert type(kernel) is rocm_kernels[1]
    monkeypatch.setenv("HK_ARCH", "gfx950")
    reset_uncovered_warnings()
    x = torch.randn(4, K).to(torch.bfloat16)
    with pytest.warns(UserWarning, match="vllm.w8a8_fp8: hk's kernel does not cover these calls \\(target\\)"):
        out = layer(x)[0]
    assert torch.equal(out, vllm_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8"] == {"engine:uncovered": 1}


def test_fp8_kernel_refuses_ocp_with_fnuz(rocm_kernels, vllm_config, counts, monkeypatch):
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearLayerConfig
    from vllm.model_executor.layers.quantization.utils.quant_utils import QuantKey, kFp8DynamicTokenSym, kFp8StaticTensorSym

    from hk_engine import ops

    monkeypatch.setenv("HK_ARCH", "gfx942")
    reset_uncovered_warnings()
    fnuz_act = QuantKey(dtype=torch.float8_e4m3fnuz, scale=kFp8DynamicTokenSym.scale)
    config = FP8ScaledMMLinearLayerConfig(weight_quant_key=kFp8StaticTensorSym, activation_quant_key=fnuz_act,
                                          weight_shape=(N, K), input_dtype=torch.bfloat16, out_dtype=torch.bfloat16)
    ok, why = rocm_kernels[1].can_implement(config)
    assert not ok and "one fp8 family" in why
    # At a call: an OCP weight with FNUZ activations is the engine's, counted.
    q, s = fp8_weight(torch.Generator().manual_seed(8), True)
    x = torch.randn(3, K).to(torch.bfloat16)
    engine = torch.zeros(3, N, dtype=torch.bfloat16)
    with pytest.warns(UserWarning, match="\\(dtype\\)"):
        got = ops.fp8_linear("vllm.w8a8_fp8", x, q.t(), s.reshape(-1), None, torch.bfloat16,
                             lambda x2: pytest.fail("hk quantized a call it does not cover"), lambda: engine,
                             act_dtype=torch.float8_e4m3fnuz)
    assert got is engine and counts.snapshot()["vllm.w8a8_fp8"] == {"engine:uncovered": 1}


def test_fnuz_targets_are_the_target_facts_and_one_check_serves_class_and_call(rocm_kernels, fnuz_platform,
                                                                                monkeypatch):
    # Which targets take FNUZ is the target facts' fp8_format (what hk.ops.mm8 plans by), not a
    # list: a target whose facts said FNUZ would be one. The kernel class's sentence and the
    # call's counter reason come from one check.
    import dataclasses

    from hk.target import facts
    from hk_engine import ops

    fnuz = torch.float8_e4m3fnuz
    assert ops.fnuz_targets() == ("gfx942",)
    assert ops.fp8_formats_refusal(fnuz, fnuz, "gfx950")[0] == "target"
    assert ops.fp8_formats_uncovered(fnuz, fnuz, "gfx950") == "target"
    real = facts.target
    monkeypatch.setattr(facts, "target", lambda arch: dataclasses.replace(real(arch), fp8_format="fnuz")
                        if arch == "gfx950" else real(arch))
    assert ops.fnuz_targets() == ("gfx942", "gfx950")
    assert ops.fp8_formats_uncovered(fnuz, fnuz, "gfx950") is None
    assert ops.fp8_formats_refusal(fnuz, fnuz, "gfx1201") == (
        "target", "takes FNUZ fp8 on gfx942 and gfx950 only (their matrix instructions'), not on gfx1201")
    # On a platform whose fp8 is FNUZ, OCP quant keys are FNUZ layers: the class's sentence says so.
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearLayerConfig
    from vllm.model_executor.layers.quantization.utils.quant_utils import kFp8DynamicTokenSym, kFp8StaticTensorSym

    monkeypatch.setenv("HK_ARCH", "gfx1201")
    config = FP8ScaledMMLinearLayerConfig(weight_quant_key=kFp8StaticTensorSym,
                                          activation_quant_key=kFp8DynamicTokenSym, weight_shape=(N, K),
                                          input_dtype=torch.bfloat16, out_dtype=torch.bfloat16)
    ok, why = rocm_kernels[1].can_implement(config)
    assert not ok and why == ops.fp8_formats_refusal(torch.float8_e4m3fn, torch.float8_e4m3fn, fnuz=True)[1]
    assert "not on gfx1201" in why


# ---------------------------------------------------------------------------------------------
# 128 x 128 block-scaled fp8 (DeepSeek's, Qwen3-FP8's): Fp8LinearMethod with weight_block_size.

BK, BN = 256, 128  # two groups of K, one block of N


def block_layer(k=BK, n=BN, seed=9, bias=False):
    """An Fp8LinearMethod layer with 128 x 128 weight blocks, filled with an fp8 weight whose
    blocks have scales apart (so that a block applied to the wrong group shows)."""
    from vllm.model_executor.layers.linear import ColumnParallelLinear
    from vllm.model_executor.layers.quantization.fp8 import Fp8Config
    from vllm.utils.torch_utils import set_default_torch_dtype

    config = Fp8Config(is_checkpoint_fp8_serialized=True, activation_scheme="dynamic", weight_block_size=[128, 128])
    with set_default_torch_dtype(torch.bfloat16):
        layer = ColumnParallelLinear(k, n, bias=bias, params_dtype=torch.bfloat16, quant_config=config,
                                     prefix="mlp.up")
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(n, k, generator=g) * 100).clamp(-448, 448).to(torch.float8_e4m3fn)
    s = torch.rand(layer.weight_scale_inv.shape, generator=g) * 0.004 + 0.0005
    put(layer, weight=q, weight_scale_inv=s)
    return layer


def block_reference(layer, x):
    """The float64 product of vLLM's own quantization of x (per token per 128 columns) and the
    layer's block-scaled weight."""
    kernel = kernel_of(layer)
    x2 = x.reshape(-1, x.shape[-1])
    xq, xs = kernel.quant_fp8(x2, None, None)
    k = x2.shape[1]
    assert tuple(xs.shape) == (x2.shape[0], -(-k // 128))
    a = xq.double() * xs.double().repeat_interleave(128, 1)[:, :k]
    ws = layer.weight_scale_inv.double().repeat_interleave(128, 0).repeat_interleave(128, 1)
    w = layer.weight.double() * ws[:layer.weight.shape[0], :layer.weight.shape[1]]
    return (a @ w.t()).reshape(*x.shape[:-1], -1)


def test_block_scaled_fp8_layer_takes_hks_block_kernel(rocm_kernels, vllm_config, counts):
    from vllm.model_executor.kernels.linear.scaled_mm.triton import TritonFp8BlockScaledMMKernel

    layer = block_layer()
    kernel = kernel_of(layer)
    assert type(kernel) is rocm_kernels[2] and type(kernel.fallback) is TritonFp8BlockScaledMMKernel
    x = torch.randn(3, 2, BK, generator=torch.Generator().manual_seed(10)).to(torch.bfloat16)
    out = layer(x)[0]
    assert out.shape == (3, 2, BN) and out.dtype == torch.bfloat16
    close(out, block_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8_block"] == {"hk": 1}
    # vLLM's own kernel (Triton's, its GEMM in torch here) gives the same answer.
    close(out, vllm_reference(layer, x))
    # A decode's one token (its scales one row: hk reads their transpose).
    x1 = x[:1, 0]
    close(layer(x1)[0], block_reference(layer, x1))
    assert counts.snapshot()["vllm.w8a8_fp8_block"] == {"hk": 2}
    # Past the table's 64 tokens: vLLM's kernel, counted.
    x = torch.randn(70, BK, generator=torch.Generator().manual_seed(11)).to(torch.bfloat16)
    assert torch.equal(layer(x)[0], vllm_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8_block"] == {"hk": 2, "engine": 1}


def test_block_scaled_fp8_routed_to_the_engine(rocm_kernels, vllm_config, counts, tmp_path, monkeypatch):
    from hk_engine import routing

    path = tmp_path / "engine.json"
    path.write_text(json.dumps({"target": "any", "ops": {"fp8_block_scaled_mm": [{"when": {}, "route": "engine"}]}}))
    monkeypatch.setenv("HK_ENGINE_ROUTES", str(path))
    routing.clear_cache()
    layer = block_layer()
    x = torch.randn(4, BK).to(torch.bfloat16)
    kernel_of(layer).quant_fp8 = lambda *a, **kw: pytest.fail("hk quantized a call the table sends to the engine")
    engine = torch.full((4, BN), 3.0, dtype=torch.bfloat16)
    kernel_of(layer).fallback.apply_weights = lambda layer_, x_, bias_: engine
    assert layer(x)[0] is engine
    assert counts.snapshot()["vllm.w8a8_fp8_block"] == {"engine": 1}


def test_block_scaled_fp8_calls_hk_does_not_cover_are_vllms(rocm_kernels, vllm_config, counts):
    # K of 192 (a last group of 64 columns): vLLM's kernel takes it, hk's block scales do not.
    layer = block_layer(k=192)
    assert type(kernel_of(layer)) is rocm_kernels[2]
    x = torch.randn(2, 192).to(torch.bfloat16)
    reset_uncovered_warnings()
    with pytest.warns(UserWarning, match="vllm.w8a8_fp8_block: hk's kernel does not cover these calls \\(shape\\)"):
        out = layer(x)[0]
    assert torch.equal(out, vllm_reference(layer, x))
    close(out, block_reference(layer, x))
    # fp32 activations: hk writes bf16 or fp16.
    layer = block_layer()
    x = torch.randn(2, BK)
    with pytest.warns(UserWarning, match="\\(dtype\\)"):
        out = layer(x)[0]
    assert torch.equal(out, vllm_reference(layer, x))
    assert counts.snapshot()["vllm.w8a8_fp8_block"] == {"engine:uncovered": 2}


def test_block_kernel_refuses_other_blocks_and_checks_scales_at_the_call(rocm_kernels, vllm_config, counts):
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearLayerConfig
    from vllm.model_executor.layers.quantization.utils.quant_utils import (GroupShape, QuantKey, ScaleDesc,
                                                                           kFp8Dynamic128Sym, kFp8Static128BlockSym)

    from hk_engine import ops

    def config(weight_key, act_key, dtype=torch.bfloat16):
        return FP8ScaledMMLinearLayerConfig(weight_quant_key=weight_key, activation_quant_key=act_key,
                                            weight_shape=(BN, BK), input_dtype=dtype, out_dtype=dtype)

    block = rocm_kernels[2]
    assert block.can_implement(config(kFp8Static128BlockSym, kFp8Dynamic128Sym)) == (True, None)
    blocks_64 = QuantKey(torch.float8_e4m3fn, ScaleDesc(torch.float32, True, GroupShape(64, 64)))
    ok, why = block.can_implement(config(blocks_64, kFp8Dynamic128Sym))
    assert not ok and "128 x 128" in why
    ok, why = block.can_implement(config(kFp8Static128BlockSym, kFp8Dynamic128Sym, torch.float32))
    assert not ok and "bf16 or fp16" in why
    # At a call: scales not [N/128, K/128], or another block, are the engine's, counted.
    reset_uncovered_warnings()
    w = torch.zeros(BN, BK, dtype=torch.float8_e4m3fn)
    x = torch.randn(2, BK).to(torch.bfloat16)
    engine = torch.zeros(2, BN, dtype=torch.bfloat16)
    never = lambda x2: pytest.fail("hk quantized a call it does not cover")  # noqa: E731
    for scale, blk, reason in [(torch.ones(2, 2), (128, 128), "shape"), (torch.ones(1, 2), (64, 128), "block"),
                               (torch.ones(1, 2, dtype=torch.bfloat16), (128, 128), "dtype")]:
        with pytest.warns(UserWarning, match="\\(%s\\)" % reason):
            got = ops.fp8_block_linear("vllm.w8a8_fp8_block", x, w, scale, None, torch.bfloat16, never,
                                       lambda: engine, block=blk)
        assert got is engine
    assert counts.snapshot()["vllm.w8a8_fp8_block"] == {"engine:uncovered": 3}
