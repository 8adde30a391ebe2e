"""vLLM serving the Llama as a CompressedTensors W8A8 fp8 checkpoint end to end on hk's kernels
on the interpreter, every projection on hk.ops.scaled_mm through hk's fp8 kernel classes.
HK_E2E_MODEL names the checkpoint (hk_engine.testing.models):

    llama_fp8        FP8_DYNAMIC: e4m3 weights per output channel, activations quantized to e4m3
                     per token by vLLM's QuantFP8; hk's fp8 class (counter w8a8_fp8)
    llama_fp8_block  FP8_BLOCK: e4m3 weights in 128 x 128 blocks, activations per token per 128
                     columns; hk's block-scaled class (counter w8a8_fp8_block)

Token for token against transformers in float32 on the same computation (the e4m3 weights
dequantized, each projection's input quantized to e4m3 and back as QuantFP8 does), within
hk_engine.testing.reference's thresholds for e4m3 activations; every GEMM hk's, on the
checkpoint's own e4m3 bytes and scales."""

import os

import pytest
import torch

import e2e
from hk_engine.testing import reference

KIND = os.environ["HK_E2E_MODEL"]
BLOCK = KIND == "llama_fp8_block"
PROMPTS = [0, 2, 5]  # a short prompt, the longest (prefilled past a block), another
TOKENS = 8
E4M3 = torch.float8_e4m3fn
# The Llama's projections, as vLLM fuses them: (checkpoint names, fused)
PROJECTIONS = [(("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"), "qkv"), (("self_attn.o_proj",), "o"),
               (("mlp.gate_proj", "mlp.up_proj"), "gate_up"), (("mlp.down_proj",), "down")]


def checkpoint_products():
    """{(K, N): [(weight [N, K] as e4m3 bytes, weight_scale fp32), one per layer]}: each fused
    projection of each layer as the checkpoint stores it."""
    from safetensors.torch import load_file

    stored = load_file(os.path.join(e2e.model(KIND), "model.safetensors"))
    out = {}
    for layer in range(e2e.LAYERS):
        for names, _ in PROJECTIONS:
            prefixes = ["model.layers.%d.%s." % (layer, n) for n in names]
            w = torch.cat([stored[p + "weight"] for p in prefixes])
            s = torch.cat([stored[p + "weight_scale"] for p in prefixes])
            assert w.dtype == E4M3 and s.dtype == torch.float32, (w.dtype, s.dtype)
            out.setdefault((w.shape[1], w.shape[0]), []).append((w.view(torch.uint8), s))
    return out


@pytest.fixture
def scaled_mm_calls(monkeypatch):
    """(a, b, scale_a, scale_b) of each hk.ops.scaled_mm call."""
    import hk.ops

    calls = []
    op = hk.ops.scaled_mm

    def spy(a, b, scale_a, scale_b, *args, **kwargs):
        calls.append((a, b, scale_a, scale_b))
        return op(a, b, scale_a, scale_b, *args, **kwargs)

    monkeypatch.setattr(hk.ops, "scaled_mm", spy)
    return calls


def check_call(call, products):
    """One GEMM: e4m3 activations with per-token (per 128-column group) scales, times a weight and
    scales that are one layer's projection as the checkpoint stores it."""
    a, b, scale_a, scale_b = call
    m, k = a.shape
    n = b.shape[1]
    assert a.dtype == b.dtype == E4M3 and b.shape[0] == k, (a.dtype, b.dtype, a.shape, b.shape)
    if BLOCK:  # b is the weight [N, K] transposed, scale_b its block scales [N/128, K/128] transposed
        assert tuple(scale_a.shape) == (m, k // 128) and tuple(scale_b.shape) == (k // 128, n // 128)
        scale_b = scale_b.t()
    else:  # per token; per output channel
        assert tuple(scale_a.shape) == (m, 1) and tuple(scale_b.shape) == (1, n)
        scale_b = scale_b.reshape(n, 1)
    weight = b.t().contiguous().view(torch.uint8)
    assert any(torch.equal(weight, w) and torch.equal(scale_b.float(), s) for w, s in products[(k, n)]), (k, n)


def test_fp8_checkpoint_matches_transformers_and_every_gemm_is_hks(scaled_mm_calls):
    from hk_engine import counters

    llm = e2e.engine(KIND)
    assert llm.llm_engine.vllm_config.quant_config.get_name() == "compressed-tensors"
    prompts, _ = e2e.expected(KIND)
    counters.reset()
    scaled_mm_calls.clear()
    outputs = e2e.generate(llm, [prompts[i] for i in PROMPTS], TOKENS)
    rows = e2e.agree(KIND, outputs, PROMPTS, "%s on interp against transformers (float32)" % KIND, TOKENS,
                     margin=reference.FP8_ACTIVATION_MARGIN,
                     logprob_error=reference.FP8_ACTIVATION_LOGPROB_ERROR)
    e2e.report("%s: largest |dlogprob| %.4f" % (KIND, max(r.max_logprob_error for r in rows)))
    # Every projection on hk's fp8 (or block-scaled fp8) kernel class, the logits' head on hk's linear...
    passes = e2e.per_pass(KIND, counters.snapshot())
    # ... each one hk.ops.scaled_mm call on the checkpoint's weights, every projection of every layer.
    assert len(scaled_mm_calls) == passes * len(PROJECTIONS) * e2e.LAYERS, len(scaled_mm_calls)
    products = checkpoint_products()
    assert {(c[1].shape[0], c[1].shape[1]) for c in scaled_mm_calls} == set(products)
    for call in scaled_mm_calls:
        check_call(call, products)
