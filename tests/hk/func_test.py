"""@hk.func: device functions are inlined where a kernel calls them, with their own control
flow rewritten and their own lines in diagnostics."""

import inspect

import pytest
import torch

import hk
from hk.errors import TraceError, VerifyError

T = hk.RT(hk.fp32, 16, 64)


@hk.func
def scaled_silu(t, scale):
    return hk.math.silu(t) * scale


@hk.func
def power(t, n):
    # A device loop inside the function: n is a kernel argument.
    acc = hk.full(T, 1.0)
    for _ in hk.range(n):
        acc = acc * t
    return acc


@hk.func()
def both_ends(t):
    return hk.row_max(t), hk.row_min(scaled_silu(t, 2.0))


@hk.kernel(grid=(1,))
def uses_funcs(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], v: hk.Tensor[hk.fp32], n: int):
    t = x[0, 0, 0, 0].load(T)
    o[0, 0, 0, 0] = scaled_silu(t, 0.5)
    o[1, 0, 0, 0] = power(t, n)
    hi, lo = both_ends(t)
    v[0, 0, 0, 0] = hi
    v[0, 0, 1, 0] = lo


def expected(x, n):
    silu = torch.nn.functional.silu(x)
    return [silu * 0.5, x ** n], [x.amax(1), (silu * 2.0).amin(1)]


@pytest.mark.parametrize("device", ["interp", "emu"])
def test_functions_inline_into_the_kernel(monkeypatch, device):
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    x = torch.rand(16, 64) + 0.5
    o, v = torch.zeros(2, 16, 64), torch.zeros(2, 64)
    uses_funcs(x, o, v, 3)
    tiles, vectors = expected(x, 3)
    for got, ref in zip(o, tiles):
        torch.testing.assert_close(got, ref, rtol=2e-5, atol=1e-5)
    torch.testing.assert_close(v[0, :16], vectors[0])
    torch.testing.assert_close(v[1, :16], vectors[1], rtol=2e-5, atol=1e-5)


def test_the_loop_in_a_function_is_a_device_loop():
    ir = uses_funcs.trace(arch="gfx1100").dump()
    assert ir.count("scf.for") == 1
    assert "func.call" not in ir  # inlined, not called


def test_func_is_a_decorator_with_or_without_parentheses():
    assert isinstance(scaled_silu, hk.Func) and isinstance(both_ends, hk.Func)
    assert scaled_silu.__name__ == "scaled_silu" and "device functions" not in (scaled_silu.__doc__ or "")
    assert hk.func()(lambda t: t).__class__ is hk.Func


def test_calling_a_function_outside_a_kernel():
    with pytest.raises(TraceError) as e:
        scaled_silu(torch.zeros(16, 64), 1.0)
    assert "runs only inside a kernel being traced" in e.value.message
    assert e.value.location.file == __file__
    assert e.value.location.line == inspect.getsourcelines(scaled_silu.fn)[1]


@hk.func
def bad_add(t):
    return t + hk.zeros(hk.RT(hk.fp32, 16, 32))  # shapes differ


def test_an_error_in_a_function_points_at_its_line():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32]):
        bad_add(x[0, 0, 0, 0].load(T))

    with pytest.raises((TraceError, VerifyError)) as e:
        k.trace(arch="gfx1100")
    lines, start = inspect.getsourcelines(bad_add.fn)
    assert e.value.location.line == start + [i for i, l in enumerate(lines) if "# shapes differ" in l][0]


def test_return_inside_an_if_is_refused():
    @hk.func
    def early(t, flag):
        if flag:
            return t  # early return
        return t * 2.0

    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], f: int):
        early(x[0, 0, 0, 0].load(T), f > 0)

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert "'return' inside an if" in e.value.message
    lines, start = inspect.getsourcelines(early.fn)
    assert e.value.location.line == start + [i for i, l in enumerate(lines) if "# early return" in l][0]


@hk.func
def countdown(t, n):
    # Recursion on a device value never ends at trace time.
    return countdown(t * 2.0, n - 1)


def test_unbounded_recursion_is_an_error_not_a_hang():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], n: int):
        countdown(x[0, 0, 0, 0].load(T), n)

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert "calls itself more than 64 deep" in e.value.message


@hk.func
def halve_until(t, depth):
    # Recursion on a Python value unrolls and ends.
    if depth == 0:
        out = t
    else:
        out = halve_until(t * 0.5, depth - 1)
    return out


def test_recursion_on_python_values_unrolls(monkeypatch):
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = halve_until(x[0, 0, 0, 0].load(T), 3)

    monkeypatch.setenv("HK_DEVICE", "interp")
    x, o = torch.randn(16, 64), torch.zeros(16, 64)
    k(x, o)
    assert torch.equal(o, x / 8)
