"""The hazard detector: each hazard class, written in assembly with a wait deliberately left out,
must raise HazardError naming the kernel, the instruction's address and the register; the same
kernel with its wait must pass. The randomised legal order must expose what a fixed order hides
(SMEM returning out of order, a store racing a barrier) and never fault correct code. An LDS store
still outstanding at a barrier is no hazard: the LDS performs all waves' operations in one order,
so it precedes every LDS access issued after the barrier (LLVM waits on lgkmcnt before a barrier
only to order global memory too)."""

import re

import numpy as np

import hk.emu
from tests.emu import asm, emutest

KERNELS = {
    "missing_vmcnt": ("""
  global_load_b32 v1, v100, s[6:7]
  v_add_nc_u32 v10, v1, 1
""", [10]),
    "with_vmcnt": ("""
  global_load_b32 v1, v100, s[6:7]
  s_waitcnt vmcnt(0)
  v_add_nc_u32 v10, v1, 1
""", [10]),
    "missing_lgkm_lds": ("""
  ds_store_b32 v100, v0
  s_waitcnt lgkmcnt(0)
  ds_load_b32 v1, v100
  v_mov_b32 v10, v1
""", [10], {"lds": 256}),
    "missing_lgkm_smem": ("""
  s_load_b32 s10, s[6:7], null
  v_mov_b32 v10, s10
""", [10]),
    "barrier_lds_write": ("""
  ds_store_b32 v100, v0
  s_barrier
  s_waitcnt lgkmcnt(0)
""", [0], {"lds": 256}),
    "overwrite_pending": ("""
  global_load_b32 v1, v100, s[6:7]
  v_mov_b32 v1, 0
  s_waitcnt vmcnt(0)
""", [1]),
    # Loads on one in-order counter land in issue order: the second half of a d16 pair may be
    # issued while the first is in flight (clang emits exactly this).
    "d16_halves_in_order": ("""
  global_load_d16_b16 v10, v100, s[6:7] offset:4
  global_load_d16_hi_b16 v10, v100, s[6:7] offset:8
  s_waitcnt vmcnt(0)
""", [10]),
    # ...but not over a register an LDS load (another counter) is still writing.
    "d16_over_lds_load": ("""
  ds_load_b32 v10, v100
  global_load_d16_hi_b16 v10, v100, s[6:7] offset:8
  s_waitcnt vmcnt(0) lgkmcnt(0)
""", [10], {"lds": 256}),
    "smem_out_of_order": ("""
  s_load_b32 s10, s[6:7], null
  s_load_b32 s11, s[6:7], 0x4
  s_waitcnt lgkmcnt(1)
  v_mov_b32 v10, s10
  s_waitcnt lgkmcnt(0)
""", [10]),
    "lds_in_order": ("""
  ds_load_b32 v1, v100
  ds_load_b32 v2, v100 offset:4
  s_waitcnt lgkmcnt(1)
  v_mov_b32 v10, v1
  s_waitcnt lgkmcnt(0)
""", [10], {"lds": 256}),
}

# Two waves of 32 on gfx1100: thread t stores at LDS 4 t (stage 0) and 256 + 4 t (stage 1), so
# each wave's bytes are its own 128; v2 addresses the other wave's. Triton's loops on gfx11 do
# this: store a tile, barrier (no wait on lgkmcnt before it), read the other waves' parts.
STORE_READ_OTHER = """
  v_add_nc_u32 v1, 1, v0
  ds_store_b32 v100, v1
  s_barrier
  v_xor_b32 v2, 0x80, v100
  ds_load_b32 v10, v2
  s_waitcnt lgkmcnt(0)
"""
# A pipelined loop's order: stage 1's store is in flight across a barrier while the waves read
# stage 0 and the writer its own stage-1 bytes; the other wave reads stage 1 after a barrier.
STORE_NEXT_STAGE = """
  v_add_nc_u32 v1, 1, v0
  ds_store_b32 v100, v1
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_add_nc_u32 v3, 100, v0
  ds_store_b32 v100, v3 offset:256
  s_barrier
  v_xor_b32 v2, 0x80, v100
  ds_load_b32 v10, v2
  ds_load_b32 v13, v100 offset:256
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_load_b32 v11, v2 offset:256
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v11, 8, v11
  v_lshlrev_b32 v13, 16, v13
  v_or3_b32 v12, v10, v11, v13
"""

