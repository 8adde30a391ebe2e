"""The MoE experts on hk.ops.fused_moe: fused_experts, the function SGLang's Triton MoE runner
calls for the experts' two grouped GEMMs, the activation between them and the top-k sum (the
path of unquantized MoE layers on CUDA and ROCm).

hk.ops.fused_moe computes the same from the same tensors: w1 [E, 2I, H] gate rows then up,
SiLU and mul, w2 [E, H, I], the router weights applied to the output and summed over top-k.
Unquantized bf16/fp16 weights without biases, SiLU gating with gate and up not interleaved,
router weights on the output, a combined output and all experts local are covered. Like
SGLang's, with moe_runner_config.inplace the result is written into hidden_states and returned.
"""

import inspect

from hk_engine import Patch, Target
from hk_engine.contract import Seam
from hk_engine.plugin import dispatch
from hk_engine.ops import HALF, moe_facts
from hk_sglang.common import arguments, counter

TARGET = "sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe.fused_experts"
PARAMS = ("hidden_states", "w1", "w2", "topk_output", "moe_runner_config", "b1", "b2", "use_fp8_w8a8",
          "use_int8_w8a8", "use_int8_w8a16", "use_int4_w4a16", "per_channel_quant", "w1_scale", "w2_scale",
          "w1_zp", "w2_zp", "a1_scale", "a2_scale", "block_shape", "a1_q", "fuse_swiglu_interleaved")
QUANT_FLAGS = ("use_fp8_w8a8", "use_int8_w8a8", "use_int8_w8a16", "use_int4_w4a16", "per_channel_quant")
QUANT_TENSORS = ("w1_scale", "w2_scale", "w1_zp", "w2_zp", "a1_scale", "a2_scale", "block_shape", "a1_q")


def uncovered(a):
    """Why hk.ops.fused_moe cannot serve the call with arguments `a` (by name), or None."""
    from sglang.srt.layers.moe.topk import StandardTopKOutput

    x, w1, w2, cfg = a["hidden_states"], a["w1"], a["w2"], a["moe_runner_config"]
    if not isinstance(a["topk_output"], StandardTopKOutput):
        return "topk-format"
    if x.dtype not in HALF or w1.dtype != x.dtype or w2.dtype != x.dtype:
        return "dtype"
    if any(a[f] for f in QUANT_FLAGS) or any(a[t] is not None for t in QUANT_TENSORS):
        return "quantized"
    if a["b1"] is not None or a["b2"] is not None:
        return "bias"
    if (cfg.activation != "silu" or not cfg.is_gated or a["fuse_swiglu_interleaved"] or cfg.gemm1_alpha is not None
            or cfg.gemm1_clamp_limit is not None or cfg.swiglu_limit is not None):
        return "activation"
    if cfg.apply_router_weight_on_input or cfg.no_combine:
        return "routing"
    if cfg.num_experts is None or cfg.num_experts != cfg.num_local_experts:
        return "expert-parallel"
    if x.dim() != 2 or w1.dim() != 3 or w1.shape[1] != 2 * w2.shape[-1] or w2.shape[1] != x.shape[-1]:
        return "layout"
    return None


def wrap(original):
    signature = inspect.signature(original)

    def fused_experts(*args, **kwargs):
        import hk.ops

        a = arguments(signature, args, kwargs)
        x, cfg = a["hidden_states"], a["moe_runner_config"]

        def hk_call():
            topk_weights, topk_ids, _ = a["topk_output"]
            out = hk.ops.fused_moe(x, a["w1"], a["w2"], topk_weights, topk_ids)
            if cfg.routed_scaling_factor not in (None, 1.0):
                out.mul_(cfg.routed_scaling_factor)
            return x.copy_(out) if cfg.inplace else out

        return dispatch(
            counter("moe"), "moe",
            moe_facts(x, a["w1"], a["w2"], cfg.top_k),
            hk_call, lambda: original(*args, **kwargs), uncovered=uncovered(a))

    return fused_experts


PATCH = Patch("moe", [Target(TARGET, wrap, PARAMS)])

# The runner's configuration and the top-k format uncovered() reads.
SEAMS = [Seam("sglang.srt.layers.moe.topk.StandardTopKOutput"),
         Seam("sglang.srt.layers.moe.moe_runner.base.MoeRunnerConfig.__init__",
              ("self", "num_experts", "num_local_experts", "hidden_size", "intermediate_size_per_partition",
               "layer_id", "top_k")),
         ] + [Seam("sglang.srt.layers.moe.moe_runner.base.MoeRunnerConfig." + field)
              for field in ("activation", "is_gated", "apply_router_weight_on_input", "inplace", "no_combine",
                            "routed_scaling_factor", "gemm1_alpha", "gemm1_clamp_limit", "swiglu_limit")]
