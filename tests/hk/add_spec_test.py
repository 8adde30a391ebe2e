"""The spec's complete kernel, copied verbatim, through every step of its walk-through."""

import os
import re

import pytest
import torch

import hk
from hk.target import facts


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                        hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


def test_trace_dumps_the_module_after_the_passes():
    text = add.trace(arch="gfx1100").dump()
    assert 'hk.arch = "gfx1100"' in text
    assert "func.func @add(%arg0: !hk.gl<bf16>, %arg1: !hk.gl<bf16>, %arg2: !hk.gl<bf16>)" in text
    assert text.count("hk.load %") == 2
    # The waits pass derived the wait before the add, naming both tiles it completes.
    assert re.search(r"hk\.wait_vm 0 for %\d+, %\d+", text)
    assert "hk.binary add" in text
    assert "hk.lds_bytes = 0" in text


def test_source_is_the_cpp_translation():
    src = add.source(arch="gfx1100")
    assert '#include "hk/hk.cuh"' in src
    assert "__launch_bounds__(32)" in src
    assert 'hk_kernel_add(hk::gl<hk::bf16> v0, hk::gl<hk::bf16> v1, hk::gl<hk::bf16> v2) __asm__("add");' in src
    assert re.search(r"hk::add\(t\d+, t\d+, t\d+\);", src)
    assert src.index("hk::wait_vm<0>();") < src.index("hk::add(")


@pytest.mark.parametrize("shape", [(2, 64, 128), (3, 37, 100)], ids=["aligned", "ragged"])
def test_computes_the_sum_on_the_interpreter(monkeypatch, shape):
    monkeypatch.setenv("HK_DEVICE", "interp")
    torch.manual_seed(0)
    a = torch.randn(*shape, dtype=torch.bfloat16)
    b = torch.randn(*shape, dtype=torch.bfloat16)
    out = torch.full(shape, float("nan"), dtype=torch.bfloat16)
    add(a, b, out)
    # bf16 + bf16 rounds once to bf16: exactly torch's bf16 add.
    assert torch.equal(out, a + b)


def test_traces_once_per_specialization():
    assert add.trace(arch="gfx942") is add.trace(arch="gfx942")
    assert add.trace(arch="gfx942") is not add.trace(arch="gfx950")


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942", "gfx950"])
def test_build_reports_a_gate_clean_code_object(arch):
    build = add.build(arch=arch)
    report = build.report()
    assert "kernel         add (%s" % arch in report
    assert build.meta.spills == 0 and build.meta.scratch_bytes == 0
    assert build.meta.wave_size == facts.target(arch).wave_size
    assert build.code_object[:4] == b"\x7fELF"
    assert re.search(r"occupancy\s+\d+ wave\(s\) per SIMD", report)
    # A second build of the same specialization is the same object, from the cache.
    assert add.build(arch=arch) is build
