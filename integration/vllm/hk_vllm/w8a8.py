"""W8A8 linear layers on hk's 8-bit GEMMs: an int8, an fp8 and a block-scaled fp8 kernel class of
vLLM's own kinds (Int8ScaledMMLinearKernel, FP8ScaledMMLinearKernel, Fp8BlockScaledMMLinearKernel),
put first in vLLM's kernel lists (_POSSIBLE_INT8_KERNELS, _POSSIBLE_FP8_KERNELS,
_POSSIBLE_FP8_BLOCK_KERNELS) for ROCm and CPU. Every layer whose method builds its kernel through
vLLM's selection (init_fp8_linear_kernel, init_int8_linear_kernel) takes them: CompressedTensors
W8A8 int8 (static or dynamic activations, symmetric or with a zero point) and fp8, and
Fp8LinearMethod (per-tensor or per-channel weights, per-tensor or per-token activations), and
both with DeepSeek-style 128 x 128 weight blocks and dynamic per-token-per-128-group activations
(Fp8LinearMethod's weight_block_size, CompressedTensors' block strategy: Qwen3-8B-FP8, DeepSeek
checkpoints), which vLLM on ROCm multiplies with AITER's block GEMM or its Triton kernel
(w8a8_triton_block_scaled_mm).

Each hk kernel also builds the kernel vLLM would have chosen without it (the next of the list
that supports the layer): calls hk does not cover, or that the routing table sends to the engine,
run on that one. Both read the same processed weights when the next kernel keeps vLLM's cutlass
layout (int8 [K, N] column-major: Triton's and AITER's on ROCm; fp8: every kernel that leaves the
weights as the linear method made them); otherwise (vLLM's CPU kernels, which repack or drop
them) hk keeps its own copy. An explicit --linear-backend, and VLLM_BATCH_INVARIANT on ROCm, keep
vLLM's choice.

fp8 in OCP formats is served on every target; vLLM's FNUZ fp8 (float8_e4m3fnuz: on MI300 it
converts OCP checkpoints to it and quantizes activations to it) on the targets whose fp8 is
FNUZ (gfx942), whose matrix instructions read it; elsewhere, and for OCP with FNUZ in one product, vLLM's kernel serves.

hk serves ROCm, and vLLM's CPU build when its launches run on hk's interpreter or emulator
(HK_DEVICE=interp or emu).
"""

import os

import torch

from hk_engine import Patch, ops
from hk_engine.contract import Seam
from hk_vllm.common import counter

_KL = "vllm.model_executor.kernels.linear"
_SM = _KL + ".scaled_mm.ScaledMMLinearKernel"
_BS = _KL + ".scaled_mm.BlockScaledMMLinearKernel"

SEAMS = [
    Seam(_KL + "._POSSIBLE_INT8_KERNELS"),
    Seam(_KL + "._POSSIBLE_FP8_KERNELS"),
    Seam(_KL + ".choose_scaled_mm_linear_kernel", ("config", "possible_kernels", "compute_capability",
                                                    "force_kernel", "quantization")),
    Seam(_KL + ".init_int8_linear_kernel", ("is_channelwise", "is_static_input_scheme", "input_symmetric",
                                             "module_name")),
    Seam(_KL + ".init_fp8_linear_kernel", ("activation_quant_key", "weight_quant_key", "input_dtype",
                                            "out_dtype", "weight_shape")),
    Seam(_SM + ".ScaledMMLinearKernel.__init__", ("self", "c", "layer_param_names")),
    Seam(_SM + ".ScaledMMLinearKernel.is_supported", ("compute_capability",)),
    Seam(_SM + ".ScaledMMLinearKernel.can_implement", ("c",)),
    Seam(_SM + ".ScaledMMLinearKernel.process_weights_after_loading", ("self", "layer")),
    Seam(_SM + ".ScaledMMLinearKernel.apply_weights", ("self", "layer", "x", "bias")),
    Seam(_SM + ".Int8ScaledMMLinearKernel._get_layer_params", ("self", "layer")),
    Seam(_SM + ".Int8ScaledMMLinearLayerConfig.__init__", ("self", "is_static_input_scheme", "is_channelwise",
                                                           "input_symmetric")),
    Seam(_SM + ".FP8ScaledMMLinearKernel.apply_scaled_mm", ("self", "A", "B", "out_dtype", "As", "Bs", "bias",
                                                            "output_shape")),
    Seam(_SM + ".FP8ScaledMMLinearKernel._get_layer_params", ("self", "layer")),
    Seam(_SM + ".FP8ScaledMMLinearLayerConfig.__init__", ("self", "weight_quant_key", "activation_quant_key",
                                                          "weight_shape", "input_dtype", "out_dtype")),
    Seam(_KL + "._POSSIBLE_FP8_BLOCK_KERNELS"),
    Seam(_BS + ".Fp8BlockScaledMMLinearKernel.__init__", ("self", "config")),
    Seam(_BS + ".Fp8BlockScaledMMLinearKernel.can_implement", ("config",)),
    Seam(_BS + ".Fp8BlockScaledMMLinearKernel.process_weights_after_loading", ("self", "layer")),
    Seam(_BS + ".Fp8BlockScaledMMLinearKernel.apply_weights", ("self", "layer", "x", "bias")),
    Seam(_BS + ".Fp8BlockScaledMMLinearKernel.apply_block_scaled_mm", ("self", "A", "B", "As", "Bs")),
    Seam(_BS + ".FP8BlockParams.from_layer", ("layer",)),
    Seam(_BS + ".FP8BlockParams.block_scale_attr"),
    Seam(_KL + ".scaled_mm.cutlass.CutlassInt8ScaledMMLinearKernel.process_weights_after_loading",
         ("self", "layer")),
    Seam("vllm._custom_ops.scaled_int8_quant", ("input", "scale", "azp", "symmetric")),
    Seam("vllm.platforms.PlatformEnum.ROCM"),
    Seam("vllm.platforms.PlatformEnum.CPU"),
    Seam("vllm.platforms.interface.Platform.is_fp8_fnuz"),
]

