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


@pytest.mark.parametrize("dtype", [hk.bf16, hk.fp32])
def test_combining_tiles_of_different_layouts(dtype):
    # Compiled, the tile library combines tiles lane by lane; the interpreter would not mind.
    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[dtype]):
        x = a[0, 0, 0, 0].load(hk.RT(dtype, 16, 16, "row"))
        y = a[0, 0, 0, 0].load(hk.RT(dtype, 16, 16, "col"))
        z = hk.maximum(x, y)  # layout mismatch

    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert_at(e.value, k.fn, "# layout mismatch")
    assert "must share a layout" in e.value.message and "x.to(%s, 'row')" % dtype in e.value.hint


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


# What the dialect's verifiers would refuse after tracing, the language refuses first, in its
# own words and at the user's line: (kernel, its marked line, the message, a part of the hint).

T16 = hk.RT(hk.bf16, 16, 64)


def _shared_store(a: hk.Tensor[hk.bf16]):
    s = hk.lds.alloc(hk.ST(hk.bf16, 128, 128))
    s[0].store(a[0, 0, 0, 0].load(T16))  # the store


def _shared_load(a: hk.Tensor[hk.bf16]):
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 48))
    t = s[0].load(hk.RT(hk.bf16, 32, 32))  # the load


def _shared_dtype(a: hk.Tensor[hk.fp32]):
    s = hk.lds.alloc(hk.ST(hk.bf16, 16, 64))
    s[0].store(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)))  # the store


def _copy_dtype(a: hk.Tensor[hk.fp16]):
    s = hk.lds.alloc(hk.ST(hk.bf16, 16, 64))
    hk.lds.copy_to(s, 0, a, (0, 0, 0, 0))  # the copy


def _copy_vector(a: hk.Tensor[hk.fp32]):
    s = hk.lds.alloc(hk.SV(hk.fp32, 64))
    hk.lds.copy_to(s, 0, a, (0, 0, 0, 0))  # the copy


def _gather_ids(a: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.i32]):
    rows = ids[0, 0, 0, 0].load(hk.RV(hk.i32, 32, "col"))
    g = hk.gather(a, (0, 0, 0, 0), rows, T16)  # the gather


def _gather_dtype(a: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.i32]):
    rows = ids[0, 0, 0, 0].load(hk.RV(hk.i32, 16, "col"))
    g = hk.gather(a, (0, 0, 0, 0), rows, hk.RT(hk.fp32, 16, 64))  # the gather


def _scatter_ids(a: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.fp32]):
    rows = ids[0, 0, 0, 0].load(hk.RV(hk.fp32, 16, "col"))
    hk.scatter(a, (0, 0, 0, 0), rows, hk.zeros(T16))  # the scatter


def _mma_fp32(a: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 32))
    c = hk.mma_ABt(x, x, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # the mma


def _mma_k(a: hk.Tensor[hk.bf16]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    y = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))
    c = hk.mma_ABt(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # the mma


def _mma_acc(a: hk.Tensor[hk.bf16]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    y = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 32, 32))
    c = hk.mma_ABt(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # the mma


def _mma_acc_dtype(a: hk.Tensor[hk.bf16]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    c = hk.mma_ABt(x, x, hk.zeros(hk.RT(hk.bf16, 16, 16)))  # the mma


def _where_shape(a: hk.Tensor[hk.fp32]):
    t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
    m = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16)) > 0.0
    w = hk.where(m, t, 0.0)  # the where


def _where_other(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.i32]):
    t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
    w = hk.where(t > 0.0, t, b[0, 0, 0, 0].load(hk.RT(hk.i32, 16, 64)))  # the where


def _broadcast(a: hk.Tensor[hk.fp32]):
    v = hk.row_sum(a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)))
    t = hk.broadcast(v, hk.RT(hk.fp32, 32, 64))  # the broadcast


def _mask_arithmetic(a: hk.Tensor[hk.fp32]):
    m = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)) > 0.0
    n = m + m  # the sum


def _mask_reduction(a: hk.Tensor[hk.fp32]):
    m = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)) > 0.0
    n = hk.row_sum(m)  # the sum


def _mask_abs(a: hk.Tensor[hk.fp32]):
    m = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)) > 0.0
    n = hk.math.abs(m)  # the abs


