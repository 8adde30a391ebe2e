"""Rotary position embedding on hk.ops.rotary_embedding: vllm._custom_ops.rotary_embedding, the
in-place rotation of q and k that RotaryEmbedding's CUDA and ROCm forwards (and its CPU one) call
when vLLM's custom ops are on (custom_ops "all" or "+rotary_embedding", the default with
enforce_eager; under torch.compile vLLM compiles forward_native instead).

Its rope_dim_offset and inverse forms, and what hk's kernel does not take (a rotated width that is
not a multiple of 32, interleaved fp32), stay vLLM's.
"""

from hk_engine import Patch, Target, ops
from hk_vllm.common import counter

TARGET = "vllm._custom_ops.rotary_embedding"
PARAMS = ("positions", "query", "key", "head_size", "cos_sin_cache", "is_neox", "rope_dim_offset", "inverse")


def wrap(original):
    def rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox, rope_dim_offset=0, inverse=False):
        return ops.rotary_embedding(
            counter("rotary"), positions, query, key, head_size, cos_sin_cache, is_neox,
            lambda: original(positions, query, key, head_size, cos_sin_cache, is_neox, rope_dim_offset, inverse),
            uncovered="variant" if rope_dim_offset or inverse else None)

    return rotary_embedding


PATCH = Patch("rotary", [Target(TARGET, wrap, PARAMS)])