HALF = (torch.bfloat16, torch.float16)


def _fp8_formats(act_dtype, weight_dtype):
    """Why hk's fp8 kernel refuses a layer of these fp8 formats (None: it takes it): the engine
    ops' check, with its sentence. On a platform whose fp8 is FNUZ, vLLM converts OCP weights to
    FNUZ and quantizes activations to FNUZ whatever the quant keys say: those layers are FNUZ,
    which hk serves on targets whose fp8 is FNUZ (gfx942) only."""
    from vllm.platforms import current_platform

    why = ops.fp8_formats_refusal(weight_dtype, act_dtype, fnuz=current_platform.is_fp8_fnuz())
    return why[1] if why else None


def _platform_ok():
    from vllm.platforms import current_platform

    if current_platform.is_rocm():
        return True, None
    if current_platform.is_cpu() and os.environ.get("HK_DEVICE", "").strip().lower() in ("interp", "emu"):
        return True, None
    return False, "runs on ROCm, or on a CPU with HK_DEVICE=interp or emu."


_FP8_PARAMS = ["weight", "weight_scale", "input_scale", "input_scale_ub"]


def _next_kernel(kernel, kind):
    """The kernel vLLM chooses for kernel.config without hk's (None: none can implement it)."""
    from vllm.model_executor.kernels import linear as kl
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearKernel

    table = {"int8": kl._POSSIBLE_INT8_KERNELS, "fp8": kl._POSSIBLE_FP8_KERNELS,
             "fp8_block": kl._POSSIBLE_FP8_BLOCK_KERNELS}[kind]
    rest = {platform: [k for k in kernels if k not in KERNELS] for platform, kernels in table.items()}
    try:
        chosen = kl.choose_scaled_mm_linear_kernel(kernel.config, rest, quantization="%s_w8a8" % kind)
    except ValueError:
        return None
    if kind != "fp8_block":
        return chosen(kernel.config, kernel.layer_param_names)
    # As init_fp8_linear_kernel builds them: the block list holds FP8ScaledMMLinearKernels too.
    return chosen(kernel.config, _FP8_PARAMS) if issubclass(chosen, FP8ScaledMMLinearKernel) else chosen(kernel.config)


def _own_copy(layer, names):
    """A module holding clones of the layer's tensors `names` (and its logical widths), for hk's
    processing where the next kernel's replaces them."""
    holder = torch.nn.Module()
    for name in names:
        value = getattr(layer, name, None)
        if isinstance(value, torch.Tensor):
            holder.register_parameter(name, torch.nn.Parameter(value.data.clone(), requires_grad=False))
        else:
            setattr(holder, name, value)
    holder.logical_widths = list(getattr(layer, "logical_widths", []))
    return holder


def _no_fallback(kernel, why):
    from hk.errors import HKError

    raise HKError("hk's %s cannot serve this call (%s), and vLLM has no other kernel for this layer"
                  % (type(kernel).__name__, why),
                  hint="route the op to hk (HK_ENGINE_ROUTES), or set HK_VLLM_W8A8=0 to let vLLM choose its kernel")


