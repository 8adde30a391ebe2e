"""Reads through the scalar cache (hk-scalar-reads): which tensors the pass gives them, the
C++ and the code object they become, their numerics on the interpreter and the emulator, and
the launch's refusal of arguments that overlap one so read and one written, on the full path,
the fast path and hk.runtime.launch.bound's."""

import pytest
import torch

import hk
import hk.interp
from hk.errors import LaunchError
from hk.runtime import cocheck, launch, waitcheck

ARCHS = ("gfx1100", "gfx1201", "gfx942", "gfx950")


def lookup_kernel():
    """o[i] = values[table[i]] for i < 16, a workgroup each; the table read one element at a time."""

    @hk.kernel(grid=(16,))
    def lookup(table: hk.Tensor[hk.i32], values: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        i = hk.arch.block_idx.x
        row = table.load_scalar(0, 0, 0, i)
        o.store_scalar(0, 0, 0, i, values.load_scalar(0, 0, 0, row))

    return lookup


def bump_kernel():
    """o[i] = i, then table[i] += 1: the table is written, so its read stays a global load (after
    the store to o, which may be the same memory for all the compiler knows)."""

    @hk.kernel(grid=(16,))
    def bump(table: hk.Tensor[hk.i32], o: hk.Tensor[hk.i32]):
        i = hk.arch.block_idx.x
        o.store_scalar(0, 0, 0, i, i)
        v = table.load_scalar(0, 0, 0, i)
        table.store_scalar(0, 0, 0, i, v + 1)

    return bump


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.delenv("HK_ARCH", raising=False)


def test_only_tensors_the_kernel_never_writes_are_read_through_the_scalar_cache():
    traced = lookup_kernel().trace("gfx1100")
    assert traced.scalar_reads == ("table", "values")
    assert traced.writes == ("o",)
    assert traced.dump().count("{scalar_cache}") == 2
    assert traced.cpp.count("hk::load_scalar_cached(") == 2

    bumped = bump_kernel().trace("gfx1100")
    assert bumped.scalar_reads == ()
    assert bumped.writes == ("table", "o")
    assert "scalar_cache" not in bumped.dump()
    assert "load_scalar_cached" not in bumped.cpp and "hk::load_scalar(" in bumped.cpp


def test_lookup_on_the_interpreter(interp):
    k = lookup_kernel()
    table = torch.randint(0, 64, (16,), dtype=torch.int32)
    values = torch.randn(64)
    o = torch.zeros(16)
    k(table, values, o)
    assert torch.equal(o, values[table.long()])


def test_overlapping_arguments_are_refused_on_every_path(interp):
    k = lookup_kernel()
    buf = torch.randn(1024)
    values, o = buf[:64], buf[128:144]  # o 512 bytes on: the same address bits as buf[:16]
    table = torch.arange(16, dtype=torch.int32)
    k(table, values, o)  # the full path, then a plan for these layouts
    (launcher,) = k._launchers.values()
    assert sorted(launcher.pairs) == [(0, 2), (1, 2)]
    # The same key (layouts and address bits), o now over values' memory: the fast path refuses.
    with pytest.raises(LaunchError) as e:
        k(table, values, buf[:16])
    msg = str(e.value)
    assert "'values' is read through the scalar cache" in msg and "overlaps argument 'o'" in msg
    assert "values.clone()" in msg
    assert len(k._launchers) == 1
    # Adjacent, not overlapping: passes.
    k(table, buf[:32], buf[32:48])
    assert torch.equal(buf[32:48], buf[:32][table.long()])
    # A fresh kernel (no plan yet): the full path refuses too.
    with pytest.raises(LaunchError, match="'values' is read through the scalar cache"):
        lookup_kernel()(table, values, values[8:24])
    # The int32 table and the fp32 output over the same bytes.
    shared = torch.zeros(16, dtype=torch.int32)
    with pytest.raises(LaunchError, match="'table' is read through the scalar cache"):
        k(shared, values, shared.view(torch.float32))


def test_meta_tensors_share_no_memory():
    meta = torch.empty(64, device="meta")
    assert launch.sharing([torch.zeros(16, dtype=torch.int32), meta, meta], [(1, 2)]) is None


def test_bound_launches_check_the_overlap(interp):
    k = lookup_kernel()
    values = torch.randn(64)
    table = torch.arange(16, dtype=torch.int32)
    o = torch.zeros(16)
    k(table, values, o)
    run = launch.bound(k, [table, values, o])
    assert run is not None
    o.zero_()
    run(table, values, o)
    assert torch.equal(o, values[:16])
    with pytest.raises(LaunchError, match="overlaps argument 'o'"):
        run(table, values, values[4:20])


def test_a_kernel_that_writes_what_it_reads_may_alias(interp):
    # Nothing of bump's is read through the scalar cache: its arguments may share memory.
    table = torch.arange(32, dtype=torch.int32)
    bump_kernel()(table[16:], table[:16])
    assert torch.equal(table, torch.cat([torch.arange(16), torch.arange(17, 33)]).to(torch.int32))


@pytest.mark.parametrize("arch", ARCHS)
def test_the_cached_read_is_a_scalar_load(arch):
    """The lookup's code object reads global memory with scalar loads only; bump's table read,
    left alone, is a vector (global) load."""

    def global_loads(kernel):
        b = kernel.build(arch)
        code = waitcheck.disassemble(cocheck.find_objdump(None), b.path, arch)
        (instructions,) = code.values()
        return [i.mnemonic for i in instructions if i.mnemonic.startswith(("global_load", "buffer_load"))]

    assert global_loads(lookup_kernel()) == []
    assert global_loads(bump_kernel())


@pytest.mark.parametrize("arch", ["gfx1100", "gfx942"])
def test_lookup_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    k = lookup_kernel()
    table = torch.randint(0, 64, (16,), dtype=torch.int32)
    values = torch.randn(64)
    o = torch.zeros(16)
    k(table, values, o, arch=arch)
    assert torch.equal(o, values[table.long()])
