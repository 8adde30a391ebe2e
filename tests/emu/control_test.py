"""Known answers for program control: loops and conditional branches, s_getpc/s_setpc/s_swappc
calls, skipping with s_cbranch_execz, barriers between the waves of a workgroup (gfx11 s_barrier,
gfx12 s_barrier_signal/s_barrier_wait, gfx9 wave64), and the work-item and workgroup ids waves
start with."""

import numpy as np

import hk.emu
from tests.emu import asm, emutest

LOOP = """
  s_mov_b32 s10, 0
  s_mov_b32 s11, 0
.Lloop:
  s_add_u32 s11, s11, s10
  s_add_u32 s10, s10, 1
  s_cmp_lt_u32 s10, 10
  s_cbranch_scc1 .Lloop
  v_mov_b32 v10, s11
  v_mov_b32 v11, 0
  v_cmp_gt_u32 vcc_lo, 8, v0
  s_and_saveexec_b32 s12, vcc_lo
  s_cbranch_execz .Lskip
  v_mov_b32 v11, 1
.Lskip:
  s_or_b32 exec_lo, exec_lo, s12
  s_mov_b32 s13, exec_lo
  s_mov_b32 exec_lo, 0
  s_cbranch_execz .Lempty
  s_mov_b32 s13, 0
.Lempty:
  s_mov_b32 exec_lo, s13
  v_mov_b32 v12, 0
  s_getpc_b64 s[20:21]
.Lpc:
  s_add_u32 s20, s20, .Lsub-.Lpc
  s_addc_u32 s21, s21, 0
  s_swappc_b64 s[30:31], s[20:21]
  v_add_nc_u32 v12, 100, v12
  s_branch .Ldone
.Lsub:
  v_add_nc_u32 v12, v12, v0
  s_setpc_b64 s[30:31]
.Ldone:
"""

# Four waves: each writes its lane ids + 1000*wave to LDS, meets the others at a barrier and
# reads the next wave's slot.
BARRIER11 = """
  v_lshlrev_b32 v30, 2, v0
  v_add_nc_u32 v31, 1000, v0
  ds_store_b32 v30, v31
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_add_nc_u32 v32, 128, v30
  v_and_b32 v32, 0x1ff, v32
  ds_load_b32 v10, v32
  s_waitcnt lgkmcnt(0)
"""
BARRIER12 = """
  v_lshlrev_b32 v30, 2, v0
  v_add_nc_u32 v31, 1000, v0
  ds_store_b32 v30, v31
  s_wait_dscnt 0x0
  s_barrier_signal -1
  s_barrier_wait -1
  v_add_nc_u32 v32, 128, v30
  v_and_b32 v32, 0x1ff, v32
  ds_load_b32 v10, v32
  s_wait_dscnt 0x0
"""
BARRIER9 = """
  v_lshlrev_b32 v30, 2, v0
  v_add_u32 v31, 1000, v0
  ds_write_b32 v30, v31
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_add_u32 v32, 256, v30
  v_and_b32 v32, 0x3ff, v32
  ds_read_b32 v10, v32
  s_waitcnt lgkmcnt(0)
"""

IDS = """
  v_mov_b32 v10, v0
  v_mov_b32 v11, s8
  v_mov_b32 v12, s9
  v_mov_b32 v13, s10
"""


class ControlTest(emutest.EmuTest):

    def test_branches_calls_and_exec_skips(self):
        co = asm.assemble("gfx1100", {"flow": (LOOP, [10, 11, 12])})
        out = emutest.run_asm("gfx1100", co, "flow", 3)
        lanes = np.arange(32)
        np.testing.assert_array_equal(out[0], 45)
        np.testing.assert_array_equal(out[1], (lanes < 8).astype(np.uint32))
        np.testing.assert_array_equal(out[2], lanes + 100)

    def test_barrier_gfx1100(self):
        self.check_barrier("gfx1100", BARRIER11, 32)

    def test_barrier_gfx1201_split(self):
        self.check_barrier("gfx1201", BARRIER12, 32)

    def test_barrier_gfx942_wave64(self):
        self.check_barrier("gfx942", BARRIER9, 64)

    def check_barrier(self, arch, body, wave):
        block = 4 * wave
        # each thread stores its result at out[tid] (v100 = 4 * tid)
        co = asm.assemble(arch, {"bar": (body, [10], {"lds": 4 * block, "block": block})})
        out = np.zeros(block, np.uint32)
        for seed in (None, 1, 2, 3):
            out[:] = 0
            hk.emu.launch(co, "bar", grid=(1,), block=(block,), args=[out, np.zeros(16, np.uint32)],
                          random_order_seed=seed)
            t = np.arange(block)
            np.testing.assert_array_equal(out, 1000 + (t + wave) % block, err_msg="seed %s" % seed)

    def test_work_item_and_workgroup_ids(self):
        directives = [".amdhsa_system_vgpr_workitem_id 2", ".amdhsa_system_sgpr_workgroup_id_y 1",
                      ".amdhsa_system_sgpr_workgroup_id_z 1"]
        # after the two kernarg-pointer user SGPRs come the workgroup ids: s2, s3, s4
        pre = "  s_mov_b32 s40, s2\n  s_mov_b32 s41, s3\n  s_mov_b32 s42, s4\n"
        body = ("  v_and_b32 v50, 0x3ff, v0\n  v_bfe_u32 v51, v0, 10, 10\n  v_bfe_u32 v52, v0, 20, 10\n"
                "  v_lshl_add_u32 v53, v51, 2, v50\n  v_lshl_add_u32 v53, v52, 3, v53\n"
                "  v_lshlrev_b32 v100, 2, v53\n")   # the frame's slot of work-item x + 4y + 8z
        body += "  v_mov_b32 v10, v0\n  v_mov_b32 v11, s40\n  v_mov_b32 v12, s41\n  v_mov_b32 v13, s42\n"
        co = asm.assemble("gfx1100", {"ids": (body, [10, 11, 12, 13], {"directives": directives, "pre": pre})})
        out = np.zeros(4 * 32, np.uint32)
        hk.emu.launch(co, "ids", grid=(2, 3, 4), block=(4, 2, 3), args=[out, np.zeros(16, np.uint32)])
        t = np.arange(24)
        packed = (t % 4) | ((t // 4) % 2) << 10 | (t // 8) << 20
        # every workgroup writes the same slots; the last one, (1, 2, 3), runs last
        np.testing.assert_array_equal(out[:24], packed)
        np.testing.assert_array_equal(out[32:32 + 24], 1)
        np.testing.assert_array_equal(out[64:64 + 24], 2)
        np.testing.assert_array_equal(out[96:96 + 24], 3)


if __name__ == "__main__":
    emutest.main()
