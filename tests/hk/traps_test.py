"""The four traps, from the language: each bad program is refused, warned about, or cannot be
written, at the user's line."""

import inspect
import os
import re
import sys

import pytest

import hk
from hk.errors import ResourceError


@hk.kernel(grid=(1,), warps=4)
def staged_mma(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *, B_LAYOUT="row"):
    sa = hk.lds.alloc(hk.ST(hk.bf16, 16, 32))
    sb = hk.lds.alloc(hk.ST(hk.bf16, 32, 16) if B_LAYOUT == "col" else hk.ST(hk.bf16, 16, 32))
    hk.lds.copy_to(sa, 0, a, hk.tile_coord(0, 0, 0, 0))
    hk.lds.copy_to(sb, 0, b, hk.tile_coord(0, 0, 0, 0))
    hk.arch.barrier()
    ta = sa[0].load(hk.RT(hk.bf16, 16, 32))
    if B_LAYOUT == "col":
        tb = sb[0].load(hk.RT(hk.bf16, 32, 16, "col"))  # the slow read
        acc = hk.mma_AB(ta, tb, hk.zeros(hk.RT(hk.fp32, 16, 16)))
    else:
        tb = sb[0].load(hk.RT(hk.bf16, 16, 32))
        acc = hk.mma_ABt(ta, tb, hk.zeros(hk.RT(hk.fp32, 16, 16)))
    c[0, 0, 0, 0] = acc


def test_first_trap_every_wait_binds_what_it_completes():
    # No MMA can be hoisted above the wait that guards its operands: the C++ binds them there.
    src = staged_mma.source(arch="gfx1100")
    m = re.search(r"hk::wait_lds<0>\(\);\n  hk::bind\((t\d+)\);\n  hk::bind\((t\d+)\);\n"
                  r"(?:.*\n)*?  hk::mma_ABt\(t\d+, \1, \2, t\d+\);", src)
    assert m, src


def test_second_trap_a_spilling_kernel_is_never_returned():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "kernels"))
    import spilling

    with pytest.raises(ResourceError, match="spills"):
        spilling.spilling.build(arch="gfx1100")


def test_third_trap_column_layout_lds_reads_are_flagged_while_tracing():
    traced = staged_mma.trace(arch="gfx1100", B_LAYOUT="col")
    (warning,) = traced.warnings
    assert "eight times the instructions" in warning["message"]
    lines, start = inspect.getsourcelines(staged_mma.fn)
    slow = start + next(i for i, l in enumerate(lines) if "# the slow read" in l)
    assert warning["location"][1] == slow
    assert staged_mma.trace(arch="gfx1100").warnings == []  # the row-layout form is clean


def test_fourth_trap_cdna4_copies_are_waited_for_before_the_barrier():
    src = staged_mma.source(arch="gfx950")
    copies = src.index("hk::group<4>::load(")
    barrier = src.index("hk::barrier();")
    assert "hk::wait_vm<0>();" in src[copies:barrier]
    # RDNA3's copies end in LDS writes: the wait drained before the barrier is on LDS.
    rdna = staged_mma.source(arch="gfx1100")
    assert "hk::wait_lds<0>();" in rdna[rdna.index("hk::group<4>::load("):rdna.index("hk::barrier();")]