def _routing(kernel, layer, x, bias):
    """(the engine's call, why hk does not cover x or None) for kernel.apply_weights(layer, x,
    bias); refuses at once a call that neither hk nor a fallback kernel can serve."""
    def engine():
        if kernel.fallback is None:
            _no_fallback(kernel, "routed to the engine")
        return kernel.fallback.apply_weights(layer, x, bias)

    uncovered = None if isinstance(x, torch.Tensor) else "pre-quantized activations"
    if uncovered is None and x.dtype not in HALF:
        uncovered = "dtype"
    if uncovered and kernel.fallback is None:
        _no_fallback(kernel, uncovered)
    return engine, uncovered


def int8_kernel_class():
    from vllm import _custom_ops
    from vllm.model_executor.kernels.linear.scaled_mm.cutlass import CutlassInt8ScaledMMLinearKernel

    class HkInt8ScaledMMLinearKernel(CutlassInt8ScaledMMLinearKernel):
        """int8 W8A8 on hk.ops.int8_scaled_mm; vLLM's cutlass processing of the weights."""

        @classmethod
        def is_supported(cls, compute_capability=None):
            return _platform_ok()

        @classmethod
        def can_implement(cls, c):
            return True, None

        def __init__(self, c, layer_param_names):
            super().__init__(c, layer_param_names)
            self.fallback = _next_kernel(self, "int8")
            self.hk_layer = None

        def input_quant_key(self):
            return None  # activations come unquantized (no upstream fusion): hk quantizes them

        def process_weights_after_loading(self, layer):
            if self.fallback is None:
                super().process_weights_after_loading(layer)
                self.hk_layer = layer
            elif isinstance(self.fallback, CutlassInt8ScaledMMLinearKernel):
                self.fallback.process_weights_after_loading(layer)  # the same layout: shared
                self.hk_layer = layer
            else:
                self.hk_layer = _own_copy(layer, self.layer_param_names)
                super().process_weights_after_loading(self.hk_layer)
                self.fallback.process_weights_after_loading(layer)

        def apply_weights(self, layer, x, bias=None):
            w_q, w_s, i_s, i_zp, azp_adj = self._get_layer_params(self.hk_layer)

            def quant_azp(x2):
                q, scale, azp = _custom_ops.scaled_int8_quant(x2, i_s, i_zp, symmetric=False)
                return q, scale, None if i_zp is not None else azp  # a static zero point is in azp_adj

            engine, uncovered = _routing(self, layer, x, bias)
            return ops.int8_linear(counter("w8a8_int8"), x, w_q, w_s, bias, engine, input_scale=i_s,
                                   azp_adj=azp_adj, quant_azp=quant_azp, uncovered=uncovered)

    return HkInt8ScaledMMLinearKernel


def fp8_kernel_class():
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearKernel

    class HkFP8ScaledMMLinearKernel(FP8ScaledMMLinearKernel):
        """fp8 W8A8 on hk.ops.scaled_mm: activations quantized by vLLM's QuantFP8, as its kernels do."""

        @classmethod
        def is_supported(cls, compute_capability=None):
            return _platform_ok()

        @classmethod
        def can_implement(cls, c):
            act, weight = c.activation_quant_key, c.weight_quant_key
            why = _fp8_formats(act.dtype, weight.dtype)
            if why:
                return False, why
            if not (act.scale.group_shape.is_per_tensor() or act.scale.group_shape.is_per_token()):
                return False, "takes per-tensor or per-token activation scales"
            if not (weight.scale.group_shape.is_per_tensor() or weight.scale.group_shape.is_per_channel()):
                return False, "takes per-tensor or per-channel weight scales"
            if c.input_dtype not in HALF or (c.out_dtype is not None and c.out_dtype not in HALF):
                return False, "takes bf16 or fp16 activations"
            return True, None

        def __init__(self, c, layer_param_names):
            super().__init__(c, layer_param_names)
            self.fallback = _next_kernel(self, "fp8")
            self.hk_layer = None

        def process_weights_after_loading(self, layer):
            base = FP8ScaledMMLinearKernel.process_weights_after_loading
            if self.fallback is None or type(self.fallback).process_weights_after_loading is base:
                self.hk_layer = layer  # the weights as the linear method left them: shared
            else:
                self.hk_layer = _own_copy(layer, self.layer_param_names)
            if self.fallback is not None:
                self.fallback.process_weights_after_loading(layer)

        def apply_weights(self, layer, x, bias=None):
            w, w_s, x_s, x_s_ub = self._get_layer_params(self.hk_layer)

            engine, uncovered = _routing(self, layer, x, bias)
            out_dtype = self.config.out_dtype or getattr(x, "dtype", None)
            return ops.fp8_linear(counter("w8a8_fp8"), x, w, w_s, bias, out_dtype,
                                  lambda x2: self.quant_fp8(x2, x_s, x_s_ub), engine, uncovered=uncovered,
                                  act_dtype=self.fp8_dtype)

        def apply_scaled_mm(self, *, A, B, out_dtype, As, Bs, bias, output_shape):
            import hk.ops

            return hk.ops.scaled_mm(A, B, As, Bs, out_dtype, bias).view(*output_shape)

    return HkFP8ScaledMMLinearKernel


