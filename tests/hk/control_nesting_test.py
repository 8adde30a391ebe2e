"""Control flow nested in control flow, and what it carries: a `for` anywhere inside an `if`,
lists and tuples of tiles through device loops and branches, the loop variable and the names
first bound in a loop body after the loop, and Python `range(N)` unrolling in time linear in N."""

import time

import pytest
import torch

import hk
from hk.errors import TraceError

T = hk.RT(hk.fp32, 16, 64)


@pytest.fixture(autouse=True)
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@hk.kernel(grid=(1,))
def comprehensions_in_ifs(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], n: int, *, FLAG=True):
    t = x[0, 0, 0, 0].load(T)
    if FLAG:                        # a Python if: the comprehension's i is its own, a walrus binds outside
        ts = [t * float(i + 1) for i in range(3) if (last := i) >= 0]
        t = ts[0] + ts[1] + ts[2] + float(last)
    if n > 1:                       # a device if: the same
        t = [t + float(k) for k in range(2)][1] * 2.0
    o[0, 0, 0, 0] = t


def test_comprehensions_inside_python_and_device_ifs():
    x = torch.randn(16, 64)
    for n, expected in ((1, 6 * x + 2), (2, (6 * x + 3) * 2)):
        o = torch.zeros(16, 64)
        comprehensions_in_ifs(x, o, n)
        torch.testing.assert_close(o, expected)


@hk.kernel(grid=(1,))
def loops_in_ifs(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], n: int, *, FLAG=True):
    acc = hk.zeros(T)
    if FLAG:                        # a Python if around an unrolled and a device loop
        for i in range(2):
            acc = acc + x[0, 0, 0, i].load(T)
        for j in hk.range(n):
            acc = acc + 1.0
    if n > 1:                       # a device if around both kinds of loop
        for i in range(2):
            acc = acc * 2.0
        for j in hk.range(n):
            acc = acc - 1.0
    o[0, 0, 0, 0] = acc


def test_for_loops_inside_python_and_device_ifs():
    text = loops_in_ifs.trace(arch="gfx1100").dump()
    assert text.count("scf.for") == 2 and text.count("scf.if") == 1
    x = torch.randn(16, 128)
    for n, flag in ((3, True), (1, True), (3, False)):
        o = torch.zeros(16, 64)
        loops_in_ifs(x, o, n, FLAG=flag)
        ref = (x[:, :64] + x[:, 64:] + n) if flag else torch.zeros(16, 64)
        if n > 1:
            ref = ref * 4.0 - n
        torch.testing.assert_close(o, ref)


@hk.kernel(grid=(1,))
def carried_lists(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], n: int):
    accs = [hk.zeros(T), hk.zeros(T)]
    pair = (hk.zeros(T), 0)         # a tuple with a Python int: carried as an index scalar
    for k in hk.range(n):
        t = x[0, 0, 0, 0].load(T)
        accs = [accs[0] + t, accs[1] - t]
        pair = (pair[0] + accs[0], pair[1] + 1)
    if n > 2:
        accs = [accs[1], accs[0]]   # swapped by a device if
    o[0, 0, 0, 0] = accs[0]
    o[1, 0, 0, 0] = accs[1]
    o[2, 0, 0, 0] = pair[0] + pair[1].to(hk.fp32)


def test_lists_and_tuples_of_tiles_are_carried_through_loops_and_ifs():
    x = torch.randn(16, 64)
    for n in (2, 3):
        o = torch.zeros(3, 16, 64)
        carried_lists(x, o, n)
        a, b = n * x, -n * x
        if n > 2:
            a, b = b, a
        torch.testing.assert_close(o[0], a)
        torch.testing.assert_close(o[1], b)
        torch.testing.assert_close(o[2], x * (n * (n + 1) / 2) + n)


def test_a_carried_list_that_changes_length_is_refused_at_the_loop():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], n: int):
        accs = [hk.zeros(T)]
        for i in hk.range(n):
            accs = accs + [hk.zeros(T)]
        x[0, 0, 0, 0] = accs[0]

    with pytest.raises(TraceError, match=r"'accs' changes shape in the loop: a list of 1 before, "
                                         r"a list of 2 after") as e:
        k.trace(arch="gfx1100")
    assert e.value.location.line == k.fn.__code__.co_firstlineno + 3


def test_a_carried_list_element_that_changes_type_is_named():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], n: int):
        accs = [hk.zeros(T), hk.zeros(T)]
        for i in hk.range(n):
            accs = [accs[0], accs[1].to(hk.bf16)]
        x[0, 0, 0, 0] = accs[0]

    with pytest.raises(TraceError, match=r"'accs\[1\]' changes type in the loop"):
        k.trace(arch="gfx1100")


