"""Known answers for the scalar ALU (SOP1/SOP2/SOPK/SOPC), SCC, EXEC and scalar loads, on gfx1100
(and the gfx9 spellings on gfx942). Expected values follow the ISA's description of each
instruction; each snippet moves its SGPR results into VGPRs for the frame to store."""

import numpy as np

from tests.emu import asm, emutest

M = 0xFFFFFFFF

# name: (body, expected values of v1, v2, ...; uniform across lanes)
GFX11 = {
    "carry": ("""
  s_mov_b32 s10, -1
  s_add_u32 s11, s10, 2
  s_addc_u32 s12, 5, 0
  s_sub_u32 s13, 1, 2
  s_subb_u32 s14, 10, 0
  s_add_i32 s15, s10, s10
  v_mov_b32 v1, s11
  v_mov_b32 v2, s12
  v_mov_b32 v3, s13
  v_mov_b32 v4, s14
  v_mov_b32 v5, s15
""", [1, 6, M, 9, M - 1]),
    "fields": ("""
  s_mov_b32 s10, 0x12345678
  s_bfe_u32 s11, s10, 0x80004
  s_movk_i32 s12, 0xf0
  s_bfe_i32 s12, s12, 0x40004
  s_ashr_i32 s13, 0x80000000, 4
  s_lshr_b32 s14, 0x80000000, 4
  s_bfm_b32 s15, 5, 3
  s_lshl2_add_u32 s16, 3, 100
  s_movk_i32 s17, 0x1234
  s_pack_ll_b32_b16 s17, s17, 0xabcd
  v_mov_b32 v1, s11
  v_mov_b32 v2, s12
  v_mov_b32 v3, s13
  v_mov_b32 v4, s14
  v_mov_b32 v5, s15
  v_mov_b32 v6, s16
  v_mov_b32 v7, s17
""", [0x67, M, 0xF8000000, 0x08000000, 0xF8, 112, 0xABCD1234]),
    "multiply": ("""
  s_mov_b32 s10, -1
  s_mul_i32 s11, s10, 7
  s_mul_hi_u32 s12, s10, s10
  s_mul_hi_i32 s13, s10, s10
  s_mul_hi_u32 s14, 0x10000, 0x10000
  v_mov_b32 v1, s11
  v_mov_b32 v2, s12
  v_mov_b32 v3, s13
  v_mov_b32 v4, s14
""", [M - 6, 0xFFFFFFFE, 0, 1]),
    "compare_select": ("""
  s_cmp_lt_i32 -1, 1
  s_cselect_b32 s10, 7, 9
  s_cmp_lt_u32 -1, 1
  s_cselect_b32 s11, 7, 9
  s_cmpk_eq_u32 s10, 7
  s_cselect_b32 s12, 1, 2
  s_mov_b64 s[20:21], -1
  s_mov_b64 s[22:23], -1
  s_cmp_eq_u64 s[20:21], s[22:23]
  s_cselect_b32 s13, 3, 4
  s_bitcmp1_b32 0x10, 4
  s_cselect_b32 s14, 5, 6
  v_mov_b32 v1, s10
  v_mov_b32 v2, s11
  v_mov_b32 v3, s12
  v_mov_b32 v4, s13
  v_mov_b32 v5, s14
""", [7, 9, 1, 3, 5]),
    "bits": ("""
  s_ff1_i32_b32 s10, 0x100
  s_flbit_i32_b32 s11, 0x100
  s_bcnt1_i32_b32 s12, 0xff0
  s_brev_b32 s13, 1
  s_mov_b32 s14, 0
  s_bitset1_b32 s14, 31
  s_sext_i32_i16 s15, 0x8000
  s_abs_i32 s16, -5
  s_not_b32 s17, 0
  s_ff1_i32_b32 s18, 0
  s_min_i32 s19, -3, 2
  s_max_u32 s20, -3, 2
  v_mov_b32 v1, s10
  v_mov_b32 v2, s11
  v_mov_b32 v3, s12
  v_mov_b32 v4, s13
  v_mov_b32 v5, s14
  v_mov_b32 v6, s15
  v_mov_b32 v7, s16
  v_mov_b32 v8, s17
  v_mov_b32 v9, s18
  v_mov_b32 v10, s19
  v_mov_b32 v11, s20
""", [8, 23, 8, 0x80000000, 0x80000000, 0xFFFF8000, 5, M, M, M - 2, M - 2]),
    "sopk": ("""
  s_movk_i32 s10, 0x8000
  s_mov_b32 s11, s10
  s_addk_i32 s11, 0x10
  s_mov_b32 s12, 3
  s_mulk_i32 s12, 0xfffe
  v_mov_b32 v1, s10
  v_mov_b32 v2, s11
  v_mov_b32 v3, s12
""", [0xFFFF8000, 0xFFFF8010, M - 5]),
    "wide": ("""
  s_mov_b64 s[10:11], -1
  s_lshr_b64 s[12:13], s[10:11], 4
  s_lshl_b64 s[14:15], 1, 40
  s_bfe_u64 s[16:17], s[10:11], 0x100008
  s_and_not1_b64 s[18:19], s[10:11], s[14:15]
  v_mov_b32 v1, s12
  v_mov_b32 v2, s13
  v_mov_b32 v3, s14
  v_mov_b32 v4, s15
  v_mov_b32 v5, s16
  v_mov_b32 v6, s17
  v_mov_b32 v7, s19
""", [M, 0x0FFFFFFF, 0, 0x100, 0xFFFF, 0, M ^ 0x100]),
    "scalar_load": ("""
  s_load_b64 s[10:11], s[6:7], 0x8
  s_load_b32 s12, s[6:7], null
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s10
  v_mov_b32 v2, s11
  v_mov_b32 v3, s12
""", [202, 303, 0]),
}

