"""Every variant of the norm kernel (kind x strip or streamed x residual, weight, bias) builds on
every target with no spills and passes the resource and wait gates (build() runs them)."""

import pytest

import hk
from hk.ops import norms
from hk.target import facts

VARIANTS = [(kind, strip, extras) for kind in norms.KINDS for strip in (norms.STRIP_TILES, 0)
            for extras in ((False, False, False), (True, kind == "layer", True))]


@pytest.mark.parametrize("arch", facts.archs())
@pytest.mark.parametrize("kind, strip, extras", VARIANTS)
def test_builds_and_passes_the_gates(arch, kind, strip, extras):
    weighted, biased, residual = extras
    built = norms.norm_kernel(kind, hk.bf16, weighted, biased, residual, strip).build(arch, divisors=8)
    assert built.meta.spills == 0, built.report()
