"""SiLU-and-mul on hk.ops.silu_and_mul: SiluAndMul.forward_cuda, which its ROCm forward calls
(CustomOp.forward_hip), when vLLM's custom ops are on (custom_ops "all" or "+silu_and_mul", the
default with enforce_eager). bf16, fp16 and fp32 are covered.
"""

from hk_engine import Patch, Target, ops
from hk_vllm.common import counter

TARGET = "vllm.model_executor.layers.activation.SiluAndMul.forward_cuda"


def wrap(original):
    def forward_cuda(self, x):
        return ops.silu_and_mul(counter("silu_and_mul"), x, lambda: original(self, x))

    return forward_cuda


PATCH = Patch("activation", [Target(TARGET, wrap, ("self", "x"))])
