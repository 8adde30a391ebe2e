"""What the corpus tests share: their flags (the code objects the build made, the hermetic
llvm-objdump), finding one code object, and writing temporary files under TEST_TMPDIR."""

import os
import tempfile

from absl import flags

flags.DEFINE_multi_string("code_object", [], "corpus code objects: <spec>.<arch>.co, each beside "
                          "its .json where the test reads one")
flags.DEFINE_string("objdump", None, "the hermetic llvm-objdump")
FLAGS = flags.FLAGS


def use_test_tmpdir():
    """Under Bazel only TEST_TMPDIR is the test's to write (the disassembler's temporary files)."""
    if os.environ.get("TEST_TMPDIR"):
        os.environ["TMPDIR"] = os.environ["TEST_TMPDIR"]
        tempfile.tempdir = None


def code_object(spec, arch):
    """The path of SPECS[spec]'s code object for `arch`."""
    for path in FLAGS.code_object:
        if os.path.basename(path) == "%s.%s.co" % (spec, arch):
            return path
    raise AssertionError("no code object for %s on %s" % (spec, arch))
