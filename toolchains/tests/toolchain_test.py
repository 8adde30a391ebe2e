"""The hermetic toolchain compiles the smoke kernel for every target, and is really hermetic.

Each code object is checked through llvm-readelf's view of its AMDGPU metadata (wave size,
registers, no spills or scratch, the kernel's LDS) and through llvm-objdump's disassembly (the
target family's matrix instruction, the barrier, the cross-lane shuffle).
"""

import os
import re
import subprocess

from absl import flags
from absl.testing import absltest

from hk.target import facts

FLAGS = flags.FLAGS
flags.DEFINE_string("readelf", None, "llvm-readelf")
flags.DEFINE_string("objdump", None, "llvm-objdump")
flags.DEFINE_string("clang", None, "the HIP compiler wrapper")
flags.DEFINE_string("rocm_version", None, "rocm/share/hip/version of the ROCm root")
flags.DEFINE_multi_string("code_object", [], "smoke kernel code objects, one per arch")

# The instructions each family must show in the smoke kernel's disassembly.
MATRIX_OP = {"wmma": "v_wmma_f32_16x16x16_bf16", "mfma": "v_mfma_f32_16x16x"}


def run(*cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    if result.returncode != 0:
        raise AssertionError("%s failed:\n%s" % (" ".join(cmd), result.stdout))
    return result.stdout


def metadata(readelf, path):
    """The kernel's scalar metadata fields (".vgpr_count" -> "80", ...) and the target line."""
    text = run(readelf, "--notes", path)
    fields = dict(re.findall(r"^\s+(\.[a-z_]+):\s+(\S+)$", text, re.M))
    target = re.search(r"amdhsa\.target:\s+(\S+)", text)
    return fields, target.group(1) if target else None


class SmokeKernelTest(absltest.TestCase):

    def test_one_code_object_per_target(self):
        archs = sorted(os.path.basename(p).split(".")[1] for p in FLAGS.code_object)
        self.assertEqual(archs, facts.archs())

    def test_metadata(self):
        for path in FLAGS.code_object:
            arch = os.path.basename(path).split(".")[1]
            target = facts.target(arch)
            with self.subTest(arch=arch):
                fields, triple = metadata(FLAGS.readelf, path)
                self.assertEqual(triple, "amdgcn-amd-amdhsa--" + arch)
                self.assertEqual(fields[".name"], "hk_smoke")
                self.assertEqual(int(fields[".wavefront_size"]), target.wave_size)
                self.assertBetween(int(fields[".vgpr_count"]), 1, target.max_vgprs + target.max_agprs)
                self.assertEqual(int(fields[".vgpr_spill_count"]), 0)
                self.assertEqual(int(fields[".sgpr_spill_count"]), 0)
                self.assertEqual(int(fields[".private_segment_fixed_size"]), 0)
                # 256 floats of __shared__ stage.
                self.assertGreaterEqual(int(fields[".group_segment_fixed_size"]), 1024)
                self.assertEqual(int(fields[".max_flat_workgroup_size"]), 256)

    def test_disassembly(self):
        for path in FLAGS.code_object:
            arch = os.path.basename(path).split(".")[1]
            target = facts.target(arch)
            with self.subTest(arch=arch):
                text = run(FLAGS.objdump, "-d", path)
                self.assertIn(MATRIX_OP[target.matrix], text)
                self.assertRegex(text, r"\bs_barrier")
                self.assertIn("ds_bpermute_b32", text)
                self.assertNotIn("scratch_", text)


class HermeticityTest(absltest.TestCase):
    """The tools that run are the unpacked packages (under Bazel's output base, or copied to a
    remote worker), not the host's."""

    def test_wrappers_resolve_outside_usr(self):
        for tool in (FLAGS.readelf, FLAGS.objdump, FLAGS.clang):
            real = os.path.realpath(tool)
            self.assertFalse(real.startswith("/usr/"), real)
            self.assertIn("/external/", real)

    def test_clang_runs_from_the_package_tree(self):
        text = run(FLAGS.clang, "-v")
        installed = re.search(r"^InstalledDir: (\S+)$", text, re.M).group(1)
        # @llvm_toolchain's tree: in the output base here, in the test's runfiles on a remote worker.
        self.assertRegex(installed, r"/llvm_toolchain/usr/lib/llvm-22/bin$")
        self.assertFalse(installed.startswith("/usr/"), installed)
        self.assertIn("22.1.8", text)

    def test_hip_headers_and_bitcode_come_from_the_repository(self):
        rocm = os.path.abspath(os.path.dirname(os.path.dirname(os.path.dirname(FLAGS.rocm_version))))
        text = run(FLAGS.clang, "-x", "hip", "--offload-arch=gfx1100", "--cuda-device-only",
                   "--rocm-path=" + rocm, "-v", "-E", "-o", os.devnull, os.devnull)
        search = text.split("#include <...> search starts here:")[1].split("End of search list.")[0]
        self.assertRegex(search, r"rocm_device/rocm/include")
        # The host's C and C++ headers serve HIP's host side, as in any HIP build; an LLVM or a
        # ROCm of the host's must not be reached.
        for path in re.findall(r'(?:^|[\s"=])(/\S+)', text):
            self.assertFalse(path.startswith(("/usr/lib/llvm", "/opt/rocm")), path)
        self.assertRegex(text, r"rocm_device/rocm/amdgcn/bitcode/ockl\.bc")


if __name__ == "__main__":
    absltest.main()
