"""The tile library compiles for every target into gate-clean code with the instructions it must use.

Each code object holds the kernels of one test file (memory_ops, register_ops, conversions,
mma_ops, mma8_ops) for one architecture. Every kernel must pass the resource gate (no VGPR or SGPR spills,
no private segment, no scratch instructions); the kernels named in REQUIRED must contain the
instructions listed for their target family; the 8-bit MMA kernels exist exactly where
targets.json lists the operand type and use its instruction; hk_bind_after_wait must issue its matrix
instruction only after an LDS wait that follows its last LDS read.
"""

import collections
import os
import re
import subprocess

from absl import flags
from absl.testing import absltest

from hk.target import facts

FLAGS = flags.FLAGS
flags.DEFINE_string("readelf", None, "llvm-readelf")
flags.DEFINE_string("objdump", None, "llvm-objdump")
flags.DEFINE_multi_string("code_object", [], "test code objects, named <file>.<arch>.co")

KERNEL_FILES = ("memory_ops", "register_ops", "conversions", "mma_ops", "mma8_ops")

# Instruction patterns by meaning, per target family (targets.json's "matrix" and family).
MMA = {"wmma": r"\bv_wmma_f32_16x16x16_", "mfma": r"\bv_mfma_f32_16x16x"}
MMA_BF16 = {"wmma": r"\bv_wmma_f32_16x16x16_bf16\b", "mfma": r"\bv_mfma_f32_16x16x(16|32)_?bf16\b"}
MMA_F16 = {"wmma": r"\bv_wmma_f32_16x16x16_f16\b", "mfma": r"\bv_mfma_f32_16x16x(16|32)_?f16\b"}
LDS_READ = r"\bds_(load|read)_"
LDS_WAIT = r"\bs_waitcnt\b.*lgkmcnt\(0\)|\bs_wait_dscnt 0x0\b"
BUFFER_B128 = r"\bbuffer_load_(b128|dwordx4)\b.*\boffen\b"
LDS_WRITE_B128 = r"\bds_(store|write)_b128\b"
CROSS_LANE = r"\b(row_xmask|quad_perm|ds_swizzle_b32|v_permlanex16_b32|ds_bpermute_b32)\b"


def lds_b128(target):
    return r"\b%s\b" % target.lds_read_b128


def dma(target):
    if not target.async_global_to_lds:
        return None
    width = "dwordx4" if target.arch == "gfx950" else "dword"
    return r"\bbuffer_load_%s\b.*\blds\b" % width


def lds_transpose(target):
    return r"\b%s\b" % target.lds_transpose_read if target.lds_transpose_read else None


# kernel -> list of (description, function(target) -> regex or None when not required).
REQUIRED = {
    "hk_lds_row_b128": [("128-bit LDS reads", lds_b128)],
    "hk_lds_col": [("transposing LDS reads", lds_transpose)],
    "hk_gemm_lds": [("matrix instruction", lambda t: MMA[t.matrix]), ("128-bit LDS reads", lds_b128),
                    ("global->LDS DMA", dma)],
    "hk_group_dynamic_lds": [("global->LDS DMA", dma)],
    "hk_mma_bf16": [("bf16 matrix instruction", lambda t: MMA_BF16[t.matrix])],
    "hk_mma_fp16": [("fp16 matrix instruction", lambda t: MMA_F16[t.matrix])],
    "hk_bind_after_wait": [("matrix instruction", lambda t: MMA[t.matrix]), ("128-bit LDS reads", lds_b128)],
    "hk_attention_chain": [("matrix instruction", lambda t: MMA[t.matrix]), ("lane shuffle", lambda t: r"\bds_bpermute_b32\b")],
    "hk_rows": [("cross-lane reduction", lambda t: CROSS_LANE)],
    "hk_acc_to_operand": [("lane shuffle", lambda t: r"\bds_bpermute_b32\b")],
    "hk_scalar_atomic": [("global atomic add", lambda t: r"\bglobal_atomic_(add|cmpswap)")],
    "hk_global_tiles": [("128-bit global loads", lambda t: r"\bglobal_load_(b128|dwordx4)\b")],
    "hk_staged_whole": [("128-bit buffer loads", lambda t: BUFFER_B128), ("128-bit LDS writes", lambda t: LDS_WRITE_B128)],
    "hk_staged_chunks": [("128-bit buffer loads", lambda t: BUFFER_B128), ("128-bit LDS writes", lambda t: LDS_WRITE_B128)],
    "hk_staged_elements": [("16-bit buffer loads", lambda t: r"\bbuffer_load_(u16|ushort|d16_b16|short_d16)"),
                           ("128-bit LDS writes", lambda t: LDS_WRITE_B128)],
}


