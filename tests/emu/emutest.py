"""Shared by the emulator tests: flags for the hermetic tools and the HIP code objects, and a
runner for the assembly frame of asm.py."""

import os
import tempfile

import numpy as np
from absl import flags
from absl.testing import absltest

import hk.emu
from tests.emu import asm

FLAGS = flags.FLAGS

# Under Bazel only TEST_TMPDIR is the test's to write: the assembler's and the disassembler's
# temporary files go there.
if os.environ.get("TEST_TMPDIR"):
    os.environ["TMPDIR"] = os.environ["TEST_TMPDIR"]
    tempfile.tempdir = None
flags.DEFINE_string("objdump", None, "the hermetic llvm-objdump")
flags.DEFINE_multi_string("code_object", [], "HIP code objects: <kernel>_<arch>.<arch>.co")


def code_object(kernel, arch):
    for path in FLAGS.code_object:
        if os.path.basename(path) == "%s_%s.%s.co" % (kernel, arch, arch):
            return path
    raise AssertionError("no code object for %s on %s" % (kernel, arch))


def run_asm(arch, co, name, nresults, inp=None, block=None, dtype=np.uint32, **kw):
    """Runs one frame kernel with one workgroup; returns out as [result][lane]."""
    wave = asm.WAVE[arch]
    block = block or wave
    out = np.zeros(nresults * wave * max(1, block // wave), dtype=np.uint32)
    inp = np.zeros(1024, np.uint32) if inp is None else np.ascontiguousarray(inp)
    hk.emu.launch(co, name, grid=(1,), block=(block,), args=[out, inp], **kw)
    return out[:nresults * wave].reshape(nresults, wave).view(dtype)


def loads(arch, n):
    """Loads inp[i * wave + lane] into v1..vn of each lane, and waits."""
    op = "global_load_dword" if arch.startswith("gfx9") else "global_load_b32"
    wait = "  s_wait_loadcnt 0x0\n" if arch.startswith("gfx12") else "  s_waitcnt vmcnt(0)\n"
    return "".join("  %s v%d, v100, s[6:7] offset:%d\n" % (op, i + 1, i * asm.WAVE[arch] * 4)
                   for i in range(n)) + wait


def inputs(arch, *cols):
    """The `inp` buffer of the frame holding the columns one after another, a wave each."""
    wave = asm.WAVE[arch]
    inp = np.zeros(1024, np.uint32)
    for i, c in enumerate(cols):
        inp[i * wave:(i + 1) * wave] = np.asarray(c).view(np.uint32) if np.asarray(c).dtype != np.uint32 else c
    return inp


def f32(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


class EmuTest(absltest.TestCase):
    """Points the emulator and the assembler at the hermetic tools given on the command line."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if FLAGS.objdump:
            os.environ["HK_LLVM_OBJDUMP"] = os.path.abspath(FLAGS.objdump)
        for name in ("llvm_mc", "lld"):
            if getattr(FLAGS, name):
                setattr(FLAGS, name, os.path.abspath(getattr(FLAGS, name)))


main = absltest.main
