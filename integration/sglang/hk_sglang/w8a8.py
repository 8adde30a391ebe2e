"""W8A8 int8 layers on hk.ops.int8_scaled_mm: W8A8Int8LinearMethod.apply, the linear method of
SGLang's `w8a8_int8` quantization (per-channel int8 weights, activations quantized per token,
symmetric).

On a GPU the method keeps the weight transposed ([K, N] column-major) with its [N, 1] scales,
which hk.ops.int8_scaled_mm reads as they are; hk quantizes the activations with its own per-token
quantizer (SGLang's is Triton's per_token_quant_int8, the same rounding). A weight SGLang repacked
for its CPU kernels (AMX, or any Arm64 CPU) stays SGLang's.
"""

from hk_engine import Patch, Target, ops
from hk_engine.contract import Seam
from hk_sglang.common import counter

MODULE = "sglang.srt.layers.quantization.w8a8_int8"
TARGET = MODULE + ".W8A8Int8LinearMethod.apply"
PARAMS = ("self", "layer", "x", "bias")


def engine_only(layer):
    """A weight repacked for SGLang's CPU kernels (its apply takes them for these)."""
    import importlib

    from sglang.srt.utils import use_intel_amx_backend

    method = importlib.import_module(MODULE)
    return "layout" if use_intel_amx_backend(layer) or method._is_cpu_arm64 else None


def wrap(original):
    def apply(self, layer, x, bias=None):
        return ops.int8_linear(counter("w8a8_int8"), x, layer.weight, layer.weight_scale, bias,
                               lambda: original(self, layer, x, bias), uncovered=engine_only(layer))

    return apply


PATCH = Patch("w8a8", [Target(TARGET, wrap, PARAMS)])

# What engine_only() and the layer's processing (its weight transposed off the CPU) rely on.
SEAMS = [Seam(MODULE + "._is_cpu_arm64"), Seam(MODULE + "._is_cpu"),
         Seam(MODULE + ".W8A8Int8LinearMethod.process_weights_after_loading", ("self", "layer")),
         Seam(MODULE + ".W8A8Int8Config.get_quant_method", ("self", "layer", "prefix"))]
