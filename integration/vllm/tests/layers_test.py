"""vLLM's layers, built vLLM's way with hk's plugin loaded, compute through hk ops (on hk's
interpreter) and match what vLLM computes in torch: the parallel linear layers (also on gfx11's
row-strided weights) and the logits' projection (ParallelLMHead), an AWQ layer on
AutoAWQLinearMethod, an MoE layer on TritonExperts, RMSNorm through vllm.ir, rotary embedding
through vllm._custom_ops and SiLU-and-mul through SiluAndMul's CUDA/ROCm forward (attention:
attention_test). The routing table decides per shape, and the counters say which route each
call took."""

import json
import sys
import types

import pytest
import torch
import torch.nn.functional as F

from hk.errors import HKError

from conftest import close

# The tests' own routes (the shipped tables follow hk.perf's predictions per target): every op on
# hk, except MoE above 256 tokens, which stays on vLLM's kernel.
ROUTES = {"target": "any", "provenance": "tests",
          "ops": {op: [{"when": {}, "route": "hk"}]
                  for op in ("linear", "awq_gemm", "rms_norm", "rotary", "silu_and_mul")}}
ROUTES["ops"]["moe"] = [{"when": {"m": [1, 256]}, "route": "hk"}]


@pytest.fixture(autouse=True)
def routes(tmp_path, monkeypatch):
    from hk_engine import routing

    path = tmp_path / "routes.json"
    path.write_text(json.dumps(ROUTES))
    monkeypatch.setenv("HK_ENGINE_ROUTES", str(path))
    routing.clear_cache()
    yield
    routing.clear_cache()


def fill(layer, *tensors):
    with torch.no_grad():
        for p, t in zip([layer.weight] + ([layer.bias] if layer.bias is not None else []), tensors):
            p.copy_(t)
    layer.quant_method.process_weights_after_loading(layer)


def test_linear_layers(loaded, vllm_config, counts):
    from vllm.model_executor.layers.linear import (ColumnParallelLinear, MergedColumnParallelLinear,
                                                   QKVParallelLinear, ReplicatedLinear, RowParallelLinear)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 64, generator=g).to(torch.bfloat16)
    for layer in (ReplicatedLinear(64, 48, bias=True, params_dtype=torch.bfloat16),
                  ColumnParallelLinear(64, 80, bias=False, params_dtype=torch.bfloat16),
                  RowParallelLinear(64, 32, bias=True, params_dtype=torch.bfloat16),
                  MergedColumnParallelLinear(64, [32, 32], bias=False, params_dtype=torch.bfloat16),
                  QKVParallelLinear(64, 16, 4, 2, bias=False, params_dtype=torch.bfloat16)):
        w = torch.randn(layer.weight.shape, generator=g).to(torch.bfloat16) * 0.1
        b = torch.randn(layer.bias.shape, generator=g).to(torch.bfloat16) if layer.bias is not None else None
        fill(layer, *([w] + ([b] if b is not None else [])))
        out, _ = layer(x)
        close(out, F.linear(x.float(), w.float(), None if b is None else b.float()))
    assert counts.snapshot()["vllm.linear"] == {"hk": 5}
    # fp32 layers are not covered: vLLM's own computation serves them.
    layer = ReplicatedLinear(64, 16, bias=False, params_dtype=torch.float32)
    w = torch.randn(16, 64, generator=g)
    fill(layer, w)
    assert torch.equal(layer(x.float())[0], F.linear(x.float(), w))
    assert counts.snapshot()["vllm.linear"]["engine:uncovered"] == 1


def test_gfx11_row_strided_weights(loaded, vllm_config, counts, monkeypatch):
    # vLLM pads each weight row by a cache line on gfx11: its own padding, on its own layer.
    # (Its ROCm platform module needs a ROCm torch to import: it answers "gfx11" through a stand-in.)
    from vllm.model_executor.layers import utils
    from vllm.model_executor.layers.linear import ReplicatedLinear
    from vllm.platforms import current_platform

    layer = ReplicatedLinear(1024, 24, bias=False, params_dtype=torch.bfloat16)
    w = torch.randn(24, 1024).to(torch.bfloat16) * 0.05
    fill(layer, w)
    with monkeypatch.context() as gfx11:
        gfx11.setattr(current_platform, "is_rocm", lambda: True)
        gfx11.setitem(sys.modules, "vllm.platforms.rocm", types.SimpleNamespace(on_gfx11=lambda: True))
        layer.weight.data = utils.maybe_pad_weight_avoid_cache_aliasing(layer.weight.data)
    assert layer.weight.stride() == (1024 + 64, 1) and torch.equal(layer.weight, w)
    x = torch.randn(2, 1024).to(torch.bfloat16)
    close(layer(x)[0], F.linear(x.float(), w.float()))
    assert counts.snapshot()["vllm.linear"] == {"hk": 1}


