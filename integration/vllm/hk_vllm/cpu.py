"""vLLM's CPU build serving a model on hk's kernels, on hk's interpreter or emulator: a way to run
the plugin end to end on a machine without an AMD GPU. For testing and for kernel authors; never
on a GPU. Switched on explicitly, in every process vLLM starts (the plugin's entry point reads it):

    HK_VLLM_CPU=1 HK_DEVICE=interp VLLM_TARGET_DEVICE=cpu vllm serve DIR ...

What it changes, apart from hk's patches (which are the same as on a GPU):

  * stand-ins, in torch, for the torch.ops._C kernels vLLM's CPU platform calls and its PyPI wheel
    lacks (hk_vllm.cpu_kernels), and for the Triton attention kernels of the engine's own path
    (calls hk does not cover: another dtype, head size or variant);
  * hk's attention backend in CPU_ATTN's place (vLLM's CPU platform takes no other backend), on
    the same cache and metadata as on a GPU;
  * the layer code vLLM runs on ROCm where its CPU platform takes another: AutoAWQLinearMethod
    for AWQ checkpoints, TritonExperts for unquantized MoE layers, SiluAndMul's ROCm forward,
    ROCm's W8A8 kernel lists (hk's kernels first; Triton's block-scaled fp8 GEMM in torch), and
    linear layers that keep their weight (not repacked for vLLM's AMX kernels);
  * routes: every call hk covers goes to hk (HK_ENGINE_ROUTES, when set, still decides).

docs/integration.md lists what differs from a GPU run.
"""

import os

import torch

from hk_engine import contract, testing
from hk_engine.contract import Seam

SWITCH = "HK_VLLM_CPU"
_ON = ("1", "true", "on", "yes")
_ATTN = "vllm.v1.attention.backends.triton_attn"

SEAMS = [
    Seam("vllm.platforms.cpu.CpuPlatform.get_attn_backend_cls", ("selected_backend", "attn_selector_config")),
    Seam("vllm.v1.attention.backends.registry.AttentionBackendEnum.CPU_ATTN"),
    Seam("vllm.model_executor.layers.utils.check_cpu_sgl_kernel", ("n", "k", "dtype")),
    Seam("vllm.model_executor.layers.quantization.auto_awq.AutoAWQConfig.get_quant_method",
         ("self", "layer", "prefix")),
    Seam("vllm.model_executor.layers.quantization.auto_awq.AutoAWQMarlinLinearMethod"),
    Seam("vllm.model_executor.layers.quantization.auto_awq.AutoAWQLinearMethod"),
    Seam("vllm.model_executor.layers.activation.SiluAndMul.forward_cpu", ("self", "x")),
    Seam("vllm.model_executor.custom_op.CustomOp.forward_hip"),
    Seam("vllm.model_executor.kernels.linear.scaled_mm.triton.TritonInt8ScaledMMLinearKernel.is_supported",
         ("compute_capability",)),
    Seam("vllm.model_executor.kernels.linear.scaled_mm.triton.TritonFp8BlockScaledMMKernel.is_supported",
         ("compute_capability",)),
    Seam("vllm.model_executor.layers.quantization.utils.fp8_utils.w8a8_triton_block_scaled_mm",
         ("A", "B", "As", "Bs", "block_size", "output_dtype")),
    Seam(_ATTN + ".unified_attention"),
    Seam(_ATTN + ".triton_reshape_and_cache_flash"),
]


class RefusedError(RuntimeError):
    """HK_VLLM_CPU cannot run here (a GPU, another platform, no CPU runner for hk)."""


def requested():
    return os.environ.get(SWITCH, "").strip().lower() in _ON


def refusal():
    """Why the CPU mode cannot run in this process, or None."""
    if torch.cuda.is_available():
        return ("%s=1 runs vLLM's CPU build on hk's interpreter or emulator, for testing; this machine has a GPU "
                "(%s): unset %s and let the plugin patch vLLM's GPU build" % (SWITCH, torch.cuda.get_device_name(0),
                                                                              SWITCH))
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return "%s=1 needs vLLM's CPU platform (VLLM_TARGET_DEVICE=cpu); vLLM chose %s" % (
            SWITCH, type(current_platform).__name__)
    runner = os.environ.get("HK_DEVICE", "").strip().lower()
    if runner not in ("interp", "emu"):
        return "%s=1 runs hk's kernels on its interpreter or emulator: set HK_DEVICE=interp or HK_DEVICE=emu, not %r" % (
            SWITCH, runner)
    return None


_MISSING = object()
_installed = []  # (parent, name, what parent itself held or _MISSING) in order of replacement


def _replace(parent, name, value):
    _installed.append((parent, name, vars(parent).get(name, _MISSING)))
    setattr(parent, name, value)


def install(plugin):
    """Makes this process's vLLM serve on hk's kernels on the CPU. Raises RefusedError when it
    cannot (see refusal), or when hk's plugin did not patch vLLM."""
    if _installed:
        return
    problem = refusal()
    if problem:
        raise RefusedError(problem)
    if not plugin.registered or "attention" not in plugin.names():
        raise RefusedError("%s=1 needs hk's plugin with its attention patch, and the plugin patched %s"
                           % (SWITCH, ", ".join(plugin.names()) or "nothing (see its warning)"))
    problems = contract.check("vllm", plugin.version, plugin.supported, SEAMS)
    if problems:
        raise RefusedError("%s=1: vLLM is not what the CPU mode was written against:\n  %s"
                           % (SWITCH, "\n  ".join(problems)))
    from hk_vllm import cpu_kernels, cpu_layers

    cpu_kernels.define()
    os.environ.setdefault("HK_ENGINE_ROUTES", testing.ALL_HK_ROUTES)
    for parent, name, value in cpu_layers.replacements():
        _replace(parent, name, value)
    cpu_layers.place_attention_backend()


def uninstall():
    """Puts back what install replaced (the _C stand-ins stay defined)."""
    from hk_vllm import cpu_layers

    while _installed:
        parent, name, original = _installed.pop()
        if original is _MISSING:
            delattr(parent, name)
        else:
            setattr(parent, name, original)
    cpu_layers.remove_attention_backend()
