"""k.build() never returns a spilling kernel: the resource gate refuses it with the numbers; tracing
already warns that its tiles come near its budget."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "kernels"))
import spilling  # noqa: E402

from hk.errors import ResourceError  # noqa: E402


def test_build_refuses_a_spilling_kernel():
    with pytest.raises(ResourceError) as e:
        spilling.spilling.build(arch="gfx1100")
    message = str(e.value)
    assert "kernel spilling on gfx1100 spills" in message
    assert "VGPR(s)" in message and "scratch" in message
    assert "hint:" in message


def test_the_same_kernel_without_the_cap_builds():
    import hk

    uncapped = hk.kernel(spilling.spilling.fn, grid=spilling.spilling.grid, warps=4)
    build = uncapped.build(arch="gfx1100")
    assert build.meta.spills == 0 and build.meta.scratch_bytes == 0


def test_the_gate_runs_on_cache_hits_too():
    import hk

    fn, grid = spilling.spilling.fn, spilling.spilling.grid
    first = hk.kernel(fn, grid=grid, warps=4).build(arch="gfx1100")
    # The same source, so the same cache entry: only the gate can refuse it.
    demanding = hk.kernel(fn, grid=grid, warps=4, min_occupancy=first.occupancy.waves_per_simd + 1)
    with pytest.raises(ResourceError) as e:
        demanding.build(arch="gfx1100")
    assert "fewer than its min_occupancy=%d" % (first.occupancy.waves_per_simd + 1) in str(e.value)
    again = hk.kernel(fn, grid=grid, warps=4).build(arch="gfx1100")
    assert again.cached and again.path == first.path


def test_tracing_already_warns_that_it_may_spill():
    import hk
    from hk.errors import HKWarning

    capped = hk.kernel(spilling.spilling.fn, grid=spilling.spilling.grid, warps=4, max_vgprs=96)
    with pytest.warns(HKWarning, match=r"need \d+ of the 96 VGPRs per lane the kernel's max_vgprs budget"):
        capped.trace(arch="gfx1100")