def awq_pack(q):
    """int values [R, C] (0..15) packed 8 to a word in AWQ's order (column 8c + ORDER[j] in nibble j)."""
    order = [0, 2, 4, 6, 1, 3, 5, 7]
    q = q.view(q.shape[0], -1, 8)
    out = torch.zeros(q.shape[:2], dtype=torch.int32)
    for j in range(8):
        out |= q[..., order[j]] << (4 * j)
    return out


def test_awq_layer(loaded, vllm_config, counts, monkeypatch):
    from vllm.model_executor.layers.linear import ColumnParallelLinear
    from vllm.model_executor.layers.quantization.auto_awq import AutoAWQConfig, AutoAWQLinearMethod

    # The method vLLM picks on ROCm (on CPU it would pick its CPU kernel's).
    monkeypatch.setattr(AutoAWQConfig, "get_quant_method", lambda self, layer, prefix: AutoAWQLinearMethod(self))
    K, N, G = 64, 128, 32
    config = AutoAWQConfig.from_config({"w_bit": 4, "q_group_size": G, "zero_point": True})
    layer = ColumnParallelLinear(K, N, bias=False, params_dtype=torch.float16, quant_config=config, prefix="mlp.up")
    g = torch.Generator().manual_seed(1)
    q = torch.randint(0, 16, (K, N), generator=g, dtype=torch.int32)
    z = torch.randint(0, 16, (K // G, N), generator=g, dtype=torch.int32)
    s = (torch.rand(K // G, N, generator=g) * 0.02 + 0.01).half()
    with torch.no_grad():
        layer.qweight.copy_(awq_pack(q))
        layer.qzeros.copy_(awq_pack(z))
        layer.scales.copy_(s)
    layer.quant_method.process_weights_after_loading(layer)
    x = torch.randn(5, K, generator=g).half()
    w = (q - z.repeat_interleave(G, 0)).float() * s.float().repeat_interleave(G, 0)
    close(layer(x)[0], x.float() @ w, torch.float16)
    assert counts.snapshot()["vllm.awq"] == {"hk": 1}


def moe_reference(x, logits, w13, w2, top_k):
    weights, ids = torch.softmax(logits.float(), -1).topk(top_k, -1)
    weights = weights / weights.sum(-1, keepdim=True)
    out = torch.zeros(x.shape, dtype=torch.float32)
    inter = w2.shape[-1]
    for t in range(x.shape[0]):
        for k in range(top_k):
            e = int(ids[t, k])
            h = w13[e].float() @ x[t].float()
            out[t] += weights[t, k] * (w2[e].float() @ (F.silu(h[:inter]) * h[inter:]))
    return out


@pytest.mark.parametrize("tokens, route", [(5, "hk"), (300, "engine")])
def test_moe_layer(loaded, vllm_config, counts, monkeypatch, tokens, route):
    from vllm.forward_context import set_forward_context
    from vllm.model_executor.layers.fused_moe.experts.triton_moe import TritonExperts
    from vllm.model_executor.layers.fused_moe.layer import FusedMoEFactory

    vllm_config.kernel_config.moe_backend = "triton"
    # TritonExperts, which vLLM runs on ROCm, answers for a CPU as it would there.
    monkeypatch.setattr(TritonExperts, "_supports_current_device", staticmethod(lambda: True))
    monkeypatch.setattr(vllm_config.compilation_config, "static_forward_context", {})
    moe = FusedMoEFactory(num_experts=8, top_k=2, hidden_size=64, intermediate_size=32,
                          params_dtype=torch.bfloat16, prefix="moe%d" % tokens)
    experts = moe.routed_experts
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        experts.w13_weight.copy_(torch.randn(experts.w13_weight.shape, generator=g) * 0.1)
        experts.w2_weight.copy_(torch.randn(experts.w2_weight.shape, generator=g) * 0.1)
    experts.quant_method.process_weights_after_loading(experts)
    x = torch.randn(tokens, 64, generator=g).to(torch.bfloat16)
    logits = torch.randn(tokens, 8, generator=g)
    with set_forward_context(None, vllm_config):
        if route == "hk":
            close(moe(x, logits), moe_reference(x, logits, experts.w13_weight, experts.w2_weight, 2))
            assert counts.snapshot()["vllm.moe"] == {"hk": 1}
        else:
            # Above 256 tokens the table keeps vLLM's own Triton kernel, which this CPU build
            # cannot run: the call reaches it (and fails there, not in hk).
            with pytest.raises(Exception) as failure:
                moe(x, logits)
            assert not isinstance(failure.value, HKError)
            assert counts.snapshot()["vllm.moe"] == {"engine": 1}


def test_rms_norm_through_vllm_ir(loaded, vllm_config, counts):
    from vllm import ir
    from vllm.config import VllmConfig
    from vllm.model_executor.layers.layernorm import RMSNorm

    VllmConfig().kernel_config.ir_op_priority.set_default()  # what each worker does at start
    assert ir.ops.rms_norm.get_priority()[0] == "hk"
    norm = RMSNorm(64, eps=1e-5, dtype=torch.bfloat16)
    with torch.no_grad():
        norm.weight.copy_(torch.rand(64) + 0.5)
    x = torch.randn(7, 64).to(torch.bfloat16)
    residual = torch.randn(7, 64).to(torch.bfloat16)
    want = ir.ops.rms_norm.impls["native"].impl_fn(x, norm.weight, 1e-5)
    want_fused = ir.ops.fused_add_rms_norm.impls["native"].impl_fn(x.clone(), residual.clone(), norm.weight, 1e-5)
    close(norm(x), want)
    out, res = norm(x.clone(), residual.clone())
    close(out, want_fused[0])
    close(res, want_fused[1])
    assert counts.snapshot()["vllm.norm"] == {"hk": 2}


def test_the_logits_projection(loaded, vllm_config, counts):
    from vllm.model_executor.layers.vocab_parallel_embedding import ParallelLMHead

    head = ParallelLMHead(256, 64, params_dtype=torch.bfloat16, prefix="lm_head")
    w = torch.randn(256, 64).to(torch.bfloat16) * 0.1
    with torch.no_grad():
        head.weight.copy_(w)
    head.quant_method.process_weights_after_loading(head)
    x = torch.randn(3, 64).to(torch.bfloat16)
    close(head.quant_method.apply(head, x), F.linear(x.float(), w.float()))  # as LogitsProcessor calls it
    assert counts.snapshot() == {"vllm.linear": {"hk": 1}}


@pytest.mark.parametrize("neox", [True, False])
def test_rotary_embedding(loaded, vllm_config, counts, neox):
    from vllm.model_executor.layers.rotary_embedding import get_rope

    rope = get_rope(64, 256, is_neox_style=neox, dtype=torch.bfloat16)
    positions = torch.tensor([0, 5, 17, 255])
    q, k = torch.randn(4, 4 * 64).to(torch.bfloat16), torch.randn(4, 2 * 64).to(torch.bfloat16)
    want_q, want_k = rope.forward_native(positions, q.clone(), k.clone())
    got_q, got_k = rope.forward_cuda(positions, q.clone(), k.clone())  # ROCm's forward_hip calls it
    close(got_q, want_q)
    close(got_k, want_k)
    assert counts.snapshot() == {"vllm.rotary": {"hk": 1}}


def test_silu_and_mul(loaded, vllm_config, counts):
    from vllm.model_executor.layers.activation import SiluAndMul

    x = torch.randn(5, 2 * 96).to(torch.bfloat16)
    close(SiluAndMul().forward_cuda(x), SiluAndMul.forward_native(x))  # ROCm's forward_hip calls it
    assert counts.snapshot() == {"vllm.silu_and_mul": {"hk": 1}}
