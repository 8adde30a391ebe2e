"""RMSNorm on hk.ops.rms_norm and hk.ops.fused_add_rms_norm(_): RMSNorm.forward_cuda,
forward_hip and forward_native, the platform forwards SGLang's fused-op dispatch picks on CUDA,
ROCm and elsewhere (patched before a layer's first call, which caches the one it picks).

Each keeps its original's contract on its inputs: forward_cuda adds and normalizes in place
(x becomes the output, residual the sum, as SGLang's CUDA kernel does); forward_hip and
forward_native leave their inputs as they were. With a residual, the return is (out, residual).
Covered: bf16, fp16 or fp32 rows with a weight of the same dtype, the plain form and the fused
add; a post-residual addition, a fused input quantization for the next linear, and the layer
variants (var_hidden_size, fp32_residual, cast_x_before_out_mul, x_pad_to_multiple, an
override of the output dtype) stay SGLang's.
"""

import torch

from hk_engine import Patch, Target
from hk_engine.contract import Seam
from hk_engine.ops import norm_facts
from hk_engine.plugin import dispatch
from hk_sglang.common import counter

CLASS = "sglang.srt.layers.layernorm.RMSNorm"
PARAMS = ("self", "x", "residual", "post_residual_addition", "quant_linear")
FLOATS = (torch.bfloat16, torch.float16, torch.float32)
# The forwards replaced, and whether the original writes into x and residual.
FORWARDS = {"forward_cuda": True, "forward_hip": False, "forward_native": False}


def _weight(norm):
    return norm.weight if norm.has_weight else None


def _quantizes_output(linear):
    """Whether SGLang quantizes the norm's output for `linear` in its kernel: only for a linear with
    a static per-tensor FP8 input scale. Models hand every decoder norm its next linear
    (fuse_input_quant), quantized or not."""
    from sglang.srt.layers import layernorm

    return linear is not None and layernorm._fp8_static_input_scale(linear) is not None


def uncovered(norm, x, residual, post_residual_addition, quant_linear):
    """Why hk's kernels cannot serve this call, or None."""
    from sglang.srt.batch_invariant_ops import is_batch_invariant_mode_enabled

    fused_quant = quant_linear if quant_linear is not None else norm._quant_linear
    if post_residual_addition is not None or _quantizes_output(fused_quant):
        return "fusion"
    if (norm.variance_size_override is not None or norm.fp32_residual or norm.cast_x_before_out_mul
            or getattr(norm, "x_pad_to_multiple", 0) or norm.override_orig_dtype is not None):
        return "variant"
    weight = _weight(norm)
    if x.dtype not in FLOATS or (weight is not None and weight.dtype != x.dtype):
        return "dtype"
    if residual is not None and (residual.dtype != x.dtype or residual.shape != x.shape):
        return "dtype"
    if x.numel() == 0 or x.shape[-1] != norm.hidden_size:
        return "shape"
    if is_batch_invariant_mode_enabled():
        return "batch-invariant"
    return None


def wrap_forward(inplace):
    def wrap(original):
        def forward(self, x, residual=None, post_residual_addition=None, quant_linear=None):
            import hk.ops

            weight, eps = _weight(self), self.variance_epsilon

            def hk_call():
                if residual is None:
                    return hk.ops.rms_norm(x, weight, eps)
                if not inplace:
                    return hk.ops.fused_add_rms_norm(x, residual, weight, eps)
                # In place needs rows it can write: a copy of a strided tensor takes its place.
                out = x if x.is_contiguous() else x.contiguous()
                res = residual if residual.is_contiguous() else residual.contiguous()
                hk.ops.fused_add_rms_norm_(out, res, weight, eps)
                return out, res

            return dispatch(counter("norm"), "rms_norm", norm_facts(x, residual is not None), hk_call,
                            lambda: original(self, x, residual, post_residual_addition, quant_linear),
                            uncovered=uncovered(self, x, residual, post_residual_addition, quant_linear))

        return forward

    return wrap


PATCH = Patch("norm", [Target("%s.%s" % (CLASS, name), wrap_forward(inplace), PARAMS)
                       for name, inplace in FORWARDS.items()])

# The layer's construction (the variants uncovered() tells apart) and the fused quantization.
SEAMS = [Seam(CLASS + ".__init__", ("self", "hidden_size", "eps", "var_hidden_size", "cast_x_before_out_mul",
                                    "fp32_residual", "has_weight", "weight_dtype", "override_orig_dtype",
                                    "x_pad_to_multiple")),
         Seam(CLASS + "._quant_linear"),
         Seam("sglang.srt.layers.layernorm._fp8_static_input_scale", ("linear",))]
