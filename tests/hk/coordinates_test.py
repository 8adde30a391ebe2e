"""A tile coordinate is hk.tile_coord(batch, depth, row, col) or a 4-tuple, at every call that
takes one: indexing a tensor, hk.gather, hk.scatter, hk.lds.copy_to, copy_from and issue. Any
other value is a TraceError at the user's line that names the call and what it was given."""

import inspect

import pytest
import torch

import hk
from hk.errors import TraceError

HERE = __file__


@pytest.fixture(autouse=True)
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


def line_of(fn, needle):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if needle in line)


@hk.kernel(grid=(1,), warps=4)
def by_tuples(x: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.i32], o: hk.Tensor[hk.bf16],
              gathered: hk.Tensor[hk.bf16], scattered: hk.Tensor[hk.bf16]):
    one = hk.arch.block_idx.x + 1  # a device scalar in a tuple
    s = hk.lds.alloc(hk.ST(hk.bf16, 32, 64, 2))
    hk.lds.copy_to(s, 0, x, (0, 0, one, 0))             # x's rows 32..63
    hk.lds.commit(s, 1, hk.lds.issue(s, x, (0, 0, 0, 1)))  # x's rows 0..31, columns 64..127
    hk.arch.barrier()
    hk.lds.copy_from(o, (0, 0, 0, 0), s, 0)
    hk.lds.copy_from(o, (0, 0, one, 0), s, 1)
    rows = ids[(0, 0, 0, 0)].load(hk.RV(hk.i32, 16, "col"))
    t = hk.gather(x, (0, 0, 0, one), rows, hk.RT(hk.bf16, 16, 64))
    gathered[0, 0, 0, 0] = t
    hk.scatter(scattered, (0, 0, 0, 0), rows, t)


def test_every_call_takes_a_4_tuple():
    x = torch.randn(64, 128).to(torch.bfloat16)
    ids = torch.tensor([50, 33, -1, 40] + list(range(12)), dtype=torch.int32)
    o, gathered, scattered = (torch.zeros(64, 64, dtype=torch.bfloat16) for _ in range(3))
    by_tuples(x, ids, o, gathered, scattered)
    torch.testing.assert_close(o[:32], x[32:, :64], rtol=0, atol=0)
    torch.testing.assert_close(o[32:], x[:32, 64:], rtol=0, atol=0)
    rows = x[ids.clamp(min=0).long(), 64:]
    rows[2] = 0  # a row id of -1 reads zeros
    torch.testing.assert_close(gathered[:16], rows, rtol=0, atol=0)
    expected = torch.zeros(64, 64, dtype=torch.bfloat16)
    for k, r in enumerate(ids.tolist()):
        if r >= 0:
            expected[r] = rows[k]
    torch.testing.assert_close(scattered, expected, rtol=0, atol=0)


def test_a_tuple_is_the_same_coordinate_as_tile_coord():
    @hk.kernel(grid=(1,))
    def both(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = x[(0, 0, 1, 0)].load(hk.RT(hk.fp32, 16, 64))
        o[hk.tile_coord(0, 0, 1, 0)] = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))

    x, o = torch.randn(32, 64), torch.zeros(32, 64)
    both(x, o)
    torch.testing.assert_close(o, torch.cat([x[16:], x[:16]]))


@hk.kernel(grid=(1,), warps=4)
def wrong(x: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.i32], *, CALL, COORD):
    s = hk.lds.alloc(hk.ST(hk.bf16, 16, 64))
    rows = ids[0, 0, 0, 0].load(hk.RV(hk.i32, 16, "col"))
    t = hk.zeros(hk.RT(hk.bf16, 16, 64))
    if CALL == "index":
        x[COORD] = t  # the index call
    if CALL == "copy_to":
        hk.lds.copy_to(s, 0, x, COORD)  # the copy_to call
    if CALL == "copy_from":
        hk.lds.copy_from(x, COORD, s, 0)  # the copy_from call
    if CALL == "issue":
        hk.lds.issue(s, x, COORD)  # the issue call
    if CALL == "gather":
        hk.gather(x, COORD, rows, hk.RT(hk.bf16, 16, 64))  # the gather call
    if CALL == "scatter":
        hk.scatter(x, COORD, rows, t)  # the scatter call


CALLS = {"index": "x[...]", "copy_to": "hk.lds.copy_to", "copy_from": "hk.lds.copy_from",
         "issue": "hk.lds.issue", "gather": "hk.gather", "scatter": "hk.scatter"}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("coord, said", [((0, 0, 1), "a 3-tuple"), ([0, 0, 0, 0], "a list"),
                                         (2, "the number 2")])
def test_a_wrong_coordinate_is_named_at_its_call(call, coord, said):
    with pytest.raises(TraceError) as e:
        wrong.trace("gfx1100", CALL=call, COORD=coord)
    assert e.value.message == (
        "%s takes a tile coordinate, hk.tile_coord(batch, depth, row, col) or a 4-tuple (batch, depth, "
        "row, col), not %s" % (CALLS[call], said))
    assert e.value.hint.startswith("give all four")
    assert (e.value.location.file, e.value.location.line) == (HERE, line_of(wrong.fn, "# the %s call" % call))


def test_a_coordinate_part_must_be_an_integer():
    @hk.kernel(grid=(1,))
    def half(x: hk.Tensor[hk.fp32], *, ROW):
        t = x[0, 0, ROW, 0].load(hk.RT(hk.fp32, 16, 64))  # the row

    @hk.kernel(grid=(1,))
    def float_scalar(x: hk.Tensor[hk.fp32], f: float):
        hk.lds.copy_from(x, (0, 0, 0, f), hk.lds.alloc(hk.ST(hk.fp32, 16, 64)), 0)  # the column

    with pytest.raises(TraceError) as e:
        half.trace("gfx1100", ROW=1.5)
    assert e.value.message == ("the row of a tile coordinate must be an integer (a Python int or an integer "
                               "device scalar), not the number 1.5")
    assert e.value.location.line == line_of(half.fn, "# the row")
    with pytest.raises(TraceError) as e:
        float_scalar.trace("gfx1100")
    assert e.value.message.endswith("the column of a tile coordinate must be an integer (a Python int or an "
                                    "integer device scalar), not a device scalar of type f32")
    assert e.value.location.line == line_of(float_scalar.fn, "# the column")
    assert "convert a float scalar with .to(hk.i32)" in e.value.hint


def test_a_call_that_takes_a_tensor_names_what_it_got():
    @hk.kernel(grid=(1,), warps=4)
    def swapped(x: hk.Tensor[hk.bf16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 16, 64))
        hk.lds.copy_from(s, 0, x, (0, 0, 0, 0))  # copy_to's order

    with pytest.raises(TraceError) as e:
        swapped.trace("gfx1100")
    assert e.value.message == ("hk.lds.copy_from takes a tensor parameter of the kernel, not "
                               "hk.ST(hk.bf16, 16, 64, 1)")
    assert e.value.location.line == line_of(swapped.fn, "# copy_to's order")
