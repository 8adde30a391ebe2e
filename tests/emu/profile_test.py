"""hk.emu.profile on code written by hand: each wave's instruction stream, the LDS cycles of each
LDS instruction with its bank conflicts (consecutive words, one bank for every lane, a broadcast,
16-byte lanes in groups), and the global lines a workgroup reads and writes."""

import numpy as np

import hk.emu
from tests.emu import asm, emutest

# v100 = 4 * lane; each snippet reads LDS at an address derived from it.
LDS = {
    "consecutive": "  ds_load_b32 v10, v100\n",                        # lane l: word l
    "one_bank": "  v_lshlrev_b32 v1, 7, v0\n  ds_load_b32 v10, v1\n",   # lane l: byte 128 l, bank 0
    "broadcast": "  v_mov_b32 v1, 0\n  ds_load_b32 v10, v1\n",          # every lane word 0
    "wide": "  v_lshlrev_b32 v1, 4, v0\n  ds_load_b128 v[10:13], v1\n",  # lane l: words 4l..4l+3
}
GFX9 = {"consecutive": "  ds_read_b32 v10, v100\n"}

# Each iteration reads the next 128 bytes of `inp` (one line per wave of 32 lanes).
STREAM = """
  s_mov_b32 s21, 0
  s_movk_i32 s20, 64
.Lstream:
  v_add_nc_u32 v1, s21, v100
  global_load_b32 v10, v1, s[6:7]
  s_waitcnt vmcnt(0)
  s_add_u32 s21, s21, 128
  s_sub_u32 s20, s20, 1
  s_cmp_lg_u32 s20, 0
  s_cbranch_scc1 .Lstream
"""


class ProfileTest(emutest.EmuTest):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        body = "%s  s_waitcnt lgkmcnt(0)\n"
        cls.rdna = asm.assemble("gfx1100", {k: (body % v, [10], {"lds": 8192}) for k, v in LDS.items()})
        cls.cdna = asm.assemble("gfx950", {k: (body % v, [10], {"lds": 8192}) for k, v in GFX9.items()})
        cls.stream = asm.assemble("gfx1100", {"stream": (STREAM, [10], {"block": 32})})

    def lds(self, co, name, wave):
        p = hk.emu.profile(co, name, (1,), (wave,), [np.zeros(wave, np.uint32), np.zeros(1024, np.uint32)])
        (inst,) = p.lds()
        self.assertEqual(inst.executions, 1)
        return inst

    def test_bank_conflicts_per_lds_instruction(self):
        # gfx1100: 32 banks of 4 bytes, so 32 lanes of 4 bytes are served together.
        cases = {"consecutive": (128, 1, 1), "one_bank": (128, 32, 1), "broadcast": (128, 1, 1),
                 "wide": (512, 4, 4)}
        for name, (moved, cycles, ideal) in cases.items():
            inst = self.lds(self.rdna, name, 32)
            self.assertEqual((inst.bytes, inst.cycles, inst.ideal), (moved, cycles, ideal), name)
            self.assertEqual(inst.conflict_cycles, cycles - ideal)
            self.assertIn("ds_load", inst.text)

    def test_gfx950_has_64_banks(self):
        inst = self.lds(self.cdna, "consecutive", 64)
        self.assertEqual((inst.bytes, inst.cycles, inst.ideal), (256, 1, 1))
        p = hk.emu.profile(self.cdna, "consecutive", (1,), (64,), [np.zeros(64, np.uint32), np.zeros(1024, np.uint32)],
                           lds_banks=32)
        self.assertEqual(p.lds()[0].cycles, 2)     # the same lanes over 32 banks: two groups

    def test_streams_and_global_lines(self):
        out, inp = np.zeros(64, np.uint32), np.zeros(1024, np.uint32)
        p = hk.emu.profile(self.rdna, "consecutive", (2,), (64,), [out, inp], workgroups=[(1, 0, 0)])
        self.assertEqual(p.workgroups, [(1, 0, 0)])
        (waves,) = p.streams
        self.assertEqual(len(waves), 2)
        for s in waves:
            ops = [p.listing[i][2] for i in s[:, 0]]
            self.assertEqual(ops[-1], "s_endpgm")
            self.assertIn("ds_load_b32", ops)
        self.assertEqual(sum(len(w) for w in waves), p.executed)
        read, written = p.lines[0]
        # The frame's store of v10: 64 lanes x 4 bytes of `out`, two 128-byte lines.
        self.assertEqual(len(written), 2)
        self.assertEqual(len(read), 0)
        self.assertTrue((np.diff(written.astype(np.int64)) > 0).all())

    def test_a_prefix_leaves_each_workgroup_early(self):
        args = lambda: [np.zeros(32, np.uint32), np.zeros(64 * 32, np.uint32)]
        groups = [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
        whole = hk.emu.profile(self.stream, "stream", (3,), (32,), args(), workgroups=groups)
        for read, _ in whole.lines:
            self.assertEqual(len(read), 64)              # 64 iterations, a line each
        begun = hk.emu.profile(self.stream, "stream", (3,), (32,), args(), workgroups=groups, prefix=60)
        self.assertLessEqual(begun.executed, 3 * (60 + 8))
        for (read, written), (all_read, _), waves in zip(begun.lines, whole.lines, begun.streams):
            self.assertTrue(5 <= len(read) <= 12, len(read))
            np.testing.assert_array_equal(read, all_read[:len(read)])   # the first lines, in order
            self.assertEqual(len(written), 0)            # left before its store
            self.assertLess(len(waves[0]), 70)
        # A prefix longer than the run runs it whole.
        mixed = hk.emu.profile(self.stream, "stream", (3,), (32,), args(), workgroups=groups, prefix=100000)
        self.assertEqual([len(r) for r, _ in mixed.lines], [64, 64, 64])


if __name__ == "__main__":
    emutest.main()
