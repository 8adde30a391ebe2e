"""W8A8 layers on hk's 8-bit GEMMs.

int8, on hk.ops.int8_scaled_mm: W8A8Int8LinearMethod.apply, the linear method of SGLang's
`w8a8_int8` quantization (per-channel int8 weights, activations quantized per token, symmetric).

On a GPU the method keeps the weight transposed ([K, N] column-major) with its [N, 1] scales,
which hk.ops.int8_scaled_mm reads as they are; hk quantizes the activations with its own per-token
quantizer (SGLang's is Triton's per_token_quant_int8: the same scales, max|x| / 127 per token). A weight SGLang repacked
for its CPU kernels (AMX, or any Arm64 CPU) stays SGLang's.

fp8, on hk.ops.scaled_mm: apply_fp8_linear, which the linear methods of `w8a8_fp8` and `fp8`
(W8A8Fp8LinearMethod, Fp8LinearMethod) call with the weight transposed ([K, N] column-major) and
its per-tensor or per-channel scales. hk quantizes the activations as SGLang does on ROCm: by the
static input scale, else per tensor for per-tensor weights (unless the layer asks for per-token),
else per token. Pre-quantized activations, a bound on the scales, and weights SGLang pre-shuffled
for AITER's GEMM stay SGLang's.

FNUZ fp8 (float8_e4m3fnuz: SGLang's on MI300, whose OCP checkpoints it converts) runs on the
targets whose fp8 is FNUZ (gfx942), the ones whose matrix instructions read it, with the
activations quantized by hk's quantizers to the weight's FNUZ format, as for OCP. hk's FNUZ
scale is max|x| / 240, the format's largest value; SGLang's ROCm quantizers divide by 224, so the
quantized activations differ from SGLang's by that margin, not in their error. Elsewhere FNUZ
stays SGLang's, and OCP weights on gfx942 do too (hk's quantizers refuse OCP fp8 there).
"""

import inspect

from hk_engine import Patch, Target, ops
from hk_engine.contract import Seam
from hk_sglang.common import arguments, counter

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


FP8_MODULE = "sglang.srt.layers.quantization.fp8_utils"
FP8_TARGET = FP8_MODULE + ".apply_fp8_linear"
FP8_PARAMS = ("input", "weight", "weight_scale", "input_scale", "input_scale_ub", "bias", "cutlass_fp8_supported",
              "use_per_token_if_dynamic")
MIN_SCALE = 1e-12  # the least per-tensor scale (a tensor of zeros)


def fp8_quantizer(weight, weight_scale, input_scale, per_token):
    """quant(x2d) -> (q, scale) by hk's quantizers in the weight's fp8 format (OCP or FNUZ), as
    SGLang quantizes on ROCm: by the static input scale, else per token for per-channel weights or
    when the layer asks for it, else per tensor."""
    import hk.ops
    from hk.ops import quantize

    def quant(x2):  # (called on hk's route only, where the weight is fp8)
        qmax = quantize.QDTYPES[weight.dtype][1]  # the format's largest value: 448, or 240 for e4m3fnuz
        if input_scale is not None:
            scale = input_scale.reshape(1).float()
        elif per_token or weight_scale.numel() != 1:
            return hk.ops.quant_per_row(x2.contiguous(), weight.dtype)
        else:
            scale = (x2.abs().amax().float() / qmax).clamp(min=MIN_SCALE).reshape(1)
        return hk.ops.quant(x2.contiguous(), scale, weight.dtype), scale

    return quant


def ocp_on_fnuz_target(weight):
    """OCP fp8 weights where hk's launches run for a target whose fp8 is FNUZ: hk's quantizers
    write no OCP fp8 there."""
    return weight.dtype in ops.FP8 and ops.fnuz_target(ops.launch_arch())


def fp8_uncovered(call):
    import importlib

    utils = importlib.import_module(FP8_MODULE)
    if call["input_scale_ub"] is not None:
        return "scale bound"
    if call["input_scale"] is not None and call["input_scale"].numel() != 1:
        return "input scale"
    if call["weight"].dim() == 2 and utils.use_aiter_bpreshuffle_gemm(call["weight"].shape[1]):
        return "layout"  # maybe pre-shuffled for AITER's GEMM
    if ocp_on_fnuz_target(call["weight"]):
        return "target"
    return None


