"""A row or column vector taken from a tile of one element width and layout, used with a tile of
another: the tile library holds a vector in the lanes of the tile it belongs to, and those
differ between 32-bit tiles (the accumulator pattern), 16- and 8-bit ones (the operand pattern)
and the two layouts. Every such pair, per row and per column, broadcast onto a tile (sub_row /
sub_col), repeated into one (hk.broadcast) and as the init of a reduction, is accepted and
compiles for every target; on gfx1100 and gfx950 the interpreter and the emulator both compute
torch's answer."""

import inspect
import itertools
import os

import pytest
import torch

import hk
from hk.runtime import cache
from hk.runtime import compile as compile_lib

WIDTHS = {8: hk.i8, 16: hk.bf16, 32: hk.fp32}
ROWS, COLS = 16, 32  # not square: a row vector and a column vector differ in length
# (width, layout) of the tile a vector is reduced from x that of the tile it is used with.
KINDS = list(itertools.product(WIDTHS, ("row", "col")))
PAIRS = list(itertools.product(KINDS, KINDS))
OPS = ("sub", "broadcast", "init")
AXES = ("row", "col")  # row_max (one element per row) or col_max (one per column)


@hk.kernel(grid=(1,))
def vector_uses(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32],
                ov: hk.Tensor[hk.fp32], *, AXIS="row", OP="sub", SRC=None, USE=None):
    # SRC: only the vectors of tiles of that (width, layout), USE: only their uses with tiles of
    # the first (0) or the second (1) half of KINDS (None: all), as more than a few pairs'
    # stores at once outgrow gfx950's SGPRs.
    for k, ((sw, sl), (uw, ul)) in [(k, pair) for k, pair in enumerate(PAIRS) if SRC in (None, pair[0])
                                    and USE in (None, KINDS.index(pair[1]) * 2 // len(KINDS))]:
        a = x[0, 0, 0, 0].load(hk.RT(hk.fp32, ROWS, COLS)).to(WIDTHS[sw], sl)
        u = y[0, 0, 0, 0].load(hk.RT(hk.fp32, ROWS, COLS)).to(WIDTHS[uw], ul)
        v = hk.row_max(a) if AXIS == "row" else hk.col_max(a)
        if sw != uw:
            v = v.to(WIDTHS[uw])
        if OP == "sub":
            o[k, 0, 0, 0] = (hk.sub_row(u, v) if AXIS == "row" else hk.sub_col(u, v)).to(hk.fp32)
        elif OP == "broadcast":
            o[k, 0, 0, 0] = hk.broadcast(v, hk.RT(WIDTHS[uw], ROWS, COLS, ul)).to(hk.fp32)
        else:
            w = hk.row_max(u, init=v) if AXIS == "row" else hk.col_max(u, init=v)
            ov[0, 0, k, 0] = w.to(hk.fp32)


def inputs():
    # Small integers: exact in every width, and their differences fit in int8.
    g = torch.Generator().manual_seed(7)
    x = torch.randint(-50, 50, (ROWS, COLS), generator=g).float()
    y = torch.randint(-50, 50, (ROWS, COLS), generator=g).float()
    return x, y


def expected(x, y, axis, op):
    dim = 1 if axis == "row" else 0
    v = x.amax(dim=dim, keepdim=True)
    if op == "sub":
        return (y - v).expand(ROWS, COLS).unsqueeze(0).repeat(len(PAIRS), 1, 1)
    if op == "broadcast":
        return v.expand(ROWS, COLS).unsqueeze(0).repeat(len(PAIRS), 1, 1)
    return torch.maximum(y.amax(dim=dim), v.flatten()).unsqueeze(0).repeat(len(PAIRS), 1)


def make_args(axis):
    x, y = inputs()
    length = ROWS if axis == "row" else COLS
    return (x.clone(), y.clone(), torch.full((len(PAIRS), 1, ROWS, COLS), 7.0),
            torch.full((len(PAIRS), length), 7.0))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942", "gfx950"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", AXES)
def test_what_the_verifier_accepts_compiles(tmp_path, arch, op, axis):
    # Tracing runs the verifier. The tile library's type checks (its static_asserts) are
    # template instantiation, which the compiler's front end does: a syntax-only compile finds
    # them at a fraction of a full compile's cost (gfx1100 and gfx950 compile fully below).
    source = tmp_path / "kernel.hip"
    source.write_text(vector_uses.source(arch, AXIS=axis, OP=op))
    compile_lib.compile_hip(str(source), arch, os.devnull, include_dirs=[cache.include_dir()],
                            extra_flags=("-fsyntax-only",))


# hk.broadcast runs sub's code in the library (broadcast_map): compiled above, not run here.
@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("op", ["sub", "init"])
@pytest.mark.parametrize("axis", AXES)
def test_interpreter_and_emulator_compute_torchs_answer(monkeypatch, arch, op, axis):
    monkeypatch.setenv("HK_ARCH", arch)
    x, y = inputs()
    want = expected(x, y, axis, op)
    for device in ("interp", "emu"):
        monkeypatch.setenv("HK_DEVICE", device)
        args = make_args(axis)
        for kind in KINDS:
            for half in (0, 1):
                vector_uses(*args, AXIS=axis, OP=op, SRC=kind, USE=half)
        got = args[3] if op == "init" else args[2][:, 0]
        for k, pair in enumerate(PAIRS):
            assert torch.equal(got[k], want[k]), "%s on %s, %s %s, %s: %s != %s" % (
                device, arch, axis, op, pair, got[k], want[k])


@hk.kernel(grid=(1,))
def shared_row_ids(ids: hk.Tensor[hk.i32], xb: hk.Tensor[hk.bf16], xf: hk.Tensor[hk.fp32],
                   gb: hk.Tensor[hk.bf16], gf: hk.Tensor[hk.fp32], sf: hk.Tensor[hk.fp32]):
    # One vector of row ids for a 16-bit tile (a row in each lane) and a 32-bit one (rows spread
    # over the slots): whichever distribution it is given, the other use redistributes it.
    rows = ids[0, 0, 0, 0].load(hk.RV(hk.i32, ROWS, "col"))
    gb[0, 0, 0, 0] = hk.gather(xb, (0, 0, 0, 0), rows, hk.RT(hk.bf16, ROWS, COLS))
    t = hk.gather(xf, (0, 0, 0, 0), rows, hk.RT(hk.fp32, ROWS, COLS))
    gf[0, 0, 0, 0] = t
    hk.scatter(sf, (0, 0, 0, 0), rows, t)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_row_ids_shared_by_a_16_and_a_32_bit_tile(monkeypatch, arch):
    monkeypatch.setenv("HK_ARCH", arch)
    ids = torch.tensor([5, 40, -1, 3] + list(range(20, 32)), dtype=torch.int32)
    xf = torch.randint(-50, 50, (48, COLS)).float()
    rows = xf[ids.clamp(min=0).long()]
    rows[2] = 0  # a row id of -1 reads zeros
    scattered = torch.zeros(48, COLS)
    for k, r in enumerate(ids.tolist()):
        if r >= 0:
            scattered[r] = rows[k]
    for device in ("interp", "emu"):
        monkeypatch.setenv("HK_DEVICE", device)
        gb, gf, sf = torch.zeros(ROWS, COLS, dtype=torch.bfloat16), torch.zeros(ROWS, COLS), torch.zeros(48, COLS)
        shared_row_ids(ids, xf.to(torch.bfloat16), xf, gb, gf, sf)
        assert torch.equal(gb.float(), rows), device
        assert torch.equal(gf, rows), device
        assert torch.equal(sf, scattered), device


@hk.kernel(grid=(1,))
def fp32_vector_on_bf16_tile(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.bf16]):
    s = x[0, 0, 0, 0].load(hk.RT(hk.fp32, ROWS, COLS))
    p = s.to(hk.bf16)
    o[0, 0, 0, 0] = hk.sub_row(p, hk.row_max(s))  # the vector keeps s's dtype


def test_a_vector_of_another_dtype_is_refused_at_its_line():
    with pytest.raises(hk.errors.TraceError) as e:
        fp32_vector_on_bf16_tile.trace("gfx1100")
    lines, start = inspect.getsourcelines(fp32_vector_on_bf16_tile.fn)
    assert e.value.location.line == start + next(i for i, line in enumerate(lines) if "hk.sub_row" in line)
    assert "dtype" in str(e.value) and "v.to(hk.bf16)" in e.value.hint
