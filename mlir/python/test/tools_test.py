"""The wheel's hk-opt and hk-translate (hk.compiler.tools: the drivers inside hk._mlir) print
what the executables print, byte for byte, and exit as they do."""

import os
import subprocess
import sys
import unittest

from absl import flags
from absl.testing import absltest

FLAGS = flags.FLAGS
flags.DEFINE_string("hk_opt", None, "the hk-opt executable")
flags.DEFINE_string("hk_translate", None, "the hk-translate executable")
flags.DEFINE_string("pipeline", None, "mlir/test/Passes/hk-kernel-pipeline.mlir")
flags.DEFINE_string("to_cpp", None, "mlir/test/Translation/hk-to-cpp.mlir")
flags.DEFINE_string("invalid", None, "mlir/test/Dialect/invalid.mlir")


def in_process(tool, *args):
    """The command as the wheel runs it: hk.compiler.tools.<tool>() with sys.argv set."""
    code = "import sys; from hk.compiler import tools; sys.argv = %r; tools.%s()" % (
        ["hk-" + tool] + list(args), tool)
    return subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def executable(path, *args):
    return subprocess.run([path] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


class ToolsTest(absltest.TestCase):

    def test_opt_runs_the_pipeline_as_the_executable_does(self):
        for arch in ("gfx1100", "gfx950"):
            args = (FLAGS.pipeline, "--hk-kernel-pipeline=arch=" + arch)
            ours, theirs = in_process("opt", *args), executable(FLAGS.hk_opt, *args)
            self.assertEqual(theirs.returncode, 0, theirs.stderr)
            self.assertEqual(ours.returncode, 0, ours.stderr)
            self.assertIn("hk.kernel", ours.stdout)
            self.assertEqual(ours.stdout, theirs.stdout)

    def test_opt_verifies_every_diagnostic_of_the_dialect(self):
        result = in_process("opt", FLAGS.invalid, "-split-input-file", "-verify-diagnostics")
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])

    def test_translate_prints_the_executables_cpp(self):
        args = ("--hk-to-cpp", FLAGS.to_cpp, "-split-input-file")
        ours, theirs = in_process("translate", *args), executable(FLAGS.hk_translate, *args)
        self.assertEqual(ours.returncode, theirs.returncode)
        self.assertIn("__global__", ours.stdout)
        self.assertEqual(ours.stdout, theirs.stdout)

    def test_bad_input_is_an_error_at_its_line_not_a_crash(self):
        path = os.path.join(os.environ.get("TEST_TMPDIR", "."), "bad.mlir")
        with open(path, "w") as f:
            f.write("func.func @f() {\n  %0 = hk.nonsense : i32\n}\n")
        result = in_process("opt", path)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("bad.mlir:2", result.stderr)
        missing = in_process("translate", "--hk-to-cpp", path + ".absent")
        self.assertEqual(missing.returncode, 1)
        self.assertIn("input file", missing.stderr)

    def test_help(self):
        result = in_process("opt", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("hk-kernel-pipeline", result.stdout)


if __name__ == "__main__":
    absltest.main()
