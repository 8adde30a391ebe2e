"""The loader and the launch API: kernel descriptors and kernarg layouts (explicit and hidden
arguments) of clang's code objects, dynamic LDS, and clear Python errors for bad input: not a
code object, an unknown kernel, the wrong arguments, an instruction the emulator lacks, an access
outside every buffer, an endless loop."""

import numpy as np

import hk.emu
from hk.emu import codeobject
from tests.emu import asm, emutest

ARCHS = ["gfx1100", "gfx1201", "gfx942", "gfx950"]


class LoaderTest(emutest.EmuTest):

    def test_descriptors_and_kernarg_layout(self):
        for arch in ARCHS:
            with self.subTest(arch=arch):
                with open(emutest.code_object("vector_add", arch), "rb") as f:
                    co = codeobject.load(f.read())
                self.assertEqual(co.arch, arch)
                k = co.kernel("vector_add")
                kd = k.descriptor
                self.assertIn(("kernarg_segment_ptr", 2), kd.user_sgprs())
                self.assertEqual(kd.wavefront_size32, arch.startswith("gfx1"))
                self.assertEqual(kd.workgroup_id_enabled[0], True)
                self.assertEqual([a.value_kind for a in k.explicit_args], ["global_buffer"] * 3 + ["by_value"])
                kinds = {a.value_kind: a for a in k.args}
                self.assertEqual(kinds["hidden_block_count_x"].offset, 32)
                self.assertEqual(kinds["hidden_group_size_x"].size, 2)
                self.assertGreaterEqual(kd.kernarg_size, 56)
                self.assertEqual(k.entry % 256, 0)

    def test_kernels_listing(self):
        self.assertEqual(hk.emu.kernels(emutest.code_object("gemm", "gfx1100")), ["gemm_f16"])

    def test_bad_inputs_raise_clear_errors(self):
        with self.assertRaises(hk.emu.CodeObjectError):
            hk.emu.launch(b"not an elf at all", "k", (1,), (1,), [])
        with open(emutest.code_object("vector_add", "gfx1100"), "rb") as f:
            data = f.read()
        with self.assertRaises(hk.emu.CodeObjectError):
            hk.emu.launch(data[:200], "vector_add", (1,), (1,), [])
        with self.assertRaisesRegex(hk.emu.CodeObjectError, "vector_add"):
            hk.emu.launch(data, "no_such_kernel", (1,), (1,), [])
        with self.assertRaisesRegex(hk.emu.CodeObjectError, "gfx942"):
            hk.emu.launch(data, "vector_add", (1,), (1,), [None, None, None, 0], arch="gfx942")
        with self.assertRaisesRegex(hk.emu.EmuError, "takes 4 arguments"):
            hk.emu.launch(data, "vector_add", (1,), (64,), [np.zeros(4, np.float32)])
        with self.assertRaises(hk.emu.EmuError):
            hk.emu.launch(data, "vector_add", (1,), (64,), [np.zeros(4), np.zeros(4), np.zeros(4), "x"])

    def test_out_of_bounds_access_is_a_memory_fault(self):
        a = np.zeros(16, np.float32)
        # n says 256 but the buffers hold 16 floats
        with self.assertRaisesRegex(hk.emu.MemoryFault, r"vector_add.*outside every buffer"):
            hk.emu.launch(emutest.code_object("vector_add", "gfx1100"), "vector_add", (1,), (256,),
                          [a, a.copy(), a.copy(), 256])

    def test_unimplemented_instruction_and_endless_loop(self):
        co = asm.assemble("gfx1100", {
            "exotic": ("  v_qsad_pk_u16_u8 v[10:11], v[2:3], v4, v[6:7]\n", [10]),
            "forever": ("  s_branch 0xfffe\n", [0]),
        })
        with self.assertRaisesRegex(hk.emu.EmuError, "v_qsad_pk_u16_u8.*does not implement"):
            emutest.run_asm("gfx1100", co, "exotic", 1)
        with self.assertRaisesRegex(hk.emu.EmuError, "endless loop"):
            emutest.run_asm("gfx1100", co, "forever", 1, max_instructions=10000)

    def test_dispatch_packet_and_queue_pointers(self):
        # user SGPRs in setup order: dispatch ptr s[0:1], queue ptr s[2:3], kernarg ptr s[4:5]
        directives = [".amdhsa_user_sgpr_dispatch_ptr 1", ".amdhsa_user_sgpr_queue_ptr 1"]
        pre = "  s_mov_b64 s[40:41], s[0:1]\n  s_mov_b64 s[42:43], s[2:3]\n  s_mov_b64 s[0:1], s[4:5]\n"
        body = """
  s_load_b32 s10, s[40:41], 0x4
  s_load_b32 s11, s[40:41], 0xc
  s_load_b32 s12, s[40:41], 0x10
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v10, s10
  v_mov_b32 v11, s11
  v_mov_b32 v12, s12
  v_mov_b32 v13, s43
"""
        co = asm.assemble("gfx1100", {"disp": (body, [10, 11, 12, 13], {"directives": directives, "pre": pre})})
        out = emutest.run_asm("gfx1100", co, "disp", 4)
        np.testing.assert_array_equal(out[0], 32 | 1 << 16)           # workgroup_size_x, _y
        np.testing.assert_array_equal(out[1], 32)                     # grid_size_x in work-items
        np.testing.assert_array_equal(out[2], 1)                      # grid_size_y
        self.assertTrue((out[3] != 0).all())                          # a queue in device memory

    def test_kernarg_preload_gfx942(self):
        directives = [".amdhsa_user_sgpr_kernarg_preload_length 2"]
        pre = "  s_mov_b64 s[40:41], s[2:3]\n"                        # the first kernarg, preloaded
        body = "  s_xor_b32 s10, s40, s4\n  s_xor_b32 s11, s41, s5\n  v_mov_b32 v10, s10\n  v_mov_b32 v11, s11\n"
        co = asm.assemble("gfx942", {"pre": (body, [10, 11], {"directives": directives, "pre": pre})})
        out = emutest.run_asm("gfx942", co, "pre", 2)
        np.testing.assert_array_equal(out, 0)                         # same pointer as loaded from memory

    def test_corrupted_code_never_crashes(self):
        # random byte flips in .text: every outcome is a result or an HKError, never a crash
        import io
        import random

        from elftools.elf.elffile import ELFFile

        from hk.errors import HKError
        path = emutest.code_object("gemm", "gfx1100")
        with open(path, "rb") as f:
            data = f.read()
        text = ELFFile(io.BytesIO(data)).get_section_by_name(".text")
        off, size = text["sh_offset"], text["sh_size"]
        rng = random.Random(5)
        x = np.ones(1024, np.float16)
        for _ in range(40):
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                b[off + rng.randrange(min(size, 800))] = rng.randrange(256)
            try:
                hk.emu.launch(bytes(b), "gemm_f16", (1,), (128,), [x, x.copy(), np.zeros(1024, np.float32), 32, 32, 32],
                              max_instructions=20000)
            except HKError:
                pass

    def test_dynamic_lds(self):
        body = """
  v_mov_b32 v10, v0
  ds_store_b32 v100, v0 offset:1000
  s_waitcnt lgkmcnt(0)
"""
        co = asm.assemble("gfx1100", {"dyn": (body, [10], {"lds": 16})})
        with self.assertRaises(hk.emu.MemoryFault):
            emutest.run_asm("gfx1100", co, "dyn", 1)
        emutest.run_asm("gfx1100", co, "dyn", 1, shared_mem=2048)


if __name__ == "__main__":
    emutest.main()
