"""Every user error names the user's file and line, shows it, and says what to do."""

import inspect

import pytest
import torch

import hk
from hk.errors import LaunchError, TargetError, TraceError, VerifyError

HERE = __file__


def line_of(fn, needle):
    """The absolute line number of the first line of `fn` containing `needle`."""
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if needle in line:
            return start + i
    raise AssertionError(needle)


def assert_at(error, fn, needle):
    loc = error.location
    assert loc is not None, str(error)
    assert loc.file == HERE
    assert loc.line == line_of(fn, needle), str(error)
    text = str(error)
    assert "%s:%d" % (HERE, loc.line) in text
    assert needle in text  # the offending line is printed


def test_loading_the_wrong_dtype():
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.bf16]):
        t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))  # wrong dtype

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert_at(e.value, k.fn, "# wrong dtype")
    assert "hint: load with the tensor's dtype" in str(e.value)


def test_adding_tiles_of_different_shapes():
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.fp32]):
        x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))
        y = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))
        z = x + y  # shape mismatch

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert_at(e.value, k.fn, "# shape mismatch")
    assert "same type" in e.value.message


def test_bad_tile_shape():
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.fp32]):
        t = hk.RT(hk.fp32, 16, 20)  # not a multiple of 16

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert_at(e.value, k.fn, "# not a multiple of 16")


def test_barrier_under_a_warp_branch_is_refused_at_the_barrier():
    @hk.kernel(grid=(1,), warps=4)
    def k(a: hk.Tensor[hk.fp32]):
        if hk.arch.warp_id() == 0:
            hk.arch.barrier()  # divergent barrier

    with pytest.raises(VerifyError) as e:
        k.trace(arch="gfx1100")
    assert_at(e.value, k.fn, "# divergent barrier")
    assert "workgroup-wide" in e.value.message
    assert e.value.notes[0][0].line == line_of(k.fn, "if hk.arch.warp_id() == 0:")


def test_too_much_lds_lists_the_allocations():
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.bf16]):
        s1 = hk.lds.alloc(hk.ST(hk.bf16, 128, 128, 2))  # 64 KiB
        s2 = hk.lds.alloc(hk.ST(hk.bf16, 16, 16))  # one more tile

    with pytest.raises(VerifyError) as e:
        k.trace(arch="gfx1100")
    assert "needs 66048 bytes of LDS but gfx1100 has 65536" in e.value.message
    assert [n[0].line for n in e.value.notes] == [line_of(k.fn, "# 64 KiB"), line_of(k.fn, "# one more tile")]
    k.trace(arch="gfx950")  # 160 KiB there


def test_branching_on_a_tile():
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.fp32]):
        t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))
        if t > 0:  # elementwise condition
            t = t + 1.0

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert_at(e.value, k.fn, "# elementwise condition")
    assert "hk.where" in str(e.value)


def test_return_inside_a_loop():
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.fp32], n: int):
        for i in hk.range(n):
            return  # not allowed

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert_at(e.value, k.fn, "# not allowed")


def test_missing_annotation():
    def body(a, b: hk.Tensor[hk.fp32]):
        pass

    with pytest.raises(TraceError) as e:
        hk.kernel(grid=(1,))(body)
    assert "parameter 'a' needs an annotation" in e.value.message
    assert e.value.location.line == body.__code__.co_firstlineno


def test_unknown_constant_and_unknown_arch():
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.fp32], *, BLOCK=16):
        pass

    with pytest.raises(TraceError, match="has no constant"):
        k.trace(arch="gfx1100", BLOKC=32)
    with pytest.raises(TargetError, match="use one of gfx1100, gfx1201, gfx942, gfx950"):
        k.trace(arch="gfx90a")


def test_launch_errors(monkeypatch):
    @hk.kernel(grid=lambda p: (1,))
    def k(a: hk.Tensor[hk.fp32]):
        pass

    monkeypatch.delenv("HK_DEVICE", raising=False)
    with pytest.raises(LaunchError, match="HK_DEVICE=interp"):
        k(torch.zeros(16, 16))
    monkeypatch.setenv("HK_DEVICE", "interp")
    with pytest.raises(LaunchError, match="must be a tensor of hk.fp32"):
        k(torch.zeros(16, 16, dtype=torch.float16))
    with pytest.raises(LaunchError, match="takes 1 arguments"):
        k()
    with pytest.raises(LaunchError, match="unit stride"):
        k(torch.zeros(16, 16).t())
    monkeypatch.setenv("HK_DEVICE", "cuda")
    with pytest.raises(LaunchError, match="not a runner"):
        k(torch.zeros(16, 16))


def test_ops_outside_a_kernel():
    with pytest.raises(TraceError, match="inside an @hk.kernel"):
        hk.tile_coord(0, 0, 0, 0)


def test_subtile_that_does_not_divide_and_copy_into_a_subtile():
    @hk.kernel(grid=(1,))
    def uneven(a: hk.Tensor[hk.bf16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 64, 64))
        q = s[0].subtile(48, 64, 0, 0)  # 48 rows do not divide 64

    with pytest.raises(TraceError) as e:
        uneven.trace(arch="gfx1100")
    assert_at(e.value, uneven.fn, "# 48 rows")
    assert "does not divide the 64x64 shared tile" in e.value.message

    @hk.kernel(grid=(1,))
    def copy_into_view(a: hk.Tensor[hk.bf16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 64, 64))
        q = s[0].subtile(32, 64, 1, 0)
        hk.lds.copy_to(q.s, 0, a, hk.tile_coord(0, 0, 0, 0))  # copy into a view

    with pytest.raises(TraceError) as e:
        copy_into_view.trace(arch="gfx1100")
    assert_at(e.value, copy_into_view.fn, "# copy into a view")
    assert "load its parts with .subtile()" in e.value.message
