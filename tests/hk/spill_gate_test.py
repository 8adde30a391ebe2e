"""The Bazel gate refuses the spilling kernel: cocheck on its code object (built by hk_kernel
for gfx1100) reports the spill and exits 1."""

import os
import subprocess
import sys

import pytest


def code_object():
    for root, _, files in os.walk("tests/hk"):
        for f in files:
            if f == "spilling.gfx1100.co":
                return os.path.join(root, f)
    pytest.fail("spilling.gfx1100.co is not in the test's runfiles")


def test_cocheck_refuses_the_spilling_code_object():
    objdump = os.path.join(os.environ["HK_LLVM_BIN"], "llvm-objdump")
    result = subprocess.run([sys.executable, "-m", "hk.runtime.cocheck", "--objdump=" + objdump,
                             "--warps=4", code_object()],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert result.returncode == 1, result.stdout
    assert "resource gate: kernel spilling on gfx1100 spills" in result.stdout