def run(*cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if result.returncode != 0:
        raise AssertionError("%s failed:\n%s" % (" ".join(cmd), result.stdout))
    return result.stdout


def kernel_metadata(path):
    """{kernel name: {".field": "value"}} from the AMDGPU metadata note."""
    text = run(FLAGS.readelf, "--notes", path)
    kernels = {}
    for block in re.split(r"^  - (?=\.)", text, flags=re.M)[1:]:
        fields = dict(re.findall(r"^(?:    )?(\.[a-z_]+):\s+(\S+)$", block, re.M))
        kernels[fields[".name"]] = fields
    return kernels


def kernel_disassembly(path):
    """{kernel name: [instruction lines]} from llvm-objdump."""
    text = run(FLAGS.objdump, "-d", path)
    kernels = collections.OrderedDict()
    current = None
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ <([A-Za-z_][\w.]*)>:$", line)
        if m:
            current = kernels.setdefault(m.group(1), [])
        elif current is not None and line.strip():
            current.append(line.strip())
    return kernels


def code_objects():
    """(file, arch, path) for every code object given on the command line."""
    out = []
    for path in FLAGS.code_object:
        name, arch, _ = os.path.basename(path).rsplit(".", 2)
        out.append((name, arch, path))
    return out


class TileLibraryTest(absltest.TestCase):

    def test_every_file_for_every_target(self):
        got = sorted((name, arch) for name, arch, _ in code_objects())
        want = sorted((name, arch) for name in KERNEL_FILES for arch in facts.archs())
        self.assertEqual(got, want)

    def test_resource_gate(self):
        for name, arch, path in code_objects():
            target = facts.target(arch)
            for kernel, fields in kernel_metadata(path).items():
                with self.subTest(file=name, arch=arch, kernel=kernel):
                    self.assertEqual(int(fields[".wavefront_size"]), target.wave_size)
                    self.assertEqual(int(fields[".vgpr_spill_count"]), 0)
                    self.assertEqual(int(fields[".sgpr_spill_count"]), 0)
                    self.assertEqual(int(fields[".private_segment_fixed_size"]), 0)
                    self.assertLessEqual(int(fields[".vgpr_count"]), target.max_vgprs + target.max_agprs)

    def test_no_scratch_instructions(self):
        for name, arch, path in code_objects():
            for kernel, lines in kernel_disassembly(path).items():
                with self.subTest(file=name, arch=arch, kernel=kernel):
                    self.assertEqual([l for l in lines if re.search(r"\bscratch_", l)], [])

    def test_required_instructions(self):
        seen = set()
        for name, arch, path in code_objects():
            target = facts.target(arch)
            for kernel, lines in kernel_disassembly(path).items():
                text = "\n".join(lines)
                for what, pattern_of in REQUIRED.get(kernel, []):
                    pattern = pattern_of(target)
                    if pattern is None:
                        continue
                    seen.add(kernel)
                    with self.subTest(arch=arch, kernel=kernel, what=what):
                        self.assertRegex(text, pattern)
        self.assertEqual(sorted(seen), sorted(REQUIRED))

    def test_8bit_mma_where_the_target_has_it(self):
        checked = 0
        for name, arch, path in code_objects():
            if name != "mma8_ops":
                continue
            target = facts.target(arch)
            kernels = kernel_disassembly(path)
            has = {s.a: s.k for s in target.mma_shapes if s.a in ("i8", "fp8e4m3", "fp8e5m2")}
            self.assertEqual(sorted(k for k in kernels if k.startswith("hk_mma_")),
                             sorted("hk_mma_" + d for d in has))
            for dtype, k in has.items():
                wmma = target.matrix == "wmma"
                if dtype == "i8":
                    want = r"\bv_wmma_i32_16x16x16_iu8\b" if wmma else r"\bv_mfma_i32_16x16x%d_i8\b" % k
                else:
                    want = r"\bv_%s_f32_16x16x%d_%s\b" % (target.matrix, k, "fp8_fp8" if dtype == "fp8e4m3" else "bf8_bf8")
                with self.subTest(arch=arch, dtype=dtype):
                    self.assertRegex("\n".join(kernels["hk_mma_" + dtype]), want)
                    checked += 1
        self.assertEqual(checked, 4 + 2 * 3)  # i8 on four targets, two fp8 formats on three

    def test_bind_keeps_mma_after_its_wait(self):
        checked = 0
        for name, arch, path in code_objects():
            target = facts.target(arch)
            lines = kernel_disassembly(path).get("hk_bind_after_wait")
            if lines is None:
                continue
            checked += 1
            with self.subTest(arch=arch):
                first_mma = next(i for i, l in enumerate(lines) if re.search(MMA[target.matrix], l))
                reads = [i for i, l in enumerate(lines[:first_mma]) if re.search(LDS_READ, l)]
                self.assertTrue(reads, "no LDS read before the first matrix instruction")
                waits = [i for i in range(reads[-1], first_mma) if re.search(LDS_WAIT, lines[i])]
                self.assertTrue(waits, "the matrix instruction is not behind an LDS wait:\n" +
                                "\n".join(lines[reads[-1]:first_mma + 1]))
        self.assertEqual(checked, len(facts.archs()))


if __name__ == "__main__":
    absltest.main()
