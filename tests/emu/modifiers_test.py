"""The source modifiers, path by path: neg and abs on f32, f16 and f64 VOP3 sources (plain, DPP
and SDWA forms, comparisons and v_cndmask), op_sel on 16-bit VOP3 sources and destinations, and
VOP3P's op_sel, op_sel_hi, neg_lo and neg_hi: packed f16 and f32 math, packed inline constants,
v_fma_mix* (where the disassembler prints neg_lo/neg_hi as -x and |x|), v_dot2's f32 addend, WMMA
and the f64 MFMA's neg. Each check would fail if the modifier were dropped."""

import numpy as np

from tests.emu import asm, emutest
from tests.emu.emutest import inputs, loads

RNG = np.random.default_rng(23)


def f32(x):
    return np.asarray(x, np.float64).astype(np.float32)


def halves(n):
    """Per lane two f16 values packed in a word, and the (low, high) values as float64."""
    h = RNG.uniform(-3, 3, 2 * n).astype(np.float16)
    return h.view(np.uint32), h[0::2].astype(np.float64), h[1::2].astype(np.float64)


def h16(x):
    return np.asarray(x, np.float64).astype(np.float16).view(np.uint16).astype(np.uint32)


class ModifiersTest(emutest.EmuTest):

    def exec_body(self, arch, body, nin, ins, nout):
        co = asm.assemble(arch, {"m": (loads(arch, nin) + body, list(range(10, 10 + nout)))})
        return emutest.run_asm(arch, co, "m", nout, inp=inputs(arch, *ins))

    def test_vop3_f32_f16_f64_neg_and_abs(self):
        a, b = f32(RNG.uniform(-3, 3, 32)), f32(RNG.uniform(-3, 3, 32))
        w, lo, hi = halves(32)
        body = """
  v_fma_f32 v10, -v1, |v2|, -|v1|
  v_cvt_i32_f32_e64 v11, -|v1|
  v_add_f16_e64 v12.l, -v3.h, |v3.l|
  v_mov_b32 v13, 0x5555aaaa
  v_mul_f16_e64 v13.h, -|v3.l|, v3.h
  v_cmp_gt_f32_e64 s20, |v1|, 1.0
  v_cndmask_b32_e64 v14, 0, 1, s20
  v_cndmask_b32_e64 v15, -v1, |v2|, s20
  v_add_f32_dpp v16, -v1, |v2| quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  v_cvt_f64_f32 v[18:19], v1
  v_cvt_f64_f32 v[20:21], v2
  v_fma_f64 v[22:23], -v[18:19], |v[20:21]|, -|v[18:19]|
  v_mov_b32 v17, v22
  v_mov_b32 v18, v23
"""
        out = self.exec_body("gfx1100", body, 3, (a, b, w), 9)
        A, B = a.astype(np.float64), b.astype(np.float64)
        np.testing.assert_array_equal(out[0].view(np.float32), f32(-A * np.abs(B) - np.abs(A)))
        np.testing.assert_array_equal(out[1].view(np.int32), np.trunc(-np.abs(A)).astype(np.int32))
        np.testing.assert_array_equal(out[2] & 0xFFFF, h16(-hi + np.abs(lo)))
        np.testing.assert_array_equal(out[3], 0xAAAA | h16(-np.abs(lo) * hi) << 16)
        big = np.abs(A) > 1
        np.testing.assert_array_equal(out[4], big.astype(np.uint32))
        np.testing.assert_array_equal(out[5].view(np.float32), np.where(big, np.abs(b), -a))
        swap = np.arange(32) ^ 1
        np.testing.assert_array_equal(out[6].view(np.float32), f32(-A[swap] + np.abs(B)))
        f64 = (-A * np.abs(B) - np.abs(A)).view(np.uint64)
        np.testing.assert_array_equal(out[7].astype(np.uint64) | out[8].astype(np.uint64) << 32, f64)

    def test_gfx942_sdwa_and_vop3_op_sel(self):
        a = f32(RNG.uniform(-3, 3, 64))
        w, lo, hi = halves(64)
        body = """
  v_add_f32_sdwa v10, -v1, |v1| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
  v_cvt_f32_f16_sdwa v11, -v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
  v_fma_f16 v12, -v2, |v2|, v2 op_sel:[1,0,1,0]
"""
        out = self.exec_body("gfx942", body, 2, (a, w), 3)
        np.testing.assert_array_equal(out[0].view(np.float32), f32(-a.astype(np.float64) + np.abs(a)))
        np.testing.assert_array_equal(out[1].view(np.float32), f32(-hi))
        np.testing.assert_array_equal(out[2] & 0xFFFF, h16(-hi * np.abs(lo) + hi))

    def test_packed_f16_op_sel_neg_and_inline_constants(self):
        w1, lo1, hi1 = halves(32)
        w2, lo2, hi2 = halves(32)
        w3, lo3, hi3 = halves(32)
        body = """
  v_pk_fma_f16 v10, v1, v2, v3 op_sel:[1,0,1] op_sel_hi:[0,1,0] neg_lo:[1,0,0] neg_hi:[0,0,1]
  v_pk_add_f16 v11, v1, 1.0
  v_pk_add_u16 v12, v1, -1
  v_pk_mul_f16 v13, v1, v2 neg_lo:[0,1] neg_hi:[1,1]
"""
        out = self.exec_body("gfx1100", body, 3, (w1, w2, w3), 4)
        # lane half 0 takes op_sel, half 1 op_sel_hi: src0 (hi, lo), src1 (lo, hi), src2 (hi, lo)
        lo = -hi1 * lo2 + hi3
        hi = lo1 * hi2 + -lo3
        np.testing.assert_array_equal(out[0], h16(lo) | h16(hi) << 16)
        np.testing.assert_array_equal(out[1], h16(lo1 + 1.0) | h16(hi1) << 16)   # 1.0 is {1.0, 0}
        ones = (w1 & 0xFFFF) + 0xFFFF & 0xFFFF | ((w1 >> 16) + 0xFFFF & 0xFFFF) << 16
        np.testing.assert_array_equal(out[2], ones)                              # -1 is {-1, -1}
        np.testing.assert_array_equal(out[3], h16(lo1 * -lo2) | h16(-hi1 * -hi2) << 16)

    def test_fma_mix_modifiers_on_both_families(self):
        w, lo, hi = halves(64)
        b, c = f32(RNG.uniform(-3, 3, 64)), f32(RNG.uniform(-3, 3, 64))
        B, C = b.astype(np.float64), c.astype(np.float64)
        body = """
  v_fma_mix_f32 v10, -v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[1,0,0]
  v_fma_mix_f32 v11, v1, -|v2|, |v3| op_sel_hi:[1,0,0]
  v_mov_b32 v12, 0x12345678
  v_fma_mixlo_f16 v12, -|v1|, v1, -v3 op_sel:[0,1,0] op_sel_hi:[1,1,0]
  v_mov_b32 v13, 0x12345678
  v_fma_mixhi_f16 v13, v1, 1.0, -v1 op_sel:[1,0,0] op_sel_hi:[1,0,1]
"""
        for arch in ("gfx1100", "gfx942"):
            with self.subTest(arch=arch):
                wave = asm.WAVE[arch]
                out = self.exec_body(arch, body, 3, (w[:wave], b[:wave], c[:wave]), 4)
                l, h, bb, cc = lo[:wave], hi[:wave], B[:wave], C[:wave]
                np.testing.assert_array_equal(out[0].view(np.float32), f32(-h * bb + cc))   # x - y as Triton writes it
                np.testing.assert_array_equal(out[1].view(np.float32), f32(l * -np.abs(bb) + np.abs(cc)))
                np.testing.assert_array_equal(out[2], 0x12340000 | h16(-np.abs(l) * h - cc))
                np.testing.assert_array_equal(out[3], 0x5678 | h16(h * 1.0 - l) << 16)

    def test_dot2_addend_and_packed_f32(self):
        w, lo, hi = halves(64)
        c = f32(RNG.uniform(-3, 3, 64))
        C = c.astype(np.float64)
        body = """
  v_dot2_f32_f16 v10, v1, v1, v2 neg_lo:[1,0,1]
  v_dot2_f32_f16 v11, v1, v1, v2 neg_hi:[0,1,1]
  v_mov_b32 v20, v2
  v_mov_b32 v21, v1
  v_pk_mul_f32 v[22:23], v[20:21], v[20:21] op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[1,0] neg_hi:[0,1]
  v_mov_b32 v12, v22
  v_mov_b32 v13, v23
"""
        for arch in ("gfx1100", "gfx942"):
            with self.subTest(arch=arch):
                wave = asm.WAVE[arch]
                text = body if arch == "gfx942" else body.split("  v_mov_b32 v20")[0]
                nout = 4 if arch == "gfx942" else 2
                out = self.exec_body(arch, text, 2, (w[:wave], c[:wave]), nout)
                l, h, cc = lo[:wave], hi[:wave], C[:wave]
                np.testing.assert_allclose(out[0].view(np.float32), -l * l + h * h - cc, rtol=1e-6)
                np.testing.assert_allclose(out[1].view(np.float32), l * l - h * h + np.abs(cc), rtol=1e-6)
                if arch == "gfx942":
                    w32 = w[:wave].view(np.float32).astype(np.float64)
                    np.testing.assert_array_equal(out[2].view(np.float32), f32(-w32 * cc))   # (hi of v[20:21]) * lo
                    np.testing.assert_array_equal(out[3].view(np.float32), f32(cc * -w32))

    def test_matrix_negation(self):
        # WMMA (gfx1100): neg_lo/neg_hi negate the low/high f16 halves of A and B; MFMA f64
        # (gfx942): neg:[a,b,c] negates whole operands.
        a = RNG.uniform(-2, 2, (16, 16)).astype(np.float16)
        b = RNG.uniform(-2, 2, (16, 16)).astype(np.float16)
        # lane l < 16 holds row l of A (16 halves in v[1:8]) and column l of B in v[9:16]
        wa = np.zeros((8, 32), np.uint32)
        wb = np.zeros((8, 32), np.uint32)
        for lane in range(32):
            wa[:, lane] = a[lane % 16].view(np.uint32)
            wb[:, lane] = b[:, lane % 16].copy().view(np.uint32)
        body = "  v_mov_b32 v%d, 0\n" * 8 % tuple(range(20, 28)) + \
            "  v_wmma_f32_16x16x16_f16 v[20:27], v[1:8], v[9:16], v[20:27] neg_lo:[1,0,0] neg_hi:[0,1,0]\n" + \
            "".join("  v_mov_b32 v%d, v%d\n" % (10 + i, 20 + i) for i in range(8))
        out = self.exec_body("gfx1100", body, 16, list(wa) + list(wb), 8)
        na = a.astype(np.float64) * np.where(np.arange(16) % 2 == 0, -1, 1)        # even K of A negated
        nb = b.astype(np.float64) * np.where(np.arange(16) % 2 == 1, -1, 1)[:, None]  # odd K of B
        ref = na @ nb
        got = np.zeros((16, 16))
        for r in range(8):
            for lane in range(32):
                got[2 * r + lane // 16, lane % 16] = out[r, lane].view(np.float32)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)

        x = RNG.uniform(-2, 2, 64)
        y = RNG.uniform(-2, 2, 64)
        body = "".join("  v_mov_b32 v%d, 0\n" % r for r in range(20, 28)) + """
  v_mov_b32 v6, v1
  v_mov_b32 v7, v2
  v_mov_b32 v8, v3
  v_mov_b32 v9, v4
  v_mfma_f64_16x16x4_f64 v[20:27], v[6:7], v[8:9], v[20:27] neg:[1,0,0]
  v_mfma_f64_16x16x4_f64 v[20:27], v[6:7], v[8:9], v[20:27] neg:[0,1,0]
  v_mfma_f64_16x16x4_f64 v[20:27], v[6:7], v[8:9], v[20:27] neg:[0,0,1]
  s_nop 15
  v_mov_b32 v10, v20
  v_mov_b32 v11, v21
"""
        xw, yw = x.view(np.uint32), y.view(np.uint32)
        out = self.exec_body("gfx942", body, 4, (xw[0::2], xw[1::2], yw[0::2], yw[1::2]), 2)
        # D = (-A) B = -AB, then A (-B) + D = -2AB, then A B - D = 3AB. The first register pair
        # holds row 4 * (lane / 16), column lane % 16.
        A = x.reshape(4, 16).T        # lane l holds A[l % 16][l / 16]: A is 16 x 4
        Bm = y.reshape(4, 16)         # and B[l / 16][l % 16]: B is 4 x 16
        ref = 3 * (A @ Bm)
        got = (out[0].astype(np.uint64) | out[1].astype(np.uint64) << 32).view(np.float64)
        lanes = np.arange(64)
        np.testing.assert_allclose(got, ref[4 * (lanes // 16), lanes % 16], rtol=1e-12)


if __name__ == "__main__":
    emutest.main()