@hk.kernel(grid=(1,))
def after_the_loop(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, N=3):
    i = 7
    for i in range(N):
        pass
    for r, c in [(0, 1), (1, 0)]:
        pass
    o[0, 0, i, 0] = x[0, 0, r, c].load(T)


def test_an_unrolled_loops_variable_keeps_its_last_value_after_the_loop():
    x = torch.randn(32, 128)
    o = torch.zeros(8 * 16, 64)
    after_the_loop(x, o)
    torch.testing.assert_close(o[32:48], x[16:32, :64])   # i == 2, (r, c) == (1, 0)
    o.zero_()
    after_the_loop(x, o, N=0)                             # no iteration: i keeps its 7
    torch.testing.assert_close(o[112:128], x[16:32, :64])


def test_a_device_loops_variable_after_the_loop_is_an_error_at_its_use():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], n: int):
        for i in hk.range(n):
            pass
        x[0, 0, i, 0] = x[0, 0, 0, 0].load(T)

    with pytest.raises(TraceError, match=r"variable of a device loop \(hk.range\), which has no "
                                         r"value after the loop") as e:
        k.trace(arch="gfx1100")
    assert e.value.location.line == k.fn.__code__.co_firstlineno + 4  # the line that uses it


def test_a_variable_of_a_loop_that_never_ran_is_an_error_at_its_use():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32]):
        for i in range(0):
            pass
        x[0, 0, i, 0] = x[0, 0, 0, 0].load(T)

    with pytest.raises(TraceError, match="loop that ran no iteration") as e:
        k.trace(arch="gfx1100")
    assert e.value.location.line == k.fn.__code__.co_firstlineno + 4


def test_python_range_unrolling_is_linear_in_its_length():
    def unrolled(n):
        @hk.kernel(grid=(1,), name="unrolled_%d" % n)
        def k(o: hk.Tensor[hk.fp32]):
            acc = hk.zeros(T)
            for i in range(n):
                acc = acc + 1.0
            o[0, 0, 0, 0] = acc

        start = time.perf_counter()
        k.trace(arch="gfx1100")
        return time.perf_counter() - start

    unrolled(100)  # warm up the bindings
    # 20,000 steps took 42 s when the register budget asked Liveness about every operation.
    assert unrolled(20000) < 10.0


@hk.kernel(grid=(1,))
def body_names(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, N=2):
    for j in range(N):
        t = x[0, 0, 0, j].load(T)   # first bound in the body
    k = 0
    while k < 3:
        u = t + float(k)
        k = k + 1
    o[0, 0, 0, 0] = t
    o[1, 0, 0, 0] = u


def test_names_first_bound_in_an_unrolled_loop_keep_their_last_value():
    x = torch.randn(16, 128)
    o = torch.zeros(2, 16, 64)
    body_names(x, o)
    torch.testing.assert_close(o[0], x[:, 64:])
    torch.testing.assert_close(o[1], x[:, 64:] + 2.0)


def test_a_name_first_bound_in_a_device_loop_is_an_error_after_it():
    @hk.kernel(grid=(1,))
    def k(x: hk.Tensor[hk.fp32], n: int):
        for i in hk.range(n):
            t = x[0, 0, i, 0].load(T)
        x[0, 0, 0, 0] = t

    with pytest.raises(TraceError, match=r"assigned only inside a device loop \(hk.range or a while "
                                         r"on device values\), so it has no value after the loop") as e:
        k.trace(arch="gfx1100")
    assert e.value.location.line == k.fn.__code__.co_firstlineno + 4


def factory_kernel(dtype, wide):
    # `dtype` and `wide` appear only in the annotations and a default: no free variables of the
    # body, yet the rewritten body (it has control flow) must not evaluate them again.
    @hk.func
    def times(t, k=3.0 if wide else 1.0):
        return t * k

    @hk.kernel(grid=(1,))
    def scaled(x: hk.Tensor[dtype], o: hk.Tensor[dtype], n: int, *, K=2.0 if wide else 1.0):
        t = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))
        if n > 1:
            t = times(t) * K
        o[0, 0, 0, 0] = t

    return scaled


def test_annotations_and_defaults_may_name_what_only_they_use():
    x = torch.randn(16, 16)
    o = torch.zeros(16, 16)
    factory_kernel(hk.fp32, True)(x, o, 2)
    assert torch.equal(o, x * 3.0 * 2.0)
    factory_kernel(hk.fp32, True)(x, o, 2, K=5.0)
    assert torch.equal(o, x * 3.0 * 5.0)
