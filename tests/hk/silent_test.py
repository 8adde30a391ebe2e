"""What used to pass silently is an hk error at the user's line: float grids, generator and async
bodies, a float for an int, ints beyond 32 bits, constants that print alike, constant LDS buffer
and subtile indices out of range, inputs smaller than the output they are read for, a returned
value; launch and target errors name the call; the column-layout LDS warning
shows when a kernel is traced, built or called, and so does the warning of register tiles near
the budget."""

import inspect
import warnings

import pytest
import torch

import hk
from hk.errors import HKWarning, LaunchError, TargetError, TraceError

HERE = __file__
T = hk.RT(hk.fp32, 16, 64)


@pytest.fixture(autouse=True)
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


def here(needle, fn=None):
    """The line of this file (or of `fn`) holding `needle`."""
    lines, start = inspect.getsourcelines(fn) if fn else (open(HERE).read().splitlines(), 1)
    return start + next(i for i, l in enumerate(lines) if needle in l)


def at(error, needle, fn=None):
    assert error.location is not None, str(error)
    assert (error.location.file, error.location.line) == (HERE, here(needle, fn)), str(error)


@hk.kernel(grid=(1,))
def copy(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], n: int):
    o[0, 0, n, 0] = x[0, 0, 0, 0].load(T)


def test_scalar_arguments_are_checked_at_the_call():
    x, o = torch.rand(16, 64), torch.zeros(64, 64)
    with pytest.raises(LaunchError, match="'n' must be a Python int, not float 2.7") as e:
        copy(x, o, 2.7)  # the float call
    at(e.value, "# the float call")
    with pytest.raises(LaunchError, match=r"'n' = 2147483648 does not fit the kernel's 32-bit int") as e:
        copy(x, o, 2 ** 31)  # the wide call
    at(e.value, "# the wide call")
    copy(x, o, torch.tensor(2))  # an integer that is not an int: its value
    torch.testing.assert_close(o[32:48], x)


def test_a_float_grid_is_refused_not_truncated():
    @hk.kernel(grid=lambda p: (p.x.rows / 16,))
    def k(x: hk.Tensor[hk.fp32]):
        pass

    with pytest.raises(LaunchError, match=r"1 to 3 non-negative integers, got \(1.0,\)") as e:
        k(torch.zeros(16, 64))  # the call
    at(e.value, "# the call")

    @hk.kernel(grid=lambda p: (p.q,))
    def typo(x: hk.Tensor[hk.fp32], *, BLOCK=16):
        pass

    with pytest.raises(LaunchError, match="asks for 'q', which is neither a parameter nor a "
                                          r"constant \(it has BLOCK, x\)"):
        typo(torch.zeros(16, 64))


def test_generator_and_async_bodies_are_refused_at_their_yield():
    def gen(o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = hk.zeros(T)
        yield  # the yield

    async def coro(o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = hk.zeros(T)

    with pytest.raises(TraceError, match="kernel gen is a generator function") as e:
        hk.kernel(gen, grid=(1,))
    at(e.value, "# the yield")
    with pytest.raises(TraceError, match="kernel coro is a coroutine function") as e:
        hk.kernel(coro, grid=(1,))
    assert e.value.location.line == coro.__code__.co_firstlineno
    with pytest.raises(TraceError, match="@hk.func gen is a generator function"):
        hk.func(gen)


def test_a_returned_value_is_refused_at_the_return():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32]):
        t = x[0, 0, 0, 0].load(T)
        return t * 2.0  # the return

    with pytest.raises(TraceError, match="kernel k returns Tile; a kernel's results are what it stores") as e:
        k.trace(arch="gfx1100")
    at(e.value, "# the return")


class Same:
    """Two values that print alike."""

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return "Same"

    def __hash__(self):
        return hash(self.v)

    def __eq__(self, other):
        return isinstance(other, Same) and other.v == self.v

    def __rmul__(self, t):
        return t * self.v


