"""Unquantized linear layers on hk.ops.linear: UnquantizedLinearMethod.apply, which every
ReplicatedLinear, ColumnParallelLinear, MergedColumnParallelLinear, QKVParallelLinear and
RowParallelLinear without quantization calls.

hk.ops.linear reads row-strided weights (a view of a padded or shared allocation) as they are.
bf16 and fp16 are covered; anything else, weights SGLang repacked for its CPU AMX kernel, and
its batch-invariant mode stay SGLang's.
"""

from hk_engine import Patch, Target, ops
from hk_engine.contract import Seam
from hk_sglang.common import counter

TARGET = "sglang.srt.layers.quantization.unquant.UnquantizedLinearMethod.apply"
PARAMS = ("self", "layer", "x", "bias")


def engine_only(layer):
    """What only SGLang knows keeps a call its own: a weight repacked for its CPU AMX kernel, its
    batch-invariant mode."""
    from sglang.srt.batch_invariant_ops import is_batch_invariant_mode_enabled
    from sglang.srt.utils import use_intel_amx_backend

    if use_intel_amx_backend(layer):
        return "layout"
    return "batch-invariant" if is_batch_invariant_mode_enabled() else None


def wrap(original):
    def apply(self, layer, x, bias=None):
        return ops.linear(counter("linear"), x, layer.weight, bias, lambda: original(self, layer, x, bias),
                          uncovered=engine_only(layer))

    return apply


PATCH = Patch("linear", [Target(TARGET, wrap, PARAMS)])

# What engine_only() reads besides the target.
SEAMS = [Seam("sglang.srt.batch_invariant_ops.is_batch_invariant_mode_enabled", ()),
         Seam("sglang.srt.utils.use_intel_amx_backend", ("layer",))]
