"""Unquantized linear layers on hk.ops.linear: UnquantizedLinearMethod.apply, which every
ReplicatedLinear, ColumnParallelLinear, MergedColumnParallelLinear, QKVParallelLinear and
RowParallelLinear without quantization calls, and UnquantizedEmbeddingMethod.apply, the output
projection of an unquantized ParallelLMHead (the logits).

On gfx11 vLLM pads each weight row by a cache line (maybe_pad_weight_avoid_cache_aliasing: the
weight is a view with stride(0) = K + 64): hk.ops.linear reads such row-strided weights as they
are. bf16 and fp16 are covered; anything else, and vLLM's batch-invariant mode, stay vLLM's.
"""

from hk_engine import Patch, Target, ops
from hk_vllm.common import counter

TARGET = "vllm.model_executor.layers.linear.UnquantizedLinearMethod.apply"
LM_HEAD = "vllm.model_executor.layers.vocab_parallel_embedding.UnquantizedEmbeddingMethod.apply"


def wrap(original):
    def apply(self, layer, x, bias=None):
        from vllm import envs

        return ops.linear(counter("linear"), x, layer.weight, bias, lambda: original(self, layer, x, bias),
                          uncovered="batch-invariant" if envs.VLLM_BATCH_INVARIANT else None)

    return apply


PATCH = Patch("linear", [Target(path, wrap, ("self", "layer", "x", "bias")) for path in (TARGET, LM_HEAD)])