def _float_tile_int_scalar(a: hk.Tensor[hk.fp32]):
    t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
    u = t * hk.arch.warp_id()  # the product


def _atomic_bf16(a: hk.Tensor[hk.bf16]):
    a.atomic_add(0, 0, 0, 0, 1.0)  # the add


def _store_scalar_width(a: hk.Tensor[hk.bf16], f: float):
    a.store_scalar(0, 0, 0, 0, f)  # the store


def _store_scalar_float_in_int(a: hk.Tensor[hk.i32], f: float):
    a.store_scalar(0, 0, 0, 0, f)  # the store


def _scalar_to_i8(a: hk.Tensor[hk.i8], n: int):
    a.store_scalar(0, 0, 0, 0, n.to(hk.i8))  # the conversion


def _fill_scalar(a: hk.Tensor[hk.fp32], f: float):
    t = hk.full(hk.RT(hk.fp32, 16, 64), f)  # the fill


def _where_vector(a: hk.Tensor[hk.fp32]):
    t = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
    v = a[0, 0, 0, 0].load(hk.RV(hk.fp32, 16, "col"))
    w = hk.where(t > 0.0, t, v)  # the where


def _set_prio(a: hk.Tensor[hk.fp32]):
    hk.arch.set_prio(4)  # the priority


REFUSED = [
    (_shared_store, "# the store",
     "cannot store hk.RT(hk.bf16, 16, 64, 'row') into a buffer of hk.ST(hk.bf16, 128, 128, 1): a store moves "
     "the whole 128x128 buffer",
     "store a 16x64 part of it: s[buffer].subtile(16, 64, i, j).store(tile), (i, j) counting 16x64 tiles"),
    (_shared_load, "# the load",
     "cannot load hk.RT(hk.bf16, 32, 32, 'row') from a buffer of hk.ST(hk.bf16, 64, 48, 1): a load moves "
     "the whole 64x48 buffer",
     "load a 64x48 register tile, or allocate a shared tile of the register tile's shape"),
    (_shared_dtype, "# the store", "cannot store hk.fp32 elements into a buffer of hk.ST(hk.bf16, 16, 64, 1)",
     "convert first: value.to(hk.bf16)"),
    (_copy_dtype, "# the copy", "hk.lds.copy_to cannot read hk.bf16 elements from a, a tensor of hk.fp16",
     "use the tensor's dtype, hk.fp16"),
    (_copy_vector, "# the copy", "hk.lds.copy_to copies a shared tile (hk.ST), not hk.SV(hk.fp32, 64, 1)",
     "move a vector through registers"),
    (_gather_ids, "# the gather",
     "hk.gather takes its row indices as hk.RV(hk.i32, 16, 'col'), one per row of the tile, not "
     "hk.RV(hk.i32, 32, 'col')", "ids = t[coord].load(hk.RV(hk.i32, 16, 'col'))"),
    (_gather_dtype, "# the gather", "hk.gather cannot read hk.fp32 elements from a, a tensor of hk.bf16",
     "use the tensor's dtype, hk.bf16"),
    (_scatter_ids, "# the scatter",
     "hk.scatter takes its row indices as hk.RV(hk.i32, 16, 'col'), one per row of the tile, not "
     "hk.RV(hk.fp32, 16, 'col')", "ids.to(hk.i32)"),
    (_mma_fp32, "# the mma",
     "hk.mma_ABt multiplies bf16 or fp16 operands (8-bit where the target has them), and a is "
     "hk.RT(hk.fp32, 16, 32, 'row')", "a.to(hk.bf16)"),
    (_mma_k, "# the mma", "hk.mma_ABt: a (16x32) and b (16x64) disagree on K, 32 and 64",
     "in mma_ABt a is M x K, b is N x K"),
    (_mma_acc, "# the mma", "hk.mma_ABt of a (16x32) and b (32x32) is 16x32, but c is 16x16",
     "hk.zeros(hk.RT(hk.fp32, 16, 32))"),
    (_mma_acc_dtype, "# the mma",
     "hk.mma_ABt accumulates in an hk.fp32 tile in row layout, and c is hk.RT(hk.bf16, 16, 16, 'row')",
     "hk.zeros(hk.RT(hk.fp32, M, N))"),
    (_where_shape, "# the where", "hk.where's mask is 16x16 but its tile hk.RT(hk.fp32, 16, 64, 'row') is 16x64",
     "compare tiles of the shape"),
    (_where_other, "# the where",
     "hk.where chooses between tiles of one type, not hk.RT(hk.fp32, 16, 64, 'row') and "
     "hk.RT(hk.i32, 16, 64, 'row')", ".to(...)"),
    (_broadcast, "# the broadcast",
     "hk.broadcast cannot repeat hk.RV(hk.fp32, 16, 'col') over hk.RT(hk.fp32, 32, 64, 'row')",
     "one element per row (length = rows)"),
    (_mask_arithmetic, "# the sum", "arithmetic is not defined on a 16x64 mask (a comparison's result)",
     "hk.where(mask, a, b)"),
    (_mask_reduction, "# the sum", "a reduction is not defined on a 16x64 mask",
     "hk.where(mask, hk.full(spec, 1.0), 0.0)"),
    (_mask_abs, "# the abs", "hk.math.abs is not defined on a 16x64 mask", "hk.where"),
    (_float_tile_int_scalar, "# the product",
     "cannot combine hk.RT(hk.fp32, 16, 64, 'row') with a device scalar of type index", ".to(hk.fp32)"),
    (_atomic_bf16, "# the add", "a.atomic_add adds to an hk.fp32 or hk.i32 tensor, and a is a tensor of hk.bf16",
     "accumulate into an fp32"),
    (_store_scalar_width, "# the store", "a.store_scalar takes an element of hk.bf16, not a device scalar of "
     "type f32", "value.to(hk.bf16)"),
    (_store_scalar_float_in_int, "# the store", "a.store_scalar takes an element of hk.i32, not a device "
     "scalar of type f32", "value.to(hk.i32)"),
    (_scalar_to_i8, "# the conversion", "a device scalar converts to hk.i32 or a float dtype (hk.fp32, hk.bf16, "
     "hk.fp16), not hk.i8", "keep device integers as hk.i32"),
    (_fill_scalar, "# the fill", "a tile is filled with a Python number, not a device scalar of type f32",
     "hk.zeros(spec) + s"),
    (_where_vector, "# the where", "hk.where's third argument is a tile of the second's type, a device scalar or "
     "a Python number, not ", ""),
    (_set_prio, "# the priority", "hk.arch.set_prio takes a Python int from 0 to 3, not 4", "0 (lowest) to 3"),
]


