"""4-bit AWQ layers on hk.ops.awq_gemm: AutoAWQLinearMethod.apply, the method vLLM takes for AWQ
checkpoints on ROCm (where it also forces its Triton AWQ kernels, which this replaces).

The layer holds AWQ's tensors as the checkpoint has them (qweight [K, N/8] int32 in AWQ's nibble
order, qzeros [K/G, N/8], scales [K/G, N]), which hk.ops.awq_gemm takes as they are.
"""

from hk_engine import Patch, Target, ops
from hk_vllm.common import counter

TARGET = "vllm.model_executor.layers.quantization.auto_awq.AutoAWQLinearMethod.apply"


def wrap(original):
    def apply(self, layer, x, bias=None):
        return ops.awq_gemm(counter("awq"), x, layer.qweight, layer.scales, layer.qzeros, bias,
                            lambda: original(self, layer, x, bias))

    return apply


PATCH = Patch("awq", [Target(TARGET, wrap, ("self", "layer", "x", "bias"))])