# EXEC: per-lane expectations.
EXEC_BODY = """
  v_mov_b32 v1, 0
  s_mov_b32 s11, 0x0000ffff
  s_and_saveexec_b32 s12, s11
  v_mov_b32 v1, 5
  s_mov_b32 exec_lo, s12
  v_mov_b32 v2, s12
  s_mov_b32 s13, 0x5
  s_mov_b32 exec_lo, 0xffff0000
  s_and_not1_saveexec_b32 s14, s13
  v_mov_b32 v1, 7
  s_mov_b32 exec_lo, -1
"""

GFX9 = {
    "carry9": ("""
  s_mov_b32 s10, -1
  s_add_u32 s11, s10, 2
  s_addc_u32 s12, 5, 0
  s_andn2_b32 s13, -1, 0xf
  s_load_dwordx2 s[14:15], s[6:7], 0x8
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s11
  v_mov_b32 v2, s12
  v_mov_b32 v3, s13
  v_mov_b32 v4, s14
""", [1, 6, M ^ 0xF, 202]),
}


# The scalar float instructions gfx12 adds (clang uses them for scalar float arithmetic).
GFX12_FLOAT = {
    "scalar_float": ("""
  s_mov_b32 s10, 7
  s_cvt_f32_i32 s11, s10
  s_mul_f32 s12, s11, 0.5
  s_add_f32 s13, s12, 1.0
  s_cvt_i32_f32 s14, s13
  s_mov_b32 s15, -3
  s_cvt_f32_i32 s15, s15
  s_cmp_lt_f32 s15, s11
  s_cselect_b32 s16, 1, 0
  v_mov_b32 v1, s11
  v_mov_b32 v2, s12
  v_mov_b32 v3, s13
  v_mov_b32 v4, s14
  v_mov_b32 v5, s15
  v_mov_b32 v6, s16
""", [0x40E00000, 0x40600000, 0x40900000, 4, 0xC0400000, 1]),
}


class SaluTest(emutest.EmuTest):

    def run_table(self, arch, table):
        kernels = {name: (body, list(range(1, len(exp) + 1))) for name, (body, exp) in table.items()}
        co = asm.assemble(arch, kernels)
        inp = np.zeros(1024, np.uint32)
        inp[:4] = [0, 101, 202, 303]
        for name, (body, exp) in table.items():
            with self.subTest(arch=arch, kernel=name):
                out = emutest.run_asm(arch, co, name, len(exp), inp=inp)
                for i, e in enumerate(exp):
                    self.assertTrue((out[i] == e).all(), "%s v%d: got %#x, want %#x" % (name, i + 1, out[i][0], e))

    def test_gfx1100(self):
        self.run_table("gfx1100", GFX11)

    def test_gfx1201_scalar_float(self):
        self.run_table("gfx1201", GFX12_FLOAT)

    def test_gfx942_spellings(self):
        self.run_table("gfx942", GFX9)

    def test_exec_masking(self):
        co = asm.assemble("gfx1100", {"exec": (EXEC_BODY, [1, 2])})
        out = emutest.run_asm("gfx1100", co, "exec", 2)
        lanes = np.arange(32)
        # lanes 0-15 got 5; with EXEC = 0xffff0000, and_not1_saveexec set EXEC = 0x5 & ~EXEC
        expect = np.where(lanes < 16, 5, 0)
        expect = np.where((0x5 >> lanes) & 1, 7, expect)
        np.testing.assert_array_equal(out[0], expect)
        np.testing.assert_array_equal(out[1], M)


if __name__ == "__main__":
    emutest.main()