def fp8_block_kernel_class():
    from vllm.model_executor.kernels.linear.scaled_mm.BlockScaledMMLinearKernel import (
        FP8BlockParams, Fp8BlockScaledMMLinearKernel)

    class HkFp8BlockScaledMMKernel(Fp8BlockScaledMMLinearKernel):
        """Block-scaled fp8 W8A8 on hk.ops.scaled_mm's 128 x 128 block scales: activations
        quantized per token per 128 columns by vLLM's QuantFP8, as its kernels do."""

        @classmethod
        def is_supported(cls, compute_capability=None):
            return _platform_ok()

        @classmethod
        def can_implement(cls, config):
            ok, why = super().can_implement(config)  # dynamic activations only
            if not ok:
                return ok, why
            act, weight = config.activation_quant_key, config.weight_quant_key
            why = _fp8_formats(act.dtype, weight.dtype)
            if why:
                return False, why
            if (tuple(weight.scale.group_shape) != ops.BLOCK
                    or tuple(act.scale.group_shape) != (1, ops.BLOCK[1])):
                return False, "takes 128 x 128 weight blocks with activations per token per 128 columns"
            if config.input_dtype not in HALF or (config.out_dtype is not None and config.out_dtype not in HALF):
                return False, "takes bf16 or fp16 activations"
            return True, None

        def __init__(self, config):
            super().__init__(config)
            self.fallback = _next_kernel(self, "fp8_block")
            self.hk_layer = None

        def process_weights_after_loading(self, layer):
            base = Fp8BlockScaledMMLinearKernel.process_weights_after_loading
            if self.fallback is None:
                base(self, layer)
                self.hk_layer = layer
            elif type(self.fallback).process_weights_after_loading is base:
                self.fallback.process_weights_after_loading(layer)  # the same weights: shared
                self.hk_layer = layer
            else:  # AITER's (and the CPU kernels) process them their own way: hk keeps its copy
                params = FP8BlockParams.from_layer(layer)
                self.hk_layer = _own_copy(layer, [params.WEIGHT, params.block_scale_attr, params.INPUT_SCALE,
                                                  params.INPUT_SCALE_UB])
                base(self, self.hk_layer)
                self.fallback.process_weights_after_loading(layer)

        def apply_weights(self, layer, x, bias=None, **kwargs):
            from vllm.platforms import current_platform

            params = self._get_layer_params(self.hk_layer)

            engine, uncovered = _routing(self, layer, x, bias)
            out_dtype = self.config.out_dtype or getattr(x, "dtype", None)
            return ops.fp8_block_linear(
                counter("w8a8_fp8_block"), x, params.weight, params.block_scale, bias, out_dtype,
                lambda x2: self.quant_fp8(x2, params.input_scale, params.input_scale_ub, use_triton=self.use_triton),
                engine, uncovered=uncovered, act_dtype=current_platform.fp8_dtype(),
                block=tuple(self.weight_group_shape))

        def apply_block_scaled_mm(self, A, B, As, Bs):
            import hk.ops

            return hk.ops.scaled_mm(A, B.t(), As.float(), Bs.t(), self.config.out_dtype)

    return HkFp8BlockScaledMMKernel


KERNELS = []  # hk's classes, while installed
_PLATFORMS = ("ROCM", "CPU")


def _lists():
    from vllm.model_executor.kernels import linear as kl

    return (kl._POSSIBLE_INT8_KERNELS, kl._POSSIBLE_FP8_KERNELS, kl._POSSIBLE_FP8_BLOCK_KERNELS)


def install():
    """hk's kernels first in vLLM's int8, fp8 and block fp8 lists for ROCm and CPU (vLLM's register_linear_kernel
    would append them, after kernels that always implement a layer)."""
    from vllm.platforms import PlatformEnum

    if KERNELS:
        return
    KERNELS.extend([int8_kernel_class(), fp8_kernel_class(), fp8_block_kernel_class()])
    for table, kernel in zip(_lists(), KERNELS):
        for name in _PLATFORMS:
            table.setdefault(getattr(PlatformEnum, name), []).insert(0, kernel)


def uninstall():
    for table in _lists():
        for kernels in table.values():
            kernels[:] = [k for k in kernels if k not in KERNELS]
    KERNELS.clear()


PATCH = Patch("w8a8", install=install, uninstall=uninstall)
