"""The vLLM plugin: its patches and the contract of vLLM's internals they rely on."""

import functools

from hk_engine import Plugin
from hk_engine.contract import Seam
from hk_vllm import activation, attention, awq, linear, moe, norm, rotary, w8a8
from hk_vllm.common import ENGINE

SUPPORTED = ("0.33.",)

# What the patches use beyond the functions they replace.
SEAMS = [
    Seam("vllm.ir.ops.rms_norm.register_impl", ("provider", "supported", "supports_args", "inplace")),
    Seam("vllm.ir.ops.fused_add_rms_norm.register_impl", ("provider", "supported", "supports_args", "inplace")),
    Seam("vllm.ir.op.IrOp.dispatch"),
    Seam("vllm.config.kernel.IrOpPriorityConfig"),
] + attention.SEAMS + w8a8.SEAMS


@functools.lru_cache(maxsize=None)
def plugin():
    import vllm

    return Plugin(ENGINE, version=vllm.__version__, supported=SUPPORTED, seams=SEAMS,
                  patches=[linear.PATCH, awq.PATCH, moe.PATCH, norm.PATCH, rotary.PATCH, activation.PATCH,
                           attention.PATCH, w8a8.PATCH])
