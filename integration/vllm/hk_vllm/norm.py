"""RMSNorm on hk.ops.rms_norm and hk.ops.fused_add_rms_norm_: an "hk" provider of vllm.ir's
rms_norm and fused_add_rms_norm (every RMSNorm layer ends in these, whatever custom_ops says),
put first in KernelConfig's IR op priority, so that each process's priority (set when its
worker starts, from the config) names it.

The provider supports what hk's kernel covers (bf16, fp16 or fp32 rows, a weight of the same
dtype or none, no variance_size override); inside it, the routing table decides per call between
hk and the next provider of the priority (vllm_c on ROCm, native elsewhere).
"""

import torch
from torch import Tensor

from hk_engine import Patch, Target, counters
from hk_engine.ops import norm_facts
from hk_engine.plugin import dispatch
from hk_vllm.common import counter

PROVIDER = "hk"
TARGET = "vllm.config.kernel.KernelConfig.set_platform_defaults"
OPS = ("rms_norm", "fused_add_rms_norm")
FLOATS = (torch.bfloat16, torch.float16, torch.float32)


def _covered(x, weight, variance_size):
    ok = (variance_size is None and x.dtype in FLOATS and x.dim() >= 1 and x.shape[-1] > 0
          and x.stride(-1) == 1 and (weight is None or (weight.dtype == x.dtype and weight.dim() == 1)))
    if not ok:
        counters.count(counter("norm"), "engine:uncovered")
    return ok


def _next(op, args):
    """The implementation the priority names after hk's that supports these arguments."""
    impls = op._priority_impls
    start = next(i for i, impl in enumerate(impls) if impl.provider == PROVIDER) + 1
    return next(impl for impl in impls[start:] if impl.supports_args(*args))


def rms_norm(x: Tensor, weight: Tensor | None, epsilon: float, variance_size: int | None = None) -> Tensor:
    import hk.ops
    from vllm import ir

    args = (x, weight, epsilon, variance_size)
    return dispatch(counter("norm"), "rms_norm", norm_facts(x, False), lambda: hk.ops.rms_norm(x, weight, epsilon),
                    lambda: _next(ir.ops.rms_norm, args).impl_fn(*args))


def fused_add_rms_norm(x: Tensor, x_residual: Tensor, weight: Tensor | None, epsilon: float,
                       variance_size: int | None = None) -> tuple[Tensor, Tensor]:
    import hk.ops
    from vllm import ir

    def hk_call():
        hk.ops.fused_add_rms_norm_(x, x_residual, weight, epsilon)
        return x, x_residual

    args = (x, x_residual, weight, epsilon, variance_size)
    return dispatch(counter("norm"), "rms_norm", norm_facts(x, True), hk_call,
                    lambda: _next(ir.ops.fused_add_rms_norm, args).impl_fn(*args))


def _supports(x, weight, epsilon, variance_size=None):
    return _covered(x, weight, variance_size)


def _supports_fused(x, x_residual, weight, epsilon, variance_size=None):
    return _covered(x, weight, variance_size) and x_residual.dtype == x.dtype and x_residual.shape == x.shape


def install():
    from vllm import ir

    ir.ops.rms_norm.register_impl(PROVIDER, supports_args=_supports)(rms_norm)
    ir.ops.fused_add_rms_norm.register_impl(PROVIDER, supports_args=_supports_fused, inplace=True)(fused_add_rms_norm)


def uninstall():
    from vllm import ir

    for name in OPS:
        op = getattr(ir.ops, name)
        op.impls.pop(PROVIDER, None)
        if PROVIDER in op.get_priority():
            op.set_default([p for p in op.get_priority() if p != PROVIDER])


def wrap(original):
    def set_platform_defaults(self, vllm_config):
        original(self, vllm_config)
        for name in OPS:
            priority = getattr(self.ir_op_priority, name)
            if PROVIDER not in priority:
                priority.insert(0, PROVIDER)

    return set_platform_defaults


PATCH = Patch("norm", [Target(TARGET, wrap, ("self", "vllm_config"))], install=install, uninstall=uninstall)
