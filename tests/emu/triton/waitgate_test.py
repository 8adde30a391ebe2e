"""cocheck on the Triton corpus: correct code that nobody here wrote passes both gates on every
target (stores on gfx9's in-order vmcnt, vscnt and storecnt elsewhere, true16 encodings on gfx12,
and a pipelined global->LDS copy kept in flight across a barrier on gfx950 are all read as the
hardware counts them). The pipelined gfx950 matmul picks its LDS stage by a counter modulo the
number of stages, which the gate does not follow: its copies are warnings (the emulator decides),
never errors."""

import contextlib
import io
import os

from absl.testing import absltest, parameterized

from hk.runtime import cocheck, waitcheck
from tests.emu.triton import corpus, kernels
from tests.emu.triton.corpus import FLAGS

corpus.use_test_tmpdir()


class WaitGateTest(parameterized.TestCase):

    @parameterized.named_parameters(
        [dict(testcase_name="%s_%s" % (s, a), spec=s, arch=a) for s in kernels.SPECS for a in sorted(kernels.ARCHS)])
    def test_no_findings(self, spec, arch):
        warned = []
        with contextlib.redirect_stdout(io.StringIO()):
            findings = cocheck.check_file(corpus.code_object(spec, arch), os.path.abspath(FLAGS.objdump),
                                          warnings=warned)
        self.assertEqual(findings, [])
        for line in warned:
            self.assertIn("cocheck cannot tell whether the LDS access", line)

    def test_the_pipelined_copy_is_in_the_corpus(self):
        # The gfx950 three-stage matmul really keeps a copy in flight across a barrier: a wait
        # that leaves copies in flight comes right before it.
        ins = waitcheck.disassemble(os.path.abspath(FLAGS.objdump), corpus.code_object("matmul_f16_32x64x32_w4_s3", "gfx950"),
                                    "gfx950")["matmul"]
        before_barrier = [ins[i - 1].text for i in range(1, len(ins)) if ins[i].mnemonic == "s_barrier"]
        self.assertTrue(any("vmcnt(" in t and "vmcnt(0)" not in t for t in before_barrier), before_barrier)
        self.assertTrue(any(" lds" in i.text for i in ins))


if __name__ == "__main__":
    absltest.main()
