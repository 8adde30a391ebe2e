"""The resource gate: a built kernel that spills, uses scratch or misses its limits is refused.

A VGPR spill is silent corruption here, not slowness: the tile library places its waits by
hand, and scratch traffic reorders against them. So any spill or scratch is a ResourceError,
as are the kernel's own max_vgprs and min_occupancy when set.
"""

import dataclasses

from hk.errors import ResourceError
from hk.target import facts


@dataclasses.dataclass(frozen=True)
class Occupancy:
    waves_per_simd: int
    limited_by: str  # "vgprs", "lds", "sgprs" or "waves"


def occupancy(meta, warps):
    """Waves per SIMD this kernel can keep resident, and what limits it."""
    target = facts.target(meta.arch)
    by_regs = target.waves_per_simd(meta.vgprs, meta.agprs, meta.sgprs)
    waves, why = target.max_waves_per_simd, "waves"
    if by_regs < waves:
        waves = by_regs
        vgpr_only = target.waves_per_simd(meta.vgprs, meta.agprs, 0)
        why = "vgprs" if vgpr_only == by_regs else "sgprs"
    if meta.lds_bytes > 0:
        groups = target.lds_bytes_per_cu // meta.lds_bytes
        by_lds = (groups * warps) // target.simds_per_cu
        if by_lds < waves:
            waves, why = by_lds, "lds"
    return Occupancy(waves, why)


def _spill_hint(meta):
    """What to change, by what spilled: VGPRs hold tiles, SGPRs the wave's uniform values."""
    vgpr = ("use smaller register tiles or fewer live tiles, split the work over more warps, "
            "or lower the unroll of the hot loop")
    sgpr = ("SGPRs hold what is uniform across the wave: tensor parameters (12 each), scalars, "
            "loop bounds and the addresses of unrolled tile accesses; pass fewer tensors, keep "
            "fewer scalars live, or turn an unrolled range(N) into hk.range(N)")
    if meta.sgpr_spills and not meta.vgpr_spills:
        return sgpr
    if not meta.sgpr_spills:
        return vgpr
    return "for the VGPRs: %s; for the SGPRs: %s" % (vgpr, sgpr)


def check(meta, warps, *, max_vgprs=None, min_occupancy=None):
    """Raises ResourceError naming the kernel, the numbers and the fix; returns the Occupancy."""
    problems = []
    if meta.spills:
        problems.append("spills %d VGPR(s) and %d SGPR(s) to scratch" % (meta.vgpr_spills, meta.sgpr_spills))
    if meta.scratch_bytes:
        problems.append("uses %d bytes of scratch per lane" % meta.scratch_bytes)
    if problems:
        raise ResourceError(
            "kernel %s on %s %s (%d VGPRs, %d AGPRs, %d SGPRs); a spilling kernel is never returned, "
            "because scratch traffic reorders against the kernel's hand-placed waits"
            % (meta.name, meta.arch, " and ".join(problems), meta.vgprs, meta.agprs, meta.sgprs),
            hint=_spill_hint(meta))
    if max_vgprs is not None and meta.vgprs > max_vgprs:
        raise ResourceError("kernel %s on %s uses %d VGPRs, more than its max_vgprs=%d"
                            % (meta.name, meta.arch, meta.vgprs, max_vgprs),
                            hint="raise max_vgprs or shrink the register tiles")
    occ = occupancy(meta, warps)
    if min_occupancy is not None and occ.waves_per_simd < min_occupancy:
        raise ResourceError("kernel %s on %s keeps %d wave(s) per SIMD resident (limited by %s), "
                            "fewer than its min_occupancy=%d"
                            % (meta.name, meta.arch, occ.waves_per_simd, occ.limited_by, min_occupancy),
                            hint="use fewer VGPRs or less LDS per workgroup")
    return occ
