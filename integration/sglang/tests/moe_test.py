"""A FusedMoE layer built SGLang's way, its experts run through the Triton runner's path
(UnquantizedFusedMoEMethod.forward_cuda -> the runner -> fused_experts) on hk.ops.fused_moe,
against the layer's own torch forward (moe_forward_native, what SGLang runs on a CPU); in place
as SGLang's runner config asks by default, and out of place."""

import pytest
import torch

from hk_engine import counters

EXPERTS, HIDDEN, INTER, TOP_K, TOKENS = 8, 64, 32, 2, 5


@pytest.mark.parametrize("inplace", [True, False])
def test_fused_moe_runs_on_hk_through_the_triton_path(patched, inplace):
    from sglang.srt.layers.moe.fused_moe_triton.layer import FusedMoE
    from sglang.srt.layers.moe.topk import StandardTopKOutput, TopK

    moe = FusedMoE(num_experts=EXPERTS, hidden_size=HIDDEN, intermediate_size=INTER, layer_id=0, top_k=TOP_K,
                   params_dtype=torch.bfloat16, inplace=inplace, prefix="model.layers.0.mlp.experts")
    torch.manual_seed(0)
    moe.w13_weight.data.copy_(torch.randn(EXPERTS, 2 * INTER, HIDDEN, dtype=torch.bfloat16) * 0.1)
    moe.w2_weight.data.copy_(torch.randn(EXPERTS, HIDDEN, INTER, dtype=torch.bfloat16) * 0.1)
    moe.quant_method.process_weights_after_loading(moe)
    assert moe.moe_runner_config.inplace is inplace and moe.moe_runner_config.activation == "silu"

    x = torch.randn(TOKENS, HIDDEN, dtype=torch.bfloat16)
    topk_output = TopK(top_k=TOP_K, layer_id=0, renormalize=True)(x, torch.randn(TOKENS, EXPERTS))
    assert isinstance(topk_output, StandardTopKOutput)
    ref = moe(x.clone(), topk_output)  # on a CPU: the layer's torch forward, not the Triton path

    hidden_states = x.clone()
    dispatched = moe.dispatcher.dispatch(hidden_states=hidden_states, topk_output=topk_output)
    out = moe.dispatcher.combine(combine_input=moe.quant_method.forward_cuda(layer=moe, dispatch_output=dispatched))
    assert out.shape == (TOKENS, HIDDEN) and out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), ref.float(), rtol=2e-2, atol=1e-2)
    # In place, SGLang's runner returns hidden_states holding the result; else leaves it be.
    assert (out is hidden_states) is inplace
    assert torch.equal(hidden_states, out if inplace else x)
    assert counters.snapshot() == {"sglang.moe": {"hk": 1}}


def test_the_plugin_takes_sglangs_own_moe_rules(patched, routes):
    # MoE's rules differ per engine in the shipped tables: SGLang's here say hk, vLLM's and the
    # shared ones the engine's (whose Triton kernel a CPU cannot run): the call is hk's.
    engine, hk = [{"when": {}, "route": "engine"}], [{"when": {}, "route": "hk"}]
    routes({"target": "any", "ops": {"moe": engine}, "engines": {"vllm": {"moe": engine}, "sglang": {"moe": hk}}})
    test_fused_moe_runs_on_hk_through_the_triton_path(patched, False)
