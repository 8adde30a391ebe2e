"""The schedule-search names of `hk`: hk.space declares a kernel's knobs (tune=), hk.autotune
searches them, hk.tuned holds the choices launches read (tests/autotune has the behaviour)."""

import os

import hk


def test_space_autotune_and_tuned_are_reachable_from_hk():
    @hk.kernel(grid=(1,), tune=hk.space(BLOCK=[64, 128], where=lambda c: c.BLOCK <= 128))
    def k(x: hk.Tensor[hk.fp32], *, BLOCK=64):
        pass

    assert [c.BLOCK for c in k.tune.candidates()] == [64, 128]
    assert callable(hk.autotune.search) and hk.autotune.Space is type(k.tune)
    assert os.path.basename(hk.tuned.path_for("gfx1100")) == "gfx1100.json"
