"""LDS races between the waves of a workgroup, at every level: a read of LDS another wave wrote
(by a workgroup copy or by its own stores), or a write over LDS another wave read, with no
barrier between. Where the indices show the waves meet, tracing refuses the kernel at the later
line with a note at the earlier one; where they depend on data, tracing warns and the run
decides: the interpreter raises naming both lines, the emulator raises on the compiled code.
Every racy kernel has a twin that places the barrier (or keeps each wave to its own rows) and
computes the right answer on the interpreter and on the emulator for gfx1100 and gfx950."""

import inspect
import warnings

import pytest
import torch

import hk
from hk.emu import HazardError
from hk.errors import HKWarning, LaunchError, VerifyError

T = hk.RT(hk.bf16, 16, 64)
S = hk.ST(hk.bf16, 64, 64)
ARCHS = ["gfx1100", "gfx950"]


def line_of(kernel, marker):
    """The line of `kernel`'s source that holds the comment `# <marker>`."""
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, text in enumerate(lines) if text.rstrip().endswith("# " + marker))


def refused(kernel, read, write):
    with pytest.raises(VerifyError) as info:
        kernel.trace("gfx1100")
    e = info.value
    assert e.location.line == line_of(kernel, read), str(e)
    assert [n.line for n, _ in e.notes if n] == [line_of(kernel, write)], str(e)
    assert "hk.arch.barrier()" in e.message and "no barrier between them" in e.message
    return e


# -- a workgroup copy, then rows another wave copied ------------------------------------------

