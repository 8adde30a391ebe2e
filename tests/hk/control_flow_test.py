"""Python for/if/while on device values become scf ops carrying the names they assign;
loops over Python values unroll and ifs on constants pick a branch while tracing."""

import pytest
import torch

import hk
from hk.errors import TraceError

T = hk.RT(hk.fp32, 16, 64)


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)))
def row_sums(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32]):
    row = hk.arch.block_idx.y
    acc = hk.zeros(T)
    for j in hk.range(hk.cdiv(x.cols, 64)):
        acc = acc + x[0, 0, row, j].load(T)
    # A vector lies along the last dimension: the 16 row sums go to out[16 * row : 16 * row + 16].
    out[0, 0, 0, row] = hk.row_sum(acc)


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)))
def unrolled(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], *, TILES=2):
    acc = hk.zeros(T)
    for j in range(TILES):
        acc = acc + x[0, 0, hk.arch.block_idx.y, j].load(T)
    out[0, 0, hk.arch.block_idx.y, 0] = acc


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16)))
def scale_first_block(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], factor: float):
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = x[idx].load(T)
    if hk.arch.block_idx.x == 0:
        t = t * factor
    else:
        t = t + 1.0
    out[idx] = t


@hk.kernel(grid=lambda p: (1, 1))
def doubling(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], n: int):
    t = x[0, 0, 0, 0].load(T)
    i = 0
    while i < n:
        t = t + t
        i = i + 1
    out[0, 0, 0, 0] = t


@hk.kernel(grid=lambda p: (1, 1))
def constant_branch(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], *, NEGATE=False):
    t = x[0, 0, 0, 0].load(T)
    if NEGATE:
        t = -t
    out[0, 0, 0, 0] = t


@pytest.fixture(autouse=True)
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("rows,cols", [(32, 256), (40, 200)], ids=["aligned", "ragged"])
def test_device_loop_carries_the_accumulator(rows, cols):
    text = row_sums.trace(arch="gfx1100").dump()
    assert "scf.for" in text and "iter_args" in text
    x = torch.randn(rows, cols)
    out = torch.zeros(rows)
    row_sums(x, out)
    torch.testing.assert_close(out, x.sum(1), rtol=1e-5, atol=1e-4)


def test_python_loop_unrolls():
    text = unrolled.trace(arch="gfx1100").dump()
    assert "scf.for" not in text
    assert text.count("hk.load") == 2
    assert unrolled.trace(arch="gfx1100", TILES=3).dump().count("hk.load") == 3
    x = torch.randn(16, 128)
    out = torch.zeros(16, 64)
    unrolled(x, out)
    torch.testing.assert_close(out, x[:, :64] + x[:, 64:])


def test_if_on_a_device_scalar_yields_the_branch_value():
    text = scale_first_block.trace(arch="gfx1100").dump()
    assert "scf.if" in text and "scf.yield" in text
    x = torch.randn(16, 128)
    out = torch.zeros(16, 128)
    scale_first_block(x, out, 3.0)
    torch.testing.assert_close(out[:, :64], x[:, :64] * 3.0)
    torch.testing.assert_close(out[:, 64:], x[:, 64:] + 1.0)


def test_while_on_a_device_value():
    assert "scf.while" in doubling.trace(arch="gfx1100").dump()
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    doubling(x, out, 3)
    torch.testing.assert_close(out, x * 8)


def test_if_on_a_constant_picks_a_branch_while_tracing():
    assert "scf.if" not in constant_branch.trace(arch="gfx1100").dump()
    assert "hk.unary neg" in constant_branch.trace(arch="gfx1100", NEGATE=True).dump()
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    constant_branch(x, out, NEGATE=True)
    torch.testing.assert_close(out, -x)


def test_name_bound_in_one_branch_of_a_device_if():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32]):
        if hk.arch.block_idx.x == 0:
            y = x[0, 0, 0, 0].load(T)
        x[0, 0, 0, 0] = y  # bound in one branch only

    with pytest.raises(TraceError, match="only one branch"):
        k.trace(arch="gfx1100")


def test_a_loop_carrying_a_name_bound_in_one_branch_names_it_at_the_loop():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], n: int, *, SPLIT=False):
        t = x[0, 0, 0, 0].load(T)
        if SPLIT:
            part = t
        for i in hk.range(n):
            part = t + 1.0  # carried (bound before the loop), but unbound when SPLIT is False
            t = part
        x[0, 0, 0, 0] = t

    with pytest.raises(TraceError, match="'part' is carried by this device loop or branch, but at its start it is "
                                         "bound in only one branch") as e:
        k.trace(arch="gfx1100")
    assert e.value.location.line == k.fn.__code__.co_firstlineno + 5  # the loop's line, not the caller's


def test_an_undefined_value_is_an_error_where_used_and_invisible_to_introspection():
    from hk.dsl.values import UNDEFINED

    with pytest.raises(TraceError, match="only one branch"):
        UNDEFINED.load  # noqa: B018 (a use, as a kernel's line makes it)
    # The markers are module globals: tools that scan modules (vLLM's kernel registry does, with
    # hasattr(value, "__dict__")) must see an object without attributes, not an error.
    assert not hasattr(UNDEFINED, "__dict__") and not hasattr(UNDEFINED, "__wrapped__")


@hk.kernel(grid=lambda p: (1, 1))
def clamped(o: hk.Tensor[hk.i32], n: int):
    # An int argument (an i32) and Python numbers (indices) carried through one name.
    k = n
    if k > 5:
        k = 0
    j = 0
    for i in hk.range(2):
        j = n
    m = n
    while m > 100:
        m = 100
    o.store_scalar(0, 0, 0, 0, k)
    o.store_scalar(0, 0, 0, 1, j)
    o.store_scalar(0, 0, 0, 2, m)


@pytest.mark.parametrize("n, want", [(9, [0, 9, 9]), (3, [3, 3, 3]), (300, [0, 300, 100])])
def test_an_int_argument_and_python_numbers_share_a_carried_name(n, want):
    o = torch.zeros(1, 16, dtype=torch.int32)
    clamped(o, n)
    assert o[0, :3].tolist() == want


def test_carried_value_changing_type():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], n: int):
        t = x[0, 0, 0, 0].load(T)
        for i in hk.range(n):
            t = t.to(hk.bf16)  # changes the carried type

    with pytest.raises(TraceError, match="changes type in the loop") as e:
        k.trace(arch="gfx1100")
    assert e.value.location.line == k.fn.__code__.co_firstlineno + 3