def test_constants_key_specializations_by_value_not_by_their_printing():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, C=1):
        o[0, 0, 0, 0] = x[0, 0, 0, 0].load(T) * C

    x, o = torch.rand(16, 64), torch.zeros(16, 64)
    k(x, o, C=Same(2.0))
    torch.testing.assert_close(o, x * 2.0)
    k(x, o, C=Same(3.0))
    torch.testing.assert_close(o, x * 3.0)
    assert k.trace(C=1) is not k.trace(C=1.0)

    @hk.kernel(grid=(1,))
    def unused(x: hk.Tensor[hk.fp32], *, C=1):
        pass

    assert unused.trace(C=(1, [2])) is unused.trace(C=(1, [2])) is not unused.trace(C=(1, [3]))
    with pytest.raises(TraceError, match="constant C = {} is a dict, which cannot key a specialization"):
        unused.trace(C={})


def test_constant_lds_buffer_and_subtile_indices_are_checked_while_tracing():
    @hk.kernel(grid=(1,))
    def buffers(x: hk.Tensor[hk.fp32]):
        s = hk.lds.alloc(hk.ST(hk.fp32, 16, 64, 2))
        s[2].store(x[0, 0, 0, 0].load(T))  # the buffer

    @hk.kernel(grid=(1,))
    def copies(x: hk.Tensor[hk.fp32]):
        s = hk.lds.alloc(hk.ST(hk.fp32, 16, 64))
        hk.lds.copy_to(s, 1, x, hk.tile_coord(0, 0, 0, 0))  # the copy

    @hk.kernel(grid=(1,))
    def subtiles(x: hk.Tensor[hk.fp32]):
        s = hk.lds.alloc(hk.ST(hk.fp32, 32, 64))
        s[0].subtile(16, 64, 2, 0).store(x[0, 0, 0, 0].load(T))  # the subtile

    with pytest.raises(TraceError, match="buffer 2 of a shared tile with 2 buffers") as e:
        buffers.trace(arch="gfx1100")
    at(e.value, "# the buffer")
    with pytest.raises(TraceError, match="buffer 1 of a shared tile with 1 buffer") as e:
        copies.trace(arch="gfx1100")
    at(e.value, "# the copy")
    with pytest.raises(TraceError, match="subtile row index 2 is outside the 2 16x64 subtiles") as e:
        subtiles.trace(arch="gfx1100")
    at(e.value, "# the subtile")


def test_a_device_lds_buffer_index_out_of_range_is_an_error_on_the_interpreter():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], b: int):
        s = hk.lds.alloc(hk.ST(hk.fp32, 16, 64, 2))
        s[b].store(x[0, 0, 0, 0].load(T))  # the store

    x = torch.rand(16, 64)
    k(x, 1)
    with pytest.raises(LaunchError, match=r"buffer -1 of a shared tile with 2 buffer\(s\)") as e:
        k(x, -1)
    at(e.value, "# the store")


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.o.rows, 16)))
def same_tile(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, 0)
    o[idx] = x[idx].load(T) + 1.0  # the read


def test_an_input_smaller_than_the_output_it_is_read_for_is_refused_at_the_read():
    with pytest.raises(LaunchError, match="x is read at the tile o is written at, but x has 16 rows "
                                          "where o has 64") as e:
        same_tile(torch.rand(16, 64), torch.zeros(64, 64))
    at(e.value, "# the read", same_tile.fn)
    # A larger input, or one whose tiles the grid never reaches, is fine.
    x, o = torch.rand(80, 64), torch.zeros(64, 64)
    same_tile(x, o)
    torch.testing.assert_close(o, x[:64] + 1.0)

    @hk.kernel(grid=(2,))
    def first_two(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        idx = hk.tile_coord(0, 0, hk.arch.block_idx.x, 0)
        o[idx] = x[idx].load(T)

    x, o = torch.rand(32, 64), torch.zeros(64, 64)
    first_two(x, o)  # o's last 32 rows are not written
    torch.testing.assert_close(o[:32], x)


def test_launch_and_target_errors_name_the_users_line(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "cuda")
    with pytest.raises(LaunchError) as e:
        copy(torch.zeros(16, 64), torch.zeros(16, 64), 0)  # the bad device
    at(e.value, "# the bad device")
    with pytest.raises(TargetError) as e:
        copy.trace(arch="gfx90a")  # the bad arch
    at(e.value, "# the bad arch")


def test_bool_and_int64_tensors_are_refused_with_what_to_use():
    with pytest.raises(TraceError, match="there are no bool, 64-bit or unsigned element types"):
        hk.Tensor[torch.int64]
    with pytest.raises(LaunchError, match="must be a tensor of hk.fp32 but is torch.int64") as e:
        copy(torch.zeros(16, 64, dtype=torch.int64), torch.zeros(16, 64), 0)
    assert "no int64 element type" in e.value.hint
    with pytest.raises(LaunchError, match="but is torch.bool"):
        copy(torch.zeros(16, 64, dtype=torch.bool), torch.zeros(16, 64), 0)


def test_a_non_hk_exception_from_inside_hk_becomes_an_error_at_the_users_line():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32]):
        x[0, 0, 0, 0] = hk.tril(hk.zeros(T), value="one")  # the bad fill

    with pytest.raises(TraceError, match=r"hk cannot use what this line passes it \(ValueError") as e:
        k.trace(arch="gfx1100")
    at(e.value, "# the bad fill")


