"""The layer code vLLM runs on ROCm, taken on its CPU platform where that platform would take
another (HK_VLLM_CPU only; hk_vllm.cpu), and hk's attention backend in CPU_ATTN's place."""

import torch

from hk_vllm import attention, cpu_kernels

_ATTN = "vllm.v1.attention.backends.triton_attn"


def _portable_linear():
    """Linear layers keep their weight: vLLM's CPU platform repacks a 16-bit weight for its AMX
    kernels (torch.ops._C) and drops layer.weight where the CPU has AMX; a GPU keeps it, and
    hk's linear patch reads it."""
    from vllm.model_executor.layers import utils

    return utils, "check_cpu_sgl_kernel", lambda n, k, dtype: False


def _awq_method():
    """AWQ checkpoints on AutoAWQLinearMethod (ROCm's: its Triton kernels, which hk's awq patch
    replaces) instead of the CPU's Marlin-format method."""
    from vllm.model_executor.layers.quantization import auto_awq

    chosen = auto_awq.AutoAWQConfig.get_quant_method

    def get_quant_method(self, layer, prefix):
        method = chosen(self, layer, prefix)
        if isinstance(method, auto_awq.AutoAWQMarlinLinearMethod):
            return auto_awq.AutoAWQLinearMethod(self)
        return method

    return auto_awq.AutoAWQConfig, "get_quant_method", get_quant_method


def _moe_backends():
    """Unquantized MoE layers on TritonExperts, the experts ROCm takes without AITER (hk's moe
    patch replaces its apply), instead of the CPU's own; routing stays vLLM's CPU router (torch)."""
    from vllm.model_executor.layers.fused_moe.oracle import unquantized

    priority = unquantized._get_priority_backends

    def _get_priority_backends(moe_config):
        return [unquantized.UnquantizedMoeBackend.TRITON] + [
            b for b in priority(moe_config) if b != unquantized.UnquantizedMoeBackend.CPU]

    return unquantized, "_get_priority_backends", _get_priority_backends


def _triton_experts_here():
    from vllm.model_executor.layers.fused_moe.experts.triton_moe import TritonExperts

    return TritonExperts, "_supports_current_device", staticmethod(lambda: True)


def _silu_and_mul():
    """SiluAndMul's ROCm forward (CustomOp.forward_hip -> forward_cuda -> torch.ops._C.silu_and_mul,
    which hk's activation patch replaces) instead of the CPU's forward_native. vLLM sets the
    layer's op only on CUDA and ROCm: the class holds the stand-in here."""
    from vllm.model_executor.custom_op import CustomOp
    from vllm.model_executor.layers.activation import SiluAndMul

    return [(SiluAndMul, "forward_cpu", CustomOp.forward_hip),
            (SiluAndMul, "op", torch.ops._C.silu_and_mul)]


def _w8a8_kernels():
    """W8A8 layers choose among the kernels vLLM lists for ROCm (hk's first, then AITER's and
    Triton's int8 kernels, the torch._scaled_mm fp8 kernels, Triton's block-scaled fp8 kernel)
    instead of its CPU kernels, which need torch.ops._C's oneDNN GEMMs: Triton's int8 kernel
    answers here (its weight processing is torch's, and hk's kernel shares it), and Triton's
    block-scaled kernel with its GEMM in torch (cpu_kernels.w8a8_block_scaled_mm)."""
    from vllm.model_executor.kernels import linear as kl
    from vllm.model_executor.kernels.linear.scaled_mm import triton
    from vllm.model_executor.layers.quantization.utils import fp8_utils
    from vllm.platforms import PlatformEnum

    out = []
    for name in ("_POSSIBLE_INT8_KERNELS", "_POSSIBLE_FP8_KERNELS", "_POSSIBLE_FP8_BLOCK_KERNELS"):
        table = dict(getattr(kl, name))
        table[PlatformEnum.CPU] = list(table.get(PlatformEnum.ROCM, []))
        out.append((kl, name, table))
    here = classmethod(lambda cls, compute_capability=None: (True, None))
    return out + [(triton.TritonInt8ScaledMMLinearKernel, "is_supported", here),
                  (triton.TritonFp8BlockScaledMMKernel, "is_supported", here),
                  (fp8_utils, "w8a8_triton_block_scaled_mm", cpu_kernels.w8a8_block_scaled_mm)]


def _engine_attention():
    """The engine's own attention kernels (for the calls hk's backend does not cover) in torch."""
    import importlib

    module = importlib.import_module(_ATTN)
    return [(module, "unified_attention", cpu_kernels.unified_attention),
            (module, "triton_reshape_and_cache_flash", cpu_kernels.reshape_and_cache_flash)]


def replacements():
    """(parent, name, value) for each attribute the CPU mode replaces."""
    return ([_portable_linear(), _awq_method(), _moe_backends(), _triton_experts_here()]
            + _silu_and_mul() + _w8a8_kernels() + _engine_attention())


def place_attention_backend():
    """hk's backend as CPU_ATTN: vLLM's CPU platform selects CPU_ATTN whatever backend is asked for."""
    from vllm.v1.attention.backends.registry import AttentionBackendEnum, register_backend

    register_backend(AttentionBackendEnum.CPU_ATTN, attention.CLASS_PATH)


def remove_attention_backend():
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    AttentionBackendEnum.CPU_ATTN.clear_override()
