"""Known answers for memory instructions on gfx1100: global loads and stores from 8 to 128 bits
(sign extension, d16 halves), LDS loads and stores incl. b128, the two-address forms and the
d16_hi load that must keep the low half, LDS and global atomics, per-lane scratch, raw buffer
loads with their range check, and flat accesses through the shared aperture; gfx12's scalar
byte and short loads."""

import numpy as np

from tests.emu import asm, emutest

L = np.arange(32, dtype=np.uint64)
INP = (np.arange(1024, dtype=np.uint64) * 0x01010101 + 0x80402010).astype(np.uint32)   # inp[i]
B = INP.view(np.uint8)


def word(byte_offsets):
    """inp's little-endian 32-bit word at each byte offset."""
    return np.array([int.from_bytes(B[o:o + 4].tobytes(), "little") for o in byte_offsets], np.uint64)


GLOBAL = """
  v_mov_b32 v10, 0x5555aaaa
  global_load_u8 v11, v100, s[6:7] offset:1
  global_load_i8 v12, v100, s[6:7] offset:3
  global_load_u16 v13, v100, s[6:7] offset:2
  global_load_i16 v14, v100, s[6:7] offset:2
  global_load_b32 v15, v100, s[6:7]
  global_load_b64 v[16:17], v100, s[6:7] offset:256
  global_load_b128 v[20:23], v100, s[6:7] offset:512
  v_mov_b32 v18, 0x5555aaaa
  global_load_d16_hi_b16 v18, v100, s[6:7]
  v_mov_b32 v19, 0x5555aaaa
  global_load_d16_b16 v19, v100, s[6:7]
  s_waitcnt vmcnt(0)
"""

LDS = """
  v_lshlrev_b32 v30, 4, v0
  v_mov_b32 v31, v0
  v_add_nc_u32 v32, 1000, v0
  v_add_nc_u32 v33, 2000, v0
  v_add_nc_u32 v34, 3000, v0
  ds_store_b128 v30, v[31:34]
  ds_store_b8 v0, v0 offset:1024
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_sub_nc_u32 v35, 31, v0
  v_lshlrev_b32 v35, 4, v35
  ds_load_b128 v[10:13], v35
  ds_load_b32 v14, v30 offset:8
  ds_load_2addr_b32 v[15:16], v30 offset0:1 offset1:6
  v_mov_b32 v17, 0x5555aaaa
  ds_load_u16_d16_hi v17, v30 offset:4
  ds_load_u8 v18, v0 offset:1024
  v_mov_b32 v19, 1
  v_mov_b32 v20, 0
  ds_store_b32 v20, v20 offset:2000
  s_waitcnt lgkmcnt(0)
  ds_add_rtn_u32 v20, v20, v19 offset:2000
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v22, 0
  ds_load_b32 v21, v22 offset:2000
  s_waitcnt lgkmcnt(0)
"""

ATOMICS = """
  v_mov_b32 v19, 1
  v_mov_b32 v30, 0
  global_store_b32 v30, v30, s[6:7] offset:3968
  global_store_b32 v30, v30, s[6:7] offset:3964
  s_waitcnt_vscnt null, 0x0
  global_atomic_add_u32 v10, v30, v19, s[6:7] offset:3968 glc
  s_waitcnt vmcnt(0)
  global_load_b32 v11, v30, s[6:7] offset:3968
  v_mov_b32 v31, 0x77
  v_mov_b32 v32, 0
  global_atomic_cmpswap_b32 v12, v30, v[31:32], s[6:7] offset:3964 glc
  s_waitcnt vmcnt(0)
  global_load_b32 v13, v30, s[6:7] offset:3964
  s_waitcnt vmcnt(0)
"""

SCRATCH = """
  v_add_nc_u32 v30, 500, v0
  scratch_store_b32 off, v30, off offset:16
  v_mov_b32 v31, 8
  scratch_store_b32 v31, v0, off
  s_waitcnt_vscnt null, 0x0
  scratch_load_b32 v10, off, off offset:16
  scratch_load_b32 v11, off, off offset:8
  s_waitcnt vmcnt(0)
"""

BUFFER = """
  s_mov_b32 s8, s6
  s_and_b32 s9, s7, 0xffff
  s_mov_b32 s10, 64
  s_mov_b32 s11, 0x31016fac
  buffer_load_b32 v10, v100, s[8:11], 0 offen
  buffer_load_b32 v11, v100, s[8:11], 4 offen offset:8
  s_waitcnt vmcnt(0)
"""

FLAT = """
  s_mov_b64 s[12:13], src_shared_base
  v_mov_b32 v31, s13
  v_lshlrev_b32 v30, 2, v0
  v_add_nc_u32 v32, 7, v0
  flat_store_b32 v[30:31], v32
  s_waitcnt vmcnt(0) lgkmcnt(0)
  ds_load_b32 v10, v30
  v_mov_b32 v34, s7
  v_add_co_u32 v33, vcc_lo, s6, v100
  v_add_co_ci_u32_e32 v34, vcc_lo, 0, v34, vcc_lo
  flat_load_b32 v11, v[33:34]
  s_waitcnt vmcnt(0) lgkmcnt(0)
"""


