"""Target facts: wave size, register and LDS budgets, MMA shapes, per architecture.

targets.json is the single source of these numbers. Python reads it here; the C++ passes read a
header generated from it; Bazel reads the list of architectures through @hk_targets.
"""

import dataclasses
import functools
import json
import os

from hk.errors import TargetError

_PATH = os.path.join(os.path.dirname(__file__), "targets.json")


@dataclasses.dataclass(frozen=True)
class MMAShape:
    a: str
    b: str
    acc: str
    m: int
    n: int
    k: int


@dataclasses.dataclass(frozen=True)
class Target:
    """One architecture's facts; field meanings as in targets.json."""

    arch: str
    family: str
    gpus: tuple
    wave_size: int
    max_vgprs: int
    max_agprs: int
    vgprs_per_simd: int
    vgpr_granule: int
    max_sgprs: int
    sgprs_limit_occupancy: bool
    max_waves_per_simd: int
    simds_per_cu: int
    lds_bytes: int
    lds_bytes_per_cu: int
    lds_banks: int
    lds_bank_bytes: int
    max_workgroup_size: int
    matrix: str
    mma_shapes: tuple
    fp8_format: object
    async_global_to_lds: bool
    lds_read_b128: str
    lds_transpose_read: object  # the transposing 16-bit LDS read, or None
    waitcnt: str

    def waves_per_simd(self, vgprs, agprs=0, sgprs=0):
        """Occupancy: the waves per SIMD a kernel's register use leaves resident.

        On CDNA the register file is unified: ArchVGPRs (rounded up to 4) plus AGPRs count, and
        more than 100 SGPRs costs a wave. On RDNA only VGPRs limit occupancy.
        """
        waves = self.max_waves_per_simd
        total = (-(-vgprs // 4) * 4 + agprs) if self.max_agprs else vgprs
        if total > 0:
            allocated = -(-total // self.vgpr_granule) * self.vgpr_granule
            waves = min(waves, self.vgprs_per_simd // allocated)
        if self.sgprs_limit_occupancy and sgprs > 100:
            waves = min(waves, 7)
        return waves


@functools.lru_cache(maxsize=None)
def _load():
    with open(_PATH) as f:
        return json.load(f)


def default_arch():
    return _load()["default"]


def archs():
    """The architectures hk-dsl targets, sorted."""
    return sorted(_load()["targets"])


@functools.lru_cache(maxsize=None)
def target(arch):
    """The Target for `arch`; TargetError listing the known ones when it is unknown."""
    raw = _load()["targets"].get(arch)
    if raw is None:
        raise TargetError("unknown target architecture %r" % (arch,),
                          hint="use one of " + ", ".join(archs()))
    fields = dict(raw)
    fields["gpus"] = tuple(fields["gpus"])
    fields["mma_shapes"] = tuple(MMAShape(**s) for s in fields["mma_shapes"])
    return Target(arch=arch, **fields)