RACE = """
  v_cmp_gt_u32 vcc_lo, 32, v0
  s_and_saveexec_b32 s20, vcc_lo
  v_add_nc_u32 v1, 1, v0
  global_store_b32 v100, v1, s[6:7] offset:256
  s_or_b32 exec_lo, exec_lo, s20
%s
  s_barrier
  v_cmp_le_u32 vcc_lo, 32, v0
  s_and_saveexec_b32 s20, vcc_lo
  v_subrev_nc_u32 v2, 128, v100
  global_load_b32 v10, v2, s[6:7] offset:256
  s_waitcnt vmcnt(0)
  s_or_b32 exec_lo, exec_lo, s20
"""


class HazardTest(emutest.EmuTest):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        kernels = dict(KERNELS)
        kernels["race"] = (RACE % "", [10], {"block": 64})
        kernels["race_waited"] = (RACE % "  s_waitcnt_vscnt null, 0x0", [10], {"block": 64})
        kernels["store_read_other"] = (STORE_READ_OTHER, [10], {"lds": 512, "block": 64})
        kernels["store_read_other_unordered"] = (STORE_READ_OTHER.replace("  s_barrier\n", ""), [10],
                                                 {"lds": 512, "block": 64})
        kernels["store_next_stage"] = (STORE_NEXT_STAGE, [12], {"lds": 512, "block": 64})
        cls.co = asm.assemble("gfx1100", kernels)

    def launch(self, name, block=32, **kw):
        out = np.zeros(64, np.uint32)
        inp = np.arange(1024, dtype=np.uint32)
        inp[64:] = 0
        hk.emu.launch(self.co, name, grid=(1,), block=(block,), args=[out, inp], **kw)
        return out

    def assertHazard(self, name, *words, **kw):
        with self.assertRaises(hk.emu.HazardError) as cm:
            self.launch(name, **kw)
        msg = str(cm.exception)
        self.assertIn("kernel " + name, msg)
        self.assertRegex(msg, r"pc 0x[0-9a-f]+ \(")
        for w in words:
            self.assertIn(w, msg)
        return msg

    def test_vgpr_read_before_vmcnt(self):
        msg = self.assertHazard("missing_vmcnt", "v1", "vmcnt", "v_add_nc_u32", "global_load_b32")
        self.assertTrue(re.search(r"load into it at pc 0x[0-9a-f]+", msg))
        np.testing.assert_array_equal(self.launch("with_vmcnt")[:32], np.arange(32) + 1)
        self.launch("missing_vmcnt", hazards=False)          # the check can be switched off

    def test_lds_read_before_lgkmcnt(self):
        self.assertHazard("missing_lgkm_lds", "v1", "lgkmcnt", "ds_load_b32")

    def test_sgpr_read_before_lgkmcnt(self):
        self.assertHazard("missing_lgkm_smem", "s10", "lgkmcnt", "s_load_b32")

    def test_lds_write_outstanding_at_a_barrier(self):
        # The last wave at the barrier reads the first's bytes before the first waits: the LDS
        # performed the store first, in fixed and random orders (where the store's effect would
        # otherwise land at the writer's wait, after the read).
        t = np.arange(64)
        np.testing.assert_array_equal(self.launch("store_read_other", block=64), (t ^ 32) + 1)
        for seed in range(12):
            np.testing.assert_array_equal(self.launch("store_read_other", block=64, random_order_seed=seed),
                                          (t ^ 32) + 1)
        # Alone in its workgroup, a wave's store in flight at a barrier is as harmless.
        self.launch("barrier_lds_write")
        # Without the barrier the read races the other wave's store.
        self.assertHazard("store_read_other_unordered", "ds_load_b32", "ds_store_b32", block=64)

    def test_lds_write_in_flight_across_a_barrier(self):
        t = np.arange(64)
        want = ((t ^ 32) + 1) | ((t ^ 32) + 100) << 8 | (t + 100) << 16
        np.testing.assert_array_equal(self.launch("store_next_stage", block=64), want)
        for seed in range(8):
            np.testing.assert_array_equal(self.launch("store_next_stage", block=64, random_order_seed=seed), want)

    def test_overwriting_a_pending_load(self):
        self.assertHazard("overwrite_pending", "v1", "vmcnt")

    def test_d16_halves_on_one_counter_are_ordered(self):
        out = self.launch("d16_halves_in_order")
        # inp = 0, 1, 2, ... and v100 = 4 * lane: lane l takes its low half from word l + 1
        # and its high half from word l + 2.
        lanes = np.arange(32, dtype=np.uint32)
        np.testing.assert_array_equal(out[:32], (lanes + 1) | ((lanes + 2) << 16))
        for seed in range(8):
            self.launch("d16_halves_in_order", random_order_seed=seed)

    def test_d16_over_another_counters_load(self):
        self.assertHazard("d16_over_lds_load", "v10", "lgkmcnt", "ds_load_b32")

    def test_smem_may_return_out_of_order(self):
        self.launch("smem_out_of_order")                    # a fixed order hides it
        caught = 0
        for seed in range(24):
            try:
                self.launch("smem_out_of_order", random_order_seed=seed)
            except hk.emu.HazardError as e:
                self.assertIn("s10", str(e))
                caught += 1
        self.assertGreater(caught, 0)

    def test_lds_returns_in_order(self):
        for seed in range(24):
            self.launch("lds_in_order", random_order_seed=seed)

    def test_random_order_exposes_a_store_racing_a_barrier(self):
        expect = np.arange(32) + 1
        np.testing.assert_array_equal(self.launch("race", block=64)[32:], expect)
        stale = 0
        for seed in range(16):
            out = self.launch("race", block=64, random_order_seed=seed)
            stale += not np.array_equal(out[32:], expect)
            np.testing.assert_array_equal(self.launch("race_waited", block=64, random_order_seed=seed)[32:], expect)
        self.assertGreater(stale, 0)

    def test_gfx1201_loadcnt(self):
        body = """
  global_load_b32 v1, v100, s[6:7]
  global_load_b32 v2, v100, s[6:7] offset:128
  s_wait_loadcnt 0x1
  v_mov_b32 v10, v1
  v_mov_b32 v11, v2
  s_wait_loadcnt 0x0
"""
        co = asm.assemble("gfx1201", {"loadcnt": (body, [10, 11])})
        with self.assertRaises(hk.emu.HazardError) as cm:
            emutest.run_asm("gfx1201", co, "loadcnt", 2)
        self.assertIn("v2", str(cm.exception))
        self.assertIn("loadcnt", str(cm.exception))
        self.assertIn("v11, v2", str(cm.exception))

    def test_gfx950_load_to_lds_before_barrier(self):
        # the CDNA4 trap: a global->LDS copy counts on vmcnt, so a barrier right after it races
        body = """
  s_mov_b32 s8, s6
  s_and_b32 s9, s7, 0xffff
  s_mov_b32 s10, 4096
  s_mov_b32 s11, 0x20000
  s_mov_b32 m0, 0
  buffer_load_dword v100, s[8:11], 0 offen lds
%s
  s_barrier
  ds_read_b32 v10, v100
  s_waitcnt lgkmcnt(0)
"""
        co = asm.assemble("gfx950", {"racy": (body % "", [10], {"lds": 256}),
                                     "waited": (body % "  s_waitcnt vmcnt(0)", [10], {"lds": 256})})
        with self.assertRaises(hk.emu.HazardError) as cm:
            emutest.run_asm("gfx950", co, "racy", 1)
        self.assertIn("buffer_load_dword", str(cm.exception))
        inp = np.arange(1024, dtype=np.uint32) * 3
        out = emutest.run_asm("gfx950", co, "waited", 1, inp=inp)
        np.testing.assert_array_equal(out[0], inp[:64])

    def test_gfx950_pipelined_copies_across_a_barrier(self):
        # Each wave copies 256 bytes into its stage-0 region (M0 = 512 w) and its stage-1 region
        # (M0 = 512 w + 256), waits for the older copy only (vmcnt(1)), meets the other wave at a
        # barrier and reads the other wave's stage-0 region: a pipelined loop keeps the newer
        # copy in flight across the barrier on purpose. Reading stage 1 instead races it.
        body = """
  s_mov_b32 s8, s6
  s_and_b32 s9, s7, 0xffff
  s_mov_b32 s10, 4096
  s_mov_b32 s11, 0x20000
  v_lshrrev_b32 v1, 6, v0
  v_readfirstlane_b32 s12, v1
  s_lshl_b32 s12, s12, 9
  s_mov_b32 m0, s12
  v_and_b32 v2, 63, v0
  v_lshlrev_b32 v2, 2, v2
  buffer_load_dword v2, s[8:11], 0 offen lds
  s_add_u32 m0, s12, 256
  v_add_u32 v4, 256, v2
  buffer_load_dword v4, s[8:11], 0 offen lds
  s_waitcnt vmcnt(%d)
  s_barrier
  s_xor_b32 s13, s12, 0x200
  v_add_u32 v3, s13, v2
  ds_read_b32 v10, v3 offset:%d
  s_waitcnt vmcnt(0) lgkmcnt(0)
"""
        co = asm.assemble("gfx950", {
            "pipelined": (body % (1, 0), [10], {"lds": 1024, "block": 128}),
            "races_stage1": (body % (1, 256), [10], {"lds": 1024, "block": 128}),
            "waited": (body % (0, 256), [10], {"lds": 1024, "block": 128}),
        })
        inp = np.arange(1024, dtype=np.uint32) * 7
        for name, offset in (("pipelined", 0), ("waited", 256)):
            out = np.zeros(128, np.uint32)
            hk.emu.launch(co, name, grid=(1,), block=(128,), args=[out, inp])
            lane = np.arange(64)
            # the frame stores lane l of wave 1 over lane l + 64 of wave 0's slot: check wave 0
            np.testing.assert_array_equal(out[:64], inp[offset // 4 + lane])
            for seed in range(6):
                hk.emu.launch(co, name, grid=(1,), block=(128,), args=[out, inp], random_order_seed=seed)
        with self.assertRaises(hk.emu.HazardError) as cm:
            hk.emu.launch(co, "races_stage1", grid=(1,), block=(128,), args=[np.zeros(128, np.uint32), inp])
        msg = str(cm.exception)
        self.assertIn("ds_read_b32", msg)
        self.assertIn("buffer_load_dword v4, s[8:11], 0 offen lds", msg)
        # the last wave at the barrier goes on first and reads what wave 0's copy still writes
        self.assertIn("wave 1: touches LDS bytes 256-259", msg)
        self.assertIn("of wave 0 is still writing", msg)
        self.assertIn("then meet this one at a barrier", msg)

    def test_a_full_counter_stalls_the_issue(self):
        # lgkmcnt is 4 bits on gfx9: the 16th LDS op in flight waits for the first at issue, so
        # the first's result needs no wait (clang relies on it); the second's does. gfx11's
        # lgkmcnt counts to 63, where the first of 16 is still in flight.
        swizzles = "".join("  ds_swizzle_b32 v%d, v0 offset:swizzle(SWAP,8)\n" % (10 + k) for k in range(16))
        reads = lambda reg: swizzles + "  v_mov_b32 v30, v%d\n  s_waitcnt lgkmcnt(0)\n" % reg
        co9 = asm.assemble("gfx942", {"first": (reads(10), [30]), "second": (reads(11), [30])})
        lane = np.arange(64)
        for seed in (None, 1, 2, 3):
            out = emutest.run_asm("gfx942", co9, "first", 1, random_order_seed=seed)
            np.testing.assert_array_equal(out[0], lane ^ 8)               # SWAP,8 exchanges lanes l, l ^ 8
        with self.assertRaises(hk.emu.HazardError) as cm:
            emutest.run_asm("gfx942", co9, "second", 1)
        self.assertIn("v11", str(cm.exception))
        co11 = asm.assemble("gfx1100", {"first": (reads(10), [30])})
        with self.assertRaises(hk.emu.HazardError) as cm:
            emutest.run_asm("gfx1100", co11, "first", 1)
        self.assertIn("v10", str(cm.exception))

    def test_gfx9_stores_count_on_vmcnt(self):
        # gfx9: a store issued after a load is younger on the one counter, so vmcnt(1) leaves
        # only the store in flight and the load's register is ready; gfx11 counts the store on
        # vscnt, where vmcnt(1) does not wait for the load.
        body9 = """
  global_load_dword v1, v100, s[6:7]
  global_store_dword v100, v0, s[6:7] offset:2048
  s_waitcnt vmcnt(1)
  v_add_u32 v10, v1, 1
  s_waitcnt vmcnt(0)
"""
        co9 = asm.assemble("gfx942", {"k": (body9, [10])})
        inp = np.arange(1024, dtype=np.uint32)
        out = emutest.run_asm("gfx942", co9, "k", 1, inp=inp)
        np.testing.assert_array_equal(out[0], inp[:64] + 1)
        body11 = body9.replace("dword", "b32").replace("v_add_u32", "v_add_nc_u32")
        co11 = asm.assemble("gfx1100", {"k": (body11, [10])})
        with self.assertRaises(hk.emu.HazardError) as cm:
            emutest.run_asm("gfx1100", co11, "k", 1, inp=inp)
        self.assertIn("v1", str(cm.exception))


if __name__ == "__main__":
    emutest.main()