def wrap_fp8(original):
    signature = inspect.signature(original)

    def apply_fp8_linear(*args, **kwargs):
        call = arguments(signature, args, kwargs)
        x, weight, weight_scale = call["input"], call["weight"], call["weight_scale"]
        quant = fp8_quantizer(weight, weight_scale, call["input_scale"], call["use_per_token_if_dynamic"])
        return ops.fp8_linear(counter("w8a8_fp8"), x, weight, weight_scale, call["bias"], x.dtype, quant,
                              lambda: original(*args, **kwargs), uncovered=fp8_uncovered(call))

    apply_fp8_linear.__signature__ = signature
    return apply_fp8_linear


BLOCK_TARGET = FP8_MODULE + ".triton_w8a8_block_fp8_linear"
BLOCK_PARAMS = ("input", "weight", "block_size", "weight_scale", "input_scale", "bias", "act_scale_ue8m0")


def block_quantizer(weight):
    """quant(x2d [M, K]) -> (q, scale [M, K/128]) by hk's per-row quantizer over each token's
    128-column groups, in the weight's fp8 format (OCP or FNUZ), as SGLang's
    per_token_group_quant_fp8 quantizes for its block kernel."""
    import hk.ops

    group = ops.BLOCK[1]

    def quant(x2):  # (called on hk's route only: K a multiple of 128, the weight fp8)
        m, k = x2.shape
        q, scale = hk.ops.quant_per_row(x2.contiguous().view(-1, group), weight.dtype)
        return q.view(m, k), scale.view(m, k // group)

    return quant


def block_uncovered(call):
    if call["input_scale"] is not None:
        return "pre-quantized activations"
    if call["act_scale_ue8m0"]:
        return "scale format"  # power-of-two activation scales, which hk's quantizer does not round to
    if ocp_on_fnuz_target(call["weight"]):
        return "target"
    return None


def wrap_block(original):
    signature = inspect.signature(original)

    def triton_w8a8_block_fp8_linear(*args, **kwargs):
        call = arguments(signature, args, kwargs)
        x, weight = call["input"], call["weight"]
        return ops.fp8_block_linear(counter("w8a8_fp8_block"), x, weight, call["weight_scale"], call["bias"], x.dtype,
                                    block_quantizer(weight), lambda: original(*args, **kwargs),
                                    uncovered=block_uncovered(call), block=tuple(call["block_size"] or ()))

    triton_w8a8_block_fp8_linear.__signature__ = signature
    return triton_w8a8_block_fp8_linear


PATCH = Patch("w8a8", [Target(TARGET, wrap, PARAMS), Target(FP8_TARGET, wrap_fp8, FP8_PARAMS),
                       Target(BLOCK_TARGET, wrap_block, BLOCK_PARAMS)])

# What engine_only() and the layer's processing (its weight transposed off the CPU) rely on.
SEAMS = [Seam(MODULE + "._is_cpu_arm64"), Seam(MODULE + "._is_cpu"),
         Seam(MODULE + ".W8A8Int8LinearMethod.process_weights_after_loading", ("self", "layer")),
         Seam(MODULE + ".W8A8Int8Config.get_quant_method", ("self", "layer", "prefix")),
         Seam(FP8_MODULE + ".use_aiter_bpreshuffle_gemm", ("output_size",)),
         Seam("sglang.srt.layers.quantization.w8a8_fp8.W8A8Fp8LinearMethod.apply", ("self", "layer", "x", "bias")),
         Seam("sglang.srt.layers.quantization.fp8.Fp8LinearMethod.apply", ("self", "layer", "x", "bias"))]
# For block scales: the dispatcher that hands a layer the patched function when it is built (its
# module's global, read then), and the methods that lay the weight out [N, K] with its block
# scales and pass them to it.
BLOCK_SEAMS = [Seam(FP8_MODULE + ".dispatch_w8a8_block_fp8_linear", ("weight_block_size", "act_scale_ue8m0")),
               Seam(FP8_MODULE + "._dispatch_auto_backend", ("act_scale_ue8m0",)),
               Seam("sglang.srt.layers.quantization.fp8.Fp8LinearMethod.process_weights_after_loading_block_quant",
                    ("self", "layer")),
               Seam("sglang.srt.layers.quantization.compressed_tensors.schemes.compressed_tensors_w8a8_fp8."
                    "CompressedTensorsW8A8Fp8.apply_weights", ("self", "layer", "x", "bias"))]
SEAMS += BLOCK_SEAMS
