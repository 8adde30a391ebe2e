"""4-bit AWQ layers on hk.ops.awq_gemm: AWQLinearKernel.apply, the kernel of SGLang's
AWQLinearScheme (the `awq` method on CUDA and ROCm), whose dequantize-then-matmul it replaces
whole, bias included.

The layer holds AWQ's tensors as the checkpoint has them: qweight [K, N/8] int32 in AWQ's nibble
order, qzeros [K/G, N/8], scales [K/G, N]; hk.ops.awq_gemm takes exactly those. Group sizes that
are multiples of 16 and bf16 or fp16 activations are covered.
"""

from hk_engine import Patch, Target, ops
from hk_engine.contract import Seam
from hk_sglang.common import counter

TARGET = "sglang.srt.hardware_backend.gpu.quantization.awq_kernels.AWQLinearKernel.apply"
PARAMS = ("self", "layer", "x", "bias")


def wrap(original):
    def apply(self, layer, x, bias=None):
        bits = None if self.quant_config.pack_factor == 8 else "bits"
        return ops.awq_gemm(counter("awq"), x, layer.qweight, layer.scales, layer.qzeros, bias,
                            lambda: original(self, layer, x, bias), uncovered=bits)

    return apply


PATCH = Patch("awq", [Target(TARGET, wrap, PARAMS)])

# The config's packing, which wrap() reads.
SEAMS = [Seam("sglang.srt.layers.quantization.awq.AWQConfig.__init__",
              ("self", "weight_bits", "group_size", "zero_point"))]