@hk.kernel(grid=(1,), warps=4)
def copy_read(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    hk.lds.copy_to(s, 0, x, hk.tile_coord(0, 0, 0, 0))  # write
    o[0, 0, w, 0] = s[0].subtile(16, 64, 3 - w, 0).load(T)  # read


@hk.kernel(grid=(1,), warps=4)
def copy_barrier_read(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    hk.lds.copy_to(s, 0, x, hk.tile_coord(0, 0, 0, 0))
    hk.arch.barrier()
    o[0, 0, w, 0] = s[0].subtile(16, 64, 3 - w, 0).load(T)


# -- each wave stores its rows, then reads another wave's ------------------------------------

@hk.kernel(grid=(1,), warps=4)
def store_read(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    s[0].subtile(16, 64, w, 0).store(x[0, 0, w, 0].load(T))  # write
    o[0, 0, w, 0] = s[0].subtile(16, 64, 3 - w, 0).load(T)  # read


@hk.kernel(grid=(1,), warps=4)
def store_barrier_read(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    s[0].subtile(16, 64, w, 0).store(x[0, 0, w, 0].load(T))
    hk.arch.barrier()
    o[0, 0, w, 0] = s[0].subtile(16, 64, 3 - w, 0).load(T)


# -- each wave reads its rows, then writes over another wave's -------------------------------

@hk.kernel(grid=(1,), warps=4)
def read_write(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    hk.lds.copy_to(s, 0, x, hk.tile_coord(0, 0, 0, 0))
    hk.arch.barrier()
    t = s[0].subtile(16, 64, w, 0).load(T)  # read
    s[0].subtile(16, 64, (w + 1) % 4, 0).store(t * 2.0)  # write
    hk.arch.barrier()
    o[0, 0, w, 0] = s[0].subtile(16, 64, w, 0).load(T)


@hk.kernel(grid=(1,), warps=4)
def read_barrier_write(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    hk.lds.copy_to(s, 0, x, hk.tile_coord(0, 0, 0, 0))
    hk.arch.barrier()
    t = s[0].subtile(16, 64, w, 0).load(T)
    hk.arch.barrier()
    s[0].subtile(16, 64, (w + 1) % 4, 0).store(t * 2.0)
    hk.arch.barrier()
    o[0, 0, w, 0] = s[0].subtile(16, 64, w, 0).load(T)


# -- a double buffer whose commit comes after the step's barrier ------------------------------

@hk.kernel(grid=(1,), warps=4)
def commit_after_barrier(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 64, 2))
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    for k in hk.range(x.batch):
        acc = acc + s[k % 2].subtile(16, 64, w, 0).load(T).to(hk.fp32)  # read
        hk.arch.barrier()
        hk.lds.commit(s, (k + 1) % 2, hk.lds.issue(s, x, hk.tile_coord(k, 0, 0, 0)))  # write
    o[0, 0, w, 0] = acc.to(hk.bf16)


def test_a_read_of_another_waves_copy_is_refused():
    refused(copy_read, "read", "write")


def test_a_read_of_another_waves_store_is_refused():
    refused(store_read, "read", "write")


def test_a_write_over_another_waves_read_is_refused():
    e = refused(read_write, "write", "read")
    assert "writes LDS that another wave reads" in e.message


def test_a_commit_racing_the_next_steps_read_is_refused():
    refused(commit_after_barrier, "read", "write")


def test_a_single_wave_has_nobody_to_race():
    @hk.kernel(grid=(1,), warps=1)
    def one(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 16, 64))
        hk.lds.copy_to(s, 0, x, hk.tile_coord(0, 0, 0, 0))
        o[0, 0, 0, 0] = s[0].load(T)

    one.trace("gfx1100")


# -- indices from memory: tracing warns, the run decides ---------------------------------------

@hk.kernel(grid=(1,), warps=4)
def store_read_at(x: hk.Tensor[hk.bf16], rows: hk.Tensor[hk.i32], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    s[0].subtile(16, 64, w, 0).store(x[0, 0, w, 0].load(T))  # write
    o[0, 0, w, 0] = s[0].subtile(16, 64, rows.load_scalar(0, 0, 0, w), 0).load(T)  # read


@hk.kernel(grid=(1,), warps=4)
def copy_read_at(x: hk.Tensor[hk.bf16], rows: hk.Tensor[hk.i32], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    hk.lds.copy_to(s, 0, x, hk.tile_coord(0, 0, 0, 0))  # write
    o[0, 0, w, 0] = s[0].subtile(16, 64, rows.load_scalar(0, 0, 0, w), 0).load(T)  # read


@hk.kernel(grid=(1,), warps=4)
def read_write_at(x: hk.Tensor[hk.bf16], rows: hk.Tensor[hk.i32], o: hk.Tensor[hk.bf16]):
    w = hk.arch.warp_id()
    s = hk.lds.alloc(S)
    hk.lds.copy_to(s, 0, x, hk.tile_coord(0, 0, 0, 0))
    hk.arch.barrier()
    t = s[0].subtile(16, 64, w, 0).load(T)  # read
    s[0].subtile(16, 64, rows.load_scalar(0, 0, 0, w), 0).store(t * 2.0)  # write
    hk.arch.barrier()
    o[0, 0, w, 0] = s[0].subtile(16, 64, w, 0).load(T)


DYNAMIC = [(store_read_at, "read", "write"), (copy_read_at, "read", "write"),
           (read_write_at, "write", "read")]


def inputs():
    x = (torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64) % 251).to(torch.bfloat16)
    return x, torch.zeros(64, 64, dtype=torch.bfloat16)


@pytest.mark.parametrize("kernel,later,earlier", DYNAMIC, ids=lambda k: getattr(k, "name", None))
def test_data_dependent_indices_warn_while_tracing(kernel, later, earlier):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        kernel.trace("gfx1100", divisors=2)  # a specialization of its own: its warnings are new
    found = [w for w in seen if issubclass(w.category, HKWarning) and "another wave" in str(w.message)]
    assert [w.lineno for w in found] == [line_of(kernel, later)], [str(w.message) for w in seen]
    assert "hk.arch.barrier()" in str(found[0].message)


@pytest.mark.parametrize("kernel,later,earlier", DYNAMIC, ids=lambda k: getattr(k, "name", None))
def test_the_interpreter_raises_at_a_race_naming_both_lines(monkeypatch, kernel, later, earlier):
    monkeypatch.setenv("HK_DEVICE", "interp")
    x, o = inputs()
    with pytest.raises(LaunchError) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HKWarning)
            kernel(x, torch.tensor([1, 2, 3, 0], dtype=torch.int32), o)
    e = info.value
    assert "LDS race" in e.message, str(e)
    # The interpreter runs wave 0 first: which of the two accesses comes second, where the race
    # is seen, depends on that order; the error names both.
    assert len(e.notes) == 1, str(e)
    assert {e.location.line, e.notes[0][0].line} == {line_of(kernel, later), line_of(kernel, earlier)}, str(e)
    assert "hk.arch.barrier()" in e.hint


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kernel,later,earlier", DYNAMIC, ids=lambda k: getattr(k, "name", None))
def test_the_emulator_raises_at_a_race(monkeypatch, arch, kernel, later, earlier):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    x, o = inputs()
    with pytest.raises(HazardError) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HKWarning)
            kernel(x, torch.tensor([1, 2, 3, 0], dtype=torch.int32), o)
    assert "an LDS race" in str(info.value) and "ds_" in str(info.value)


def expected(x, rows_of_wave, scale=1.0):
    want = torch.zeros_like(x)
    for w, r in enumerate(rows_of_wave):
        want[16 * w:16 * w + 16] = (x[16 * r:16 * r + 16].float() * scale).to(x.dtype)
    return want


@pytest.mark.parametrize("device,arch", [("interp", "gfx1100")] + [("emu", a) for a in ARCHS])
def test_twins_without_a_race_compute_the_answer(monkeypatch, device, arch):
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)
    x, _ = inputs()
    own = torch.tensor([0, 1, 2, 3], dtype=torch.int32)
    reversed_rows = [3, 2, 1, 0]
    cases = [(copy_barrier_read, (), expected(x, reversed_rows)),
             (store_barrier_read, (), expected(x, reversed_rows)),
             (read_barrier_write, (), expected(x, [3, 0, 1, 2], 2.0)),
             (store_read_at, (own,), expected(x, [0, 1, 2, 3])),
             (read_write_at, (own,), expected(x, [0, 1, 2, 3], 2.0))]
    for kernel, extra, want in cases:
        o = torch.zeros_like(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HKWarning)
            kernel(x, *extra, o)
        assert torch.equal(o, want), kernel.name
