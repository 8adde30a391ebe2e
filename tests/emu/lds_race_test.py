"""The emulator's LDS race check on code written by hand: two waves of one workgroup, each form of
race (a read of the other wave's store, a write over the other wave's read, two waves' writes to
one word, a plain read of another wave's atomic update, a read of the other wave's global->LDS
copy) raises HazardError naming both instructions; the twin with the barrier computes the answer.
Atomics of different waves do not race with each other, nor do stores of the same values."""

import numpy as np

import hk.emu
from tests.emu import asm, emutest

# v100 = 4 * work-item id; wave 0 owns LDS words 0-31 (bytes 0-127), wave 1 words 32-63.
WAVE1_ONLY = """
  v_cmp_le_u32 vcc_lo, 32, v0
  s_and_saveexec_b32 s20, vcc_lo
"""
ALL_LANES = "  s_or_b32 exec_lo, exec_lo, s20\n"

RDNA = {
    # Each wave stores its words, then reads the other wave's.
    "read_after_write": """
  ds_store_b32 v100, v0
  s_waitcnt lgkmcnt(0)
%s
  v_xor_b32 v1, 0x80, v100
  ds_load_b32 v10, v1
  s_waitcnt lgkmcnt(0)
""",
    # Both waves read wave 1's words, then wave 1 writes them.
    "write_after_read": """
  v_or_b32 v1, 0x80, v100
  ds_load_b32 v10, v1
  s_waitcnt lgkmcnt(0)
%s
""" + WAVE1_ONLY + """
  ds_store_b32 v100, v0
  s_waitcnt lgkmcnt(0)
""" + ALL_LANES,
    # Wave 0 stores words that wave 1 then stores over; both read them after a barrier.
    "write_after_write": """
  v_and_b32 v1, 0x7f, v100
  v_cmp_gt_u32 vcc_lo, 32, v0
  s_and_saveexec_b32 s20, vcc_lo
  ds_store_b32 v1, v0
  s_waitcnt lgkmcnt(0)
""" + ALL_LANES + """
%s
""" + WAVE1_ONLY + """
  ds_store_b32 v1, v0
  s_waitcnt lgkmcnt(0)
""" + ALL_LANES + """
  s_barrier
  ds_load_b32 v10, v1
  s_waitcnt lgkmcnt(0)
""",
    # Both waves store the same values into the same words (as warps holding copies do).
    "same_values": """
  v_and_b32 v1, 0x7f, v100
  v_and_b32 v2, 31, v0
  ds_store_b32 v1, v2
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_load_b32 v10, v1
  s_waitcnt lgkmcnt(0)
%s
""",
    # Both waves add to the same words; then wave 1 reads them.
    "atomic_then_read": """
  v_and_b32 v1, 0x7f, v100
  ds_add_u32 v1, v0
  s_waitcnt lgkmcnt(0)
%s
  v_mov_b32 v10, 0
""" + WAVE1_ONLY + """
  ds_load_b32 v10, v1
  s_waitcnt lgkmcnt(0)
""" + ALL_LANES,
}

# Each wave copies 64 words into its own 256 bytes (M0 = 256 * wave), then both read wave 0's.
DMA = """
  s_mov_b32 s8, s6
  s_and_b32 s9, s7, 0xffff
  s_mov_b32 s10, 4096
  s_mov_b32 s11, 0x20000
  v_lshrrev_b32 v1, 6, v0
  v_readfirstlane_b32 s12, v1
  s_lshl_b32 s12, s12, 8
  s_mov_b32 m0, s12
  v_and_b32 v2, 63, v0
  v_lshlrev_b32 v2, 2, v2
  buffer_load_dword v2, s[8:11], 0 offen lds
  s_waitcnt vmcnt(0)
%s
  ds_read_b32 v10, v2
  s_waitcnt lgkmcnt(0)
"""