def test_the_users_own_python_error_while_tracing_is_an_error_at_its_line():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32]):
        x[0, 0, 0, 0] = hk.zeros(T) + undefined_name  # noqa: F821 - the typo

    with pytest.raises(TraceError, match="this line raised NameError: name 'undefined_name' is not defined") as e:
        k.trace(arch="gfx1100")
    at(e.value, "# noqa: F821 - the typo")

    @hk.kernel(grid=(1,))
    def short(x: hk.Tensor[hk.fp32]):
        x.store_scalar(0, 0, 0, x.load_scalar(0, 0, 0))  # the short call

    with pytest.raises(TraceError, match=r"this line raised TypeError: .*load_scalar\(\) missing 1 required") as e:
        short.trace(arch="gfx1100")
    at(e.value, "# the short call")


@hk.kernel(grid=(1,), warps=4)
def column_reads(a: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    sa = hk.lds.alloc(hk.ST(hk.bf16, 32, 16))
    hk.lds.copy_to(sa, 0, a, hk.tile_coord(0, 0, 0, 0))
    hk.arch.barrier()
    tb = sa[0].load(hk.RT(hk.bf16, 32, 16, "col"))  # the slow read
    c[0, 0, 0, 0] = hk.mma_AB(hk.zeros(hk.RT(hk.bf16, 16, 32)), tb, hk.zeros(hk.RT(hk.fp32, 16, 16)))


def test_the_column_layout_warning_shows_when_the_kernel_is_first_traced():
    args = (torch.zeros(32, 16, dtype=torch.bfloat16), torch.zeros(16, 16))
    with pytest.warns(HKWarning, match="eight times the instructions") as caught:
        column_reads(*args)
    (w,) = [w for w in caught if issubclass(w.category, HKWarning)]
    assert (w.filename, w.lineno) == (HERE, here("# the slow read", column_reads.fn))
    with warnings.catch_warnings():
        warnings.simplefilter("error", HKWarning)
        column_reads(*args)  # once per specialization, not on every call


@hk.kernel(grid=(1,))
def near_the_budget(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 64))  # 128 VGPRs per lane on gfx1100
    y = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 32, 64))  # 64
    z = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))  # 32
    w = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))  # 16: the peak, 240
    o[0, 0, 0, 0] = x
    o[0, 0, 0, 0] = y
    o[0, 0, 0, 0] = z
    o[0, 0, 0, 0] = w


def test_tiles_near_the_register_budget_warn_at_the_kernel_while_tracing():
    with pytest.warns(HKWarning) as caught:
        near_the_budget.trace("gfx1100")
    (w,) = [w for w in caught if issubclass(w.category, HKWarning)]
    assert (w.filename, w.lineno) == (HERE, near_the_budget.fn.__code__.co_firstlineno)
    message = str(w.message)
    assert message.startswith("register tiles live at the peak need 240 of the 256 VGPRs per lane the "
                              "target's budget on gfx1100 allows; the compiled kernel also keeps addresses, "
                              "indices and temporaries in VGPRs, so it may spill, which the resource gate "
                              "refuses")
    assert "\n  note: %s:%d:" % (HERE, here("# 16: the peak", near_the_budget.fn)) in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", HKWarning)
        near_the_budget.trace("gfx942")  # wave64: 120 of 512, far from it
        near_the_budget.trace("gfx1100")  # once per specialization
