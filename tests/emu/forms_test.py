"""Known answers for instructions that Triton's and clang's code for these targets use and the
emulator once lacked or misread: gfx950's transposing LDS load and packed f16 conversion,
gfx1100's 16->32-bit conversions, the maxmin/minmax clamps of gfx11 and gfx12, gfx1201's scalar
transcendentals, s_addk_co_i32, its true16 encodings and the wave id in ttmp8, an AGPR operand
named a16, and the error an instruction the emulator cannot run raises (its name, its address,
and only when it is executed)."""

import numpy as np

import hk.emu
from tests.emu import asm, emutest
from tests.emu.emutest import inputs, loads

RNG = np.random.default_rng(11)


def f32(x):
    return np.asarray(x, np.float64).astype(np.float32)


def f16_bits(x):
    return np.asarray(x, np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)


class FormsTest(emutest.EmuTest):

    def test_gfx950_transposing_lds_load(self):
        # Lane l writes the four 16-bit values 4l..4l+3 at LDS byte 8l, then reads back with the
        # transpose: in each block of 16 lanes, lane l's element k is element l % 4 of the data
        # lane (l & ~15) + 4k + (l % 16) / 4 read.
        body = """
  v_lshlrev_b32 v1, 2, v0
  v_add_u32 v2, 1, v1
  v_lshl_or_b32 v4, v2, 16, v1
  v_add_u32 v2, 2, v1
  v_add_u32 v3, 3, v1
  v_lshl_or_b32 v5, v3, 16, v2
  v_lshlrev_b32 v6, 3, v0
  ds_write_b64 v6, v[4:5]
  s_waitcnt lgkmcnt(0)
  ds_read_b64_tr_b16 v[10:11], v6
  ds_read_b64_tr_b16 v[12:13], v6 offset:8
  s_waitcnt lgkmcnt(0)
"""
        co = asm.assemble("gfx950", {"tr": (body, [10, 11, 12, 13], {"lds": 1024})})
        out = emutest.run_asm("gfx950", co, "tr", 4)
        lane = np.arange(64)
        src = lambda k, shift: ((lane & ~15) + 4 * k + ((lane & 15) >> 2) + shift) % 128
        elem = lambda k, shift: np.where(src(k, shift) < 64, src(k, shift) * 4 + (lane & 3), 0)
        for reg, shift in ((0, 0), (2, 1)):           # offset:8 reads the next lane's words
            np.testing.assert_array_equal(out[reg], elem(0, shift) | elem(1, shift) << 16)
            np.testing.assert_array_equal(out[reg + 1], elem(2, shift) | elem(3, shift) << 16)

    def test_gfx950_packed_f16_conversion(self):
        a, b = f32(RNG.uniform(-70000, 70000, 64)), f32(RNG.uniform(-3, 3, 64))
        body = "  v_cvt_pk_f16_f32 v10, v1, -v2\n  v_cvt_pk_f16_f32 v11, |v2|, v1 clamp\n"
        co = asm.assemble("gfx950", {"pk": (loads("gfx950", 2) + body, [10, 11])})
        out = emutest.run_asm("gfx950", co, "pk", 2, inp=inputs("gfx950", a, b))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out[0], f16_bits(a) | f16_bits(-b) << 16)
            np.testing.assert_array_equal(out[1], f16_bits(np.clip(np.abs(b), 0, 1)) | f16_bits(np.clip(a, 0, 1)) << 16)

    def test_gfx1100_16_to_32_bit_conversions(self):
        u = RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
        body = """
  v_cvt_u32_u16 v10, v1.h
  v_cvt_u32_u16 v11, v1
  v_cvt_i32_i16 v12, v1.h
  v_cvt_i32_i16_e64 v13, v1
"""
        co = asm.assemble("gfx1100", {"cvt": (loads("gfx1100", 1) + body, [10, 11, 12, 13])})
        out = emutest.run_asm("gfx1100", co, "cvt", 4, inp=inputs("gfx1100", u))
        np.testing.assert_array_equal(out[0], u >> 16)
        np.testing.assert_array_equal(out[1], u & 0xFFFF)
        np.testing.assert_array_equal(out[2], (u >> 16).astype(np.uint16).view(np.int16).astype(np.int32).view(np.uint32))
        np.testing.assert_array_equal(out[3], (u & 0xFFFF).astype(np.uint16).view(np.int16).astype(np.int32).view(np.uint32))

    def test_gfx1201_scalar_transcendentals_and_addk(self):
        body = """
  s_mov_b32 s8, 4.0
  v_s_rcp_f32 s8, s8
  s_mov_b32 s9, 0x40400000
  v_s_exp_f32 s9, -s9
  s_mov_b32 s11, 0xc1800000
  v_s_sqrt_f32 s11, |s11|
  v_s_log_f32 s12, 0x41000000
  v_s_rsq_f32 s13, 4.0 mul:2
  s_mov_b32 s10, 0x7ff0
  s_addk_co_i32 s10, 0x80
  s_cselect_b32 s14, 1, 2
  s_mov_b32 s15, 0x7fffffff
  s_addk_co_i32 s15, 1
  s_cselect_b32 s16, 1, 2
  v_mov_b32 v10, s8
  v_mov_b32 v11, s9
  v_mov_b32 v12, s11
  v_mov_b32 v13, s12
  v_mov_b32 v14, s13
  v_mov_b32 v15, s10
  v_mov_b32 v16, s14
  v_mov_b32 v17, s16
"""
        co = asm.assemble("gfx1201", {"s": (body, list(range(10, 18)))})
        out = emutest.run_asm("gfx1201", co, "s", 8)
        got = out[:, 0]
        np.testing.assert_array_equal(got[:5].view(np.float32), f32([0.25, 0.125, 4.0, 3.0, 1.0]))
        np.testing.assert_array_equal(got[5:], [0x8070, 2, 1])      # s_addk: SCC is signed overflow

    def test_gfx1201_true16_encodings(self):
        # Triton's gfx1201 code is true16: llvm-objdump's default (fake16) cannot decode
        # v_mov_b16 v10.l, 0 (0x7e143880) or v_mov_b16 v11.h, v1.l (0x7f163901).
        body = """
  v_mov_b32 v10, -1
  v_mov_b32 v11, 0x1234
  v_mov_b32 v1, 0xabcd
  .long 0x7e143880
  .long 0x7f163901
"""
        co = asm.assemble("gfx1201", {"t16": (body, [10, 11])})
        out = emutest.run_asm("gfx1201", co, "t16", 2)
        np.testing.assert_array_equal(out[0], 0xFFFF0000)
        np.testing.assert_array_equal(out[1], 0xABCD1234)

    def test_gfx1201_wave_id_in_ttmp8(self):
        body = "  s_bfe_u32 s20, ttmp8, 0x50019\n  v_mov_b32 v10, s20\n"
        co = asm.assemble("gfx1201", {"wave_id": (body, [10])})
        out = np.zeros(160, np.uint32)
        hk.emu.launch(co, "wave_id", grid=(2,), block=(160,), args=[out, np.zeros(1024, np.uint32)])
        np.testing.assert_array_equal(out, np.arange(160) // 32)     # work-item t is in wave t / 32

    def test_maxmin_and_minmax(self):
        # clang's clamp on gfx11 (v_maxmin_f32) and gfx12 (v_maxmin_num_f32)
        a, b, c = (f32(RNG.uniform(-3, 3, 32)) for _ in range(3))
        i = (RNG.integers(-50, 50, (3, 32))).astype(np.int32)
        body = """
  v_maxmin_f32 v10, v1, v2, v3
  v_minmax_f32 v11, v1, -v2, v3
  v_maxmin_i32 v12, v4, v5, v6
  v_minmax_u32 v13, v4, v5, v6
  v_maxmin_f16 v14.l, v7.l, v8.l, v9.l
"""
        body12 = "  v_maxmin_num_f32 v10, v1, v2, v3\n  v_minmax_num_f32 v11, v1, -v2, v3\n"
        h = RNG.uniform(-3, 3, (3, 64)).astype(np.float16)
        ins = (a, b, c) + tuple(i.view(np.uint32)) + tuple(x.view(np.uint32) for x in h)
        for arch, text, n in (("gfx1100", body, 5), ("gfx1201", body12, 2)):
            co = asm.assemble(arch, {"mm": (loads(arch, 9) + text, list(range(10, 10 + n)))})
            out = emutest.run_asm(arch, co, "mm", n, inp=inputs(arch, *ins))
            np.testing.assert_array_equal(out[0].view(np.float32), np.minimum(np.maximum(a, b), c))
            np.testing.assert_array_equal(out[1].view(np.float32), np.maximum(np.minimum(a, -b), c))
            if arch == "gfx1100":
                u = i.view(np.uint32)
                np.testing.assert_array_equal(out[2].view(np.int32), np.minimum(np.maximum(i[0], i[1]), i[2]))
                np.testing.assert_array_equal(out[3], np.maximum(np.minimum(u[0], u[1]), u[2]))
                lo = h[:, 0::2]                                   # the .l halves
                want = np.minimum(np.maximum(lo[0], lo[1]), lo[2]).view(np.uint16)
                np.testing.assert_array_equal(out[4] & 0xFFFF, want)

    def test_agpr_named_a16_is_an_operand(self):
        body = """
  v_accvgpr_write_b32 a16, v1
  v_accvgpr_read_b32 v10, a16
  v_accvgpr_write_b32 a17, 7
  v_accvgpr_mov_b32 a16, a17
  v_accvgpr_read_b32 v11, a16
"""
        u = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
        co = asm.assemble("gfx942", {"a16": (loads("gfx942", 1) + body, [10, 11])})
        out = emutest.run_asm("gfx942", co, "a16", 2, inp=inputs("gfx942", u))
        np.testing.assert_array_equal(out[0], u)
        np.testing.assert_array_equal(out[1], 7)


class UnknownInstructionTest(emutest.EmuTest):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        skip = "  s_cmp_eq_u32 s6, s6\n  s_cbranch_scc1 .Lpast_%s\n%s\n.Lpast_%s:\n  v_mov_b32 v10, 5\n"
        cls.co = asm.assemble("gfx1100", {
            "lacks": ("  v_movrels_b32 v10, v1\n", [10]),
            "word": ("  .long 0xffffffff\n", [10]),
            "skipped": (skip % ("a", "  v_movrels_b32 v10, v1\n  .long 0xffffffff", "a"), [10]),
        })

    def assertNamed(self, name, *words):
        with self.assertRaises(hk.emu.EmuError) as cm:
            emutest.run_asm("gfx1100", self.co, name, 1)
        msg = str(cm.exception)
        self.assertRegex(msg, r"kernel %s, pc 0x[0-9a-f]+ \(" % name)
        for w in words:
            self.assertIn(w, msg)

    def test_a_mnemonic_the_core_lacks_is_named_with_its_address(self):
        self.assertNamed("lacks", "(v_movrels_b32_e32 v10, v1)", "does not implement v_movrels_b32")

    def test_an_undecodable_word(self):
        self.assertNamed("word", ".long 0xffffffff", "cannot decode this word")

    def test_only_when_executed(self):
        out = emutest.run_asm("gfx1100", self.co, "skipped", 1)
        np.testing.assert_array_equal(out[0], 5)

    def test_listed_before_running(self):
        whys = [why for _, _, why in hk.emu.unsupported(self.co)]
        self.assertEqual(len(whys), 4)           # lacks, word, and the two skipped in skipped
        self.assertEqual(sum("v_movrels_b32" in w for w in whys), 2)

    def test_the_hip_kernels_can_run_every_instruction(self):
        # clang's code for the four targets (tests/emu/kernels), instruction by instruction
        for path in emutest.FLAGS.code_object:
            self.assertEqual(hk.emu.unsupported(path), [], path)


if __name__ == "__main__":
    emutest.main()
