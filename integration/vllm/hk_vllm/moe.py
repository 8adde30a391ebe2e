"""The MoE experts on hk.ops.fused_moe: TritonExperts.apply, the modular kernel's experts step
(both grouped GEMMs and the activation between them) that vLLM runs for unquantized MoE layers
on ROCm without AITER.

TritonExperts applies the router weights in its second GEMM and sums the top-k rows itself, so
`output` [tokens, hidden] is final: hk.ops.fused_moe computes the same (w1 [E, 2I, H] gate rows
then up, SiLU and mul, w2 [E, H, I], expert_map for expert parallelism). Unquantized bf16/fp16
weights without biases, SiLU, router weights on the output and no LoRA are covered.
"""

from hk_engine import Patch, Target
from hk_engine.plugin import dispatch
from hk_engine.ops import HALF, moe_facts
from hk_vllm.common import counter

TARGET = "vllm.model_executor.layers.fused_moe.experts.triton_moe.TritonExperts.apply"
PARAMS = ("self", "output", "hidden_states", "w1", "w2", "topk_weights", "topk_ids", "activation",
          "global_num_experts", "expert_map", "a1q_scale", "a2_scale", "workspace13", "workspace2",
          "expert_tokens_meta", "apply_router_weight_on_input")


def uncovered(experts, hidden_states, w1, w2, activation, a1q_scale, apply_router_weight_on_input):
    from vllm.model_executor.layers.fused_moe.activation import MoEActivation

    qc = experts.quant_config
    if hidden_states.dtype not in HALF or w1.dtype != hidden_states.dtype or w2.dtype != hidden_states.dtype:
        return "dtype"
    if qc.is_quantized or a1q_scale is not None or qc.w1_bias is not None or qc.w2_bias is not None:
        return "quantized"
    if activation != MoEActivation.SILU or apply_router_weight_on_input:
        return "activation"
    if getattr(experts, "_lora_context", None) is not None:
        return "lora"
    return None


def wrap(original):
    def apply(self, output, hidden_states, w1, w2, topk_weights, topk_ids, activation, global_num_experts,
              expert_map, a1q_scale, a2_scale, workspace13, workspace2, expert_tokens_meta,
              apply_router_weight_on_input):
        import hk.ops

        def hk_call():
            output.copy_(hk.ops.fused_moe(hidden_states, w1, w2, topk_weights, topk_ids, expert_map))

        return dispatch(
            counter("moe"), "moe",
            moe_facts(hidden_states, w1, w2, topk_ids.shape[-1]),
            hk_call,
            lambda: original(self, output, hidden_states, w1, w2, topk_weights, topk_ids, activation,
                             global_num_experts, expert_map, a1q_scale, a2_scale, workspace13, workspace2,
                             expert_tokens_meta, apply_router_weight_on_input),
            uncovered=uncovered(self, hidden_states, w1, w2, activation, a1q_scale, apply_router_weight_on_input))

    return apply


PATCH = Patch("moe", [Target(TARGET, wrap, PARAMS)])