# gfx12's scalar byte and short loads, zero- or sign-extended (inp's bytes 0x10 0x20 0x40 0x80 ...).
SCALAR_SMALL = """
  s_load_u8 s10, s[6:7], 0x3
  s_load_i8 s11, s[6:7], 0x3
  s_load_u16 s12, s[6:7], 0x2
  s_load_i16 s13, s[6:7], 0x2
  s_mov_b32 s20, 6
  s_load_u16 s14, s[6:7], s20 offset:0x0
  s_wait_kmcnt 0x0
  v_mov_b32 v10, s10
  v_mov_b32 v11, s11
  v_mov_b32 v12, s12
  v_mov_b32 v13, s13
  v_mov_b32 v14, s14
"""


class MemoryTest(emutest.EmuTest):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.co = asm.assemble("gfx1100", {
            "global_": (GLOBAL, [11, 12, 13, 14, 15, 16, 17, 20, 21, 22, 23, 18, 19]),
            "lds": (LDS, [10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21], {"lds": 4096}),
            "atomics": (ATOMICS, [10, 11, 12, 13]),
            "scratch": (SCRATCH, [10, 11], {"scratch": 64}),
            "buffer": (BUFFER, [10, 11]),
            "flat": (FLAT, [10, 11], {"lds": 512}),
        })

    def run_kernel(self, name, n):
        return emutest.run_asm("gfx1100", self.co, name, n, inp=INP).astype(np.uint64)

    def test_global_loads(self):
        out = self.run_kernel("global_", 13)
        o = 4 * L
        u8 = B[o + 1].astype(np.uint64)
        i8 = B[o + 3].astype(np.int8).astype(np.int64).astype(np.uint32)
        u16 = word(o + 2) & 0xFFFF
        i16 = (word(o + 2) & 0xFFFF).astype(np.uint16).view(np.int16).astype(np.int64).astype(np.uint32)
        w = word(o)
        exp = [u8, i8, u16, i16, w, word(o + 256), word(o + 260), word(o + 512), word(o + 516), word(o + 520),
               word(o + 524), (w & 0xFFFF) << 16 | 0xAAAA, 0x55550000 | (w & 0xFFFF)]
        for i, e in enumerate(exp):
            np.testing.assert_array_equal(out[i], np.asarray(e, np.uint64), err_msg="result %d" % i)

    def test_lds(self):
        out = self.run_kernel("lds", 11)
        rev = 31 - L
        np.testing.assert_array_equal(out[0], rev)
        np.testing.assert_array_equal(out[1], rev + 1000)
        np.testing.assert_array_equal(out[2], rev + 2000)
        np.testing.assert_array_equal(out[3], rev + 3000)
        np.testing.assert_array_equal(out[4], L + 2000)              # offset:8 is the third dword
        np.testing.assert_array_equal(out[5], L + 1000)              # offset0:1 (x4 bytes)
        # offset1:6 dwords = byte 24 = the next lane's third dword (lane 31 reads past its row: 0)
        np.testing.assert_array_equal(out[6][:31], L[1:] + 2000)
        # d16_hi writes the high half only: the low half stays 0xaaaa
        np.testing.assert_array_equal(out[7], ((L + 1000) & 0xFFFF) << 16 | 0xAAAA)
        np.testing.assert_array_equal(out[8], L)
        # every lane added 1 at one address: the old values are 0..31 once each
        np.testing.assert_array_equal(np.sort(out[9]), L)
        np.testing.assert_array_equal(out[10], 32)

    def test_atomics(self):
        out = self.run_kernel("atomics", 4)
        np.testing.assert_array_equal(np.sort(out[0]), L)
        np.testing.assert_array_equal(out[1], 32)
        self.assertEqual(sorted(out[2].tolist()).count(0), 1)     # exactly one lane saw 0 and swapped
        np.testing.assert_array_equal(out[3], 0x77)

    def test_scratch_is_per_lane(self):
        out = self.run_kernel("scratch", 2)
        np.testing.assert_array_equal(out[0], L + 500)
        np.testing.assert_array_equal(out[1], L)

    def test_raw_buffer_range_check(self):
        out = self.run_kernel("buffer", 2)
        o = 4 * L
        np.testing.assert_array_equal(out[0], np.where(o < 64, word(o), 0))
        # soffset 4 and offset 8 add to the address; the range check sees offset + voffset
        np.testing.assert_array_equal(out[1], np.where(o + 8 < 64, word(o + 12), 0))

    def test_gfx12_scalar_byte_and_short_loads(self):
        co = asm.assemble("gfx1201", {"scalar_small": (SCALAR_SMALL, [10, 11, 12, 13, 14])})
        out = emutest.run_asm("gfx1201", co, "scalar_small", 5, inp=INP)[:, 0].astype(np.int64)
        short = int.from_bytes(B[2:4].tobytes(), "little")
        self.assertEqual(out.tolist(), [B[3], (int(B[3]) - 256) & 0xFFFFFFFF, short,
                                        (short - 65536 if short >= 32768 else short) & 0xFFFFFFFF,
                                        int.from_bytes(B[6:8].tobytes(), "little")])

    def test_flat_through_apertures(self):
        out = self.run_kernel("flat", 2)
        np.testing.assert_array_equal(out[0], L + 7)
        np.testing.assert_array_equal(out[1], word(4 * L))


if __name__ == "__main__":
    emutest.main()