@pytest.mark.parametrize("body, marker, message, hint", REFUSED, ids=[c[0].__name__.strip("_") for c in REFUSED])
def test_what_the_verifier_would_refuse_is_said_in_the_languages_words(body, marker, message, hint):
    k = hk.kernel(grid=(1,), warps=4)(body)
    with pytest.raises(TraceError) as e:
        k.trace(arch="gfx1100")
    assert e.value.message.startswith(message), e.value.message
    assert hint in (e.value.hint or ""), e.value.hint
    assert_at(e.value, body, marker)
    assert "'hk." not in e.value.message  # no operation's name: those are the IR's words


def test_a_tensor_of_five_dimensions_is_named_at_the_call(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")

    @hk.kernel(grid=(1,))
    def k(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.fp32]):
        pass

    with pytest.raises(LaunchError) as e:
        k(torch.zeros(16), torch.zeros(1, 2, 3, 4, 5))  # five dimensions
    assert e.value.message == ("kernel k: argument 'b' has 5 dimensions (1, 2, 3, 4, 5); a tensor argument has "
                               "1 to 4, seen as (batch, depth, rows, cols)")
    assert "x.flatten(0, 1)" in e.value.hint
    assert_at(e.value, test_a_tensor_of_five_dimensions_is_named_at_the_call, "# five dimensions")


def test_kernel_options_and_shared_vectors_are_checked_where_they_are_written():
    def body(a: hk.Tensor[hk.fp32]):
        pass

    with pytest.raises(TraceError, match=r"max_vgprs must be a positive integer or None, not -1") as e:
        hk.kernel(grid=(1,), max_vgprs=-1)(body)
    assert e.value.location.line == body.__code__.co_firstlineno
    with pytest.raises(TraceError, match=r"min_occupancy must be a positive integer or None, not 1.5"):
        hk.kernel(grid=(1,), min_occupancy=1.5)(body)
    with pytest.raises(TraceError, match="a shared vector needs at least 1 buffer but got 0"):
        hk.SV(hk.fp32, 16, 0)
