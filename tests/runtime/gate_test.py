"""The resource gate's advice follows what spilled: VGPRs hold tiles, SGPRs uniform values."""

import dataclasses

import pytest

from hk.errors import ResourceError
from hk.runtime import gate, metadata

CLEAN = metadata.KernelMetadata(name="k", target="amdgcn-amd-amdhsa--gfx1100", vgprs=64, agprs=0,
                                sgprs=100, vgpr_spills=0, sgpr_spills=0, scratch_bytes=0,
                                lds_bytes=0, wave_size=32, max_workgroup_size=32, kernarg_bytes=96,
                                args=())


def refusal(**changes):
    with pytest.raises(ResourceError) as e:
        gate.check(dataclasses.replace(CLEAN, **changes), 1)
    return e.value


def test_an_sgpr_spill_is_not_told_to_shrink_register_tiles():
    e = refusal(sgpr_spills=4, scratch_bytes=16)
    assert "spills 0 VGPR(s) and 4 SGPR(s)" in e.message
    assert "SGPRs hold what is uniform across the wave" in e.hint
    assert "smaller register tiles" not in e.hint


def test_a_vgpr_spill_is_told_about_tiles_and_both_get_both():
    assert "smaller register tiles" in refusal(vgpr_spills=8, scratch_bytes=32).hint
    both = refusal(vgpr_spills=8, sgpr_spills=2, scratch_bytes=40).hint
    assert "for the VGPRs: use smaller register tiles" in both and "for the SGPRs: SGPRs hold" in both


def test_a_clean_kernel_passes():
    assert gate.check(CLEAN, 1).waves_per_simd >= 1