class LdsRaceTest(emutest.EmuTest):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        kernels = {}
        for name, body in RDNA.items():
            kernels[name] = (body % "", [10], {"lds": 256, "block": 64})
            kernels[name + "_barrier"] = (body % "  s_barrier", [10], {"lds": 256, "block": 64})
        cls.rdna = asm.assemble("gfx1100", kernels)
        cls.cdna = asm.assemble("gfx950", {"dma": (DMA % "", [10], {"lds": 512, "block": 128}),
                                           "dma_barrier": (DMA % "  s_barrier", [10], {"lds": 512, "block": 128})})

    def run_rdna(self, name, **kw):
        out = np.zeros(64, np.uint32)
        hk.emu.launch(self.rdna, name, grid=(1,), block=(64,), args=[out, np.zeros(64, np.uint32)], **kw)
        return out

    def assertRace(self, co, name, block, *words):
        out = np.zeros(block, np.uint32)
        with self.assertRaises(hk.emu.HazardError) as cm:
            hk.emu.launch(co, name, grid=(1,), block=(block,), args=[out, np.arange(1024, dtype=np.uint32)])
        msg = str(cm.exception)
        self.assertIn("kernel " + name, msg)
        self.assertIn("an LDS race", msg)
        for w in words:
            self.assertIn(w, msg)
        return msg

    def test_read_of_the_other_waves_store(self):
        # wave 0 runs first: it reads words wave 1 has not stored yet, and wave 1's store then
        # writes over that read.
        self.assertRace(self.rdna, "read_after_write", 64, "ds_store_b32", "ds_load_b32", "wave 0 read")
        lanes = np.arange(64, dtype=np.uint32)
        np.testing.assert_array_equal(self.run_rdna("read_after_write_barrier"), lanes ^ 32)

    def test_write_over_the_other_waves_read(self):
        self.assertRace(self.rdna, "write_after_read", 64, "writes over", "wave 0 read")
        out = self.run_rdna("write_after_read_barrier")
        np.testing.assert_array_equal(out, np.zeros(64))   # both read before wave 1's store

    def test_two_waves_writing_one_word(self):
        self.assertRace(self.rdna, "write_after_write", 64, "writes over", "wave 0 wrote")
        out = self.run_rdna("write_after_write_barrier")
        np.testing.assert_array_equal(out, np.arange(64) % 32 + 32)   # wave 1 stored last

    def test_two_waves_storing_the_same_values(self):
        np.testing.assert_array_equal(self.run_rdna("same_values"), np.arange(64) % 32)

    def test_atomics_do_not_race_but_a_plain_read_of_them_does(self):
        self.assertRace(self.rdna, "atomic_then_read", 64, "updated atomically")
        out = self.run_rdna("atomic_then_read_barrier")
        lanes = np.arange(32)
        np.testing.assert_array_equal(out[32:], 2 * lanes + 32)   # l + (l + 32) in every word
        np.testing.assert_array_equal(out[:32], 0)

    def test_a_copy_lands_for_its_wave_only_at_its_wait(self):
        msg = self.assertRace(self.cdna, "dma", 128, "ds_read_b32", "buffer_load_dword", "wave 0 wrote")
        self.assertIn("wave 1", msg)
        inp = np.arange(1024, dtype=np.uint32) * 5
        out = np.zeros(128, np.uint32)
        hk.emu.launch(self.cdna, "dma_barrier", grid=(1,), block=(128,), args=[out, inp])
        np.testing.assert_array_equal(out, np.tile(inp[:64], 2))

    def test_random_orders_find_the_same_races_and_pass_the_twins(self):
        for seed in range(6):
            for name in RDNA:
                if name == "same_values":
                    self.run_rdna(name, random_order_seed=seed)
                    continue
                with self.assertRaises(hk.emu.HazardError):
                    self.run_rdna(name, random_order_seed=seed)
                self.run_rdna(name + "_barrier", random_order_seed=seed)

    def test_the_check_is_part_of_the_hazard_model(self):
        self.run_rdna("read_after_write", hazards=False)


if __name__ == "__main__":
    emutest.main()
