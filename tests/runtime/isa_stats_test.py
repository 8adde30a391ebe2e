"""isa_stats finds a kernel's main loop and counts it, on synthetic code and on a built kernel."""

import os

import pytest

from hk.runtime import isa_stats
from hk.runtime.waitcheck import Instruction


def code(lines):
    """Instructions from (address, text, branch target or None)."""
    return [Instruction(addr, text, text.split()[0], "", target) for addr, text, target in lines]


# A prologue, an unrolled loop (4 matrix instructions), the loop for the iterations left over (2),
# and a loop of scalar work without matrix instructions.
PROGRAM = code([
    (0x00, "s_mov_b32 s0, 0", None),
    (0x04, "ds_load_b128 v[0:3], v8", None),           # unrolled loop head
    (0x0c, "v_wmma_f32_16x16x16_bf16 v[16:23]", None),
    (0x14, "v_wmma_f32_16x16x16_bf16 v[24:31]", None),
    (0x1c, "v_wmma_f32_16x16x16_bf16 v[16:23]", None),
    (0x24, "v_wmma_f32_16x16x16_bf16 v[24:31]", None),
    (0x2c, "s_waitcnt lgkmcnt(0)", None),
    (0x30, "s_cbranch_scc1 0x04", 0x04),
    (0x34, "ds_load_b128 v[0:3], v8", None),           # remainder loop head
    (0x3c, "v_wmma_f32_16x16x16_bf16 v[16:23]", None),
    (0x44, "v_wmma_f32_16x16x16_bf16 v[24:31]", None),
    (0x4c, "s_cbranch_scc1 0x34", 0x34),
    (0x50, "s_add_u32 s1, s1, 1", None),
    (0x54, "s_cbranch_scc0 0x50", 0x50),
    (0x58, "s_endpgm", None),
])


def test_the_main_loop_is_the_innermost_one_with_the_most_matrix_instructions():
    loop = isa_stats.main_loop(PROGRAM)
    assert (loop.head, loop.tail) == (0x04, 0x30)
    assert len(loop.instructions) == 7 and loop.matrix == 4
    assert loop.per_matrix == pytest.approx(7 / 4)
    assert loop.breakdown() == {"lds": 1, "matrix": 4, "wait": 1, "salu": 1}


def test_no_matrix_loop():
    assert isa_stats.main_loop(PROGRAM[-3:]) is None


def test_an_outer_loop_is_not_the_main_loop():
    # An outer loop around the unrolled one holds it and more: the inner one is the main loop.
    outer = PROGRAM[:-1] + code([(0x58, "s_cbranch_scc1 0x00", 0x00), (0x5c, "s_endpgm", None)])
    loop = isa_stats.main_loop(outer)
    assert (loop.head, loop.tail) == (0x04, 0x30)


def test_a_loop_without_matrix_instructions_inside_does_not_hide_the_main_loop():
    # A K loop whose copy is a loop of its own: the K loop is still the main loop.
    program = code([
        (0x00, "s_mov_b32 s0, 0", None),
        (0x04, "global_load_b128 v[0:3], v8, s[0:1]", None),   # K loop head, copy loop head
        (0x0c, "s_cbranch_scc1 0x04", 0x04),                   # copy loop
        (0x10, "v_wmma_f32_16x16x16_bf16 v[16:23]", None),
        (0x18, "v_wmma_f32_16x16x16_bf16 v[24:31]", None),
        (0x20, "s_cbranch_scc1 0x04", 0x04),                   # K loop
        (0x24, "s_endpgm", None),
    ])
    loop = isa_stats.main_loop(program)
    assert (loop.head, loop.tail, loop.matrix) == (0x04, 0x20, 2)


def test_a_built_gemm(tmp_path):
    # The hermetic toolchain's code object of the short-form GEMM: one loop with 8 WMMAs.
    import hk

    @hk.kernel(grid=(1, 1), warps=4)
    def small_gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        w = hk.arch.warp_id()
        for k in hk.range(hk.cdiv(a.cols, 32)):
            hk.lds.copy_to(s, 0, a, hk.tile_coord(0, 0, 0, k))
            hk.arch.barrier()
            t = s[0].subtile(16, 32, w, 0).load(hk.RT(hk.bf16, 16, 32))
            acc = hk.mma_ABt(t, s[0].load(hk.RT(hk.bf16, 64, 32)), acc)
            hk.arch.barrier()
        c[0, 0, w, 0] = acc

    built = small_gemm.build("gfx1100")
    stats = isa_stats.stats(built.path, os.path.join(os.environ["HK_LLVM_BIN"], "llvm-objdump"))
    (s,) = stats.values()
    # (The compiler may unswitch the loop on the copy's bounds test: the body twice, one runs.)
    assert s.arch == "gfx1100" and s.matrix in (8, 16) and s.loop.matrix == 8
    assert s.per_matrix == len(s.loop.instructions) / 8
    assert s.figures()["vgprs"] == s.vgprs and s.spills == 0
