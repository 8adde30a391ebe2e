"""Split copies (hk.lds.issue / hk.lds.commit), the divisors a call specializes on, hk.range's
unroll=N, and conversions stored on the way: traced, translated, and run on the interpreter and,
compiled, on the emulator (whose hazard detector checks every derived wait)."""

import pytest
import torch

import hk
from hk import types
from hk.errors import HKError, TraceError

ARCHS = ["gfx1100", "gfx950"]


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 32), hk.cdiv(p.o.rows, 64)), warps=4)
def staged_copy(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    # Copies A through LDS in a pipeline of two buffers: each step's tile is issued one step
    # ahead, committed into the other buffer, and read back by every wave.
    by = hk.arch.block_idx.y
    bx = hk.arch.block_idx.x
    w = hk.arch.warp_id()
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32, 2))
    hk.lds.commit(s, 0, hk.lds.issue(s, a, hk.tile_coord(0, 0, by, bx)))
    hk.arch.barrier()
    for k in hk.range(2, unroll=2):
        nxt = hk.lds.issue(s, a, hk.tile_coord(0, 0, by, bx + k + 1))
        t = s[k % 2].subtile(16, 32, w, 0).load(hk.RT(hk.bf16, 16, 32))
        o[0, 0, by * 4 + w, bx + k] = t
        hk.lds.commit(s, (k + 1) % 2, nxt)
        hk.arch.barrier()


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 32), 1), warps=4)
def row_walk(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    # Walks A's 64-row tiles from the one before the first (row tile -1) to past the last, as
    # B of A·B and K and V of attention walk theirs; output tile k is A's row tile k - 1.
    bx = hk.arch.block_idx.x
    w = hk.arch.warp_id()
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32, 2))
    hk.lds.commit(s, 0, hk.lds.issue(s, a, hk.tile_coord(0, 0, -1, bx)))
    hk.arch.barrier()
    for k in hk.range(o.rows // 64, unroll=2):
        nxt = hk.lds.issue(s, a, hk.tile_coord(0, 0, k, bx))
        o[0, 0, k * 4 + w, bx] = s[k % 2].subtile(16, 32, w, 0).load(hk.RT(hk.bf16, 16, 32))
        hk.lds.commit(s, (k + 1) % 2, nxt)
        hk.arch.barrier()


@hk.kernel(grid=lambda p: (hk.cdiv(p.a.cols, 64), hk.cdiv(p.a.rows, 32)), warps=4)
def transposed_copy(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    # A's 32 x 64 tile (by, bx) into a 64 x 32 shared tile, transposed; each wave writes 16 rows
    # of it to Aᵀ's tile (bx, by).
    by = hk.arch.block_idx.y
    bx = hk.arch.block_idx.x
    w = hk.arch.warp_id()
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32))
    hk.lds.commit(s, 0, hk.lds.issue(s, a, hk.tile_coord(0, 0, by, bx), transpose=True))
    hk.arch.barrier()
    o[0, 0, bx * 4 + w, by] = s[0].subtile(16, 32, w, 0).load(hk.RT(hk.bf16, 16, 32))


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.a.rows, 64)), warps=4)
def conditional_prefetch(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    # Each step commits the tile in flight, then issues the next one only if there is one: the
    # loads stay in flight across the if and the loop's back edge until the next commit.
    by = hk.arch.block_idx.y
    w = hk.arch.warp_id()
    s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32, 2))
    steps = hk.cdiv(a.cols, 32)
    nxt = hk.lds.issue(s, a, hk.tile_coord(0, 0, by, 0))
    for k in hk.range(steps):
        hk.lds.commit(s, k % 2, nxt)
        hk.arch.barrier()
        if k + 1 < steps:
            nxt = hk.lds.issue(s, a, hk.tile_coord(0, 0, by, k + 1))
        o[0, 0, by * 4 + w, k] = s[k % 2].subtile(16, 32, w, 0).load(hk.RT(hk.bf16, 16, 32))


@hk.kernel(grid=(1,))
def unrolled_sum(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, N=3):
    acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
    for i in hk.range(x.rows // 16, unroll=N):
        acc = acc + x[0, 0, i, 0].load(hk.RT(hk.fp32, 16, 16)) * (i % 2 + 1).to(hk.fp32)
    o[0, 0, 0, 0] = acc


@hk.kernel(grid=(1,), warps=1)
def converted_store(x: hk.Tensor[hk.fp32], ob: hk.Tensor[hk.bf16], oh: hk.Tensor[hk.fp16]):
    t = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 32, 32))
    ob[0, 0, 0, 0] = t.to(hk.bf16)
    oh[0, 0, 0, 0] = t.to(hk.fp16)


def use_device(monkeypatch, device):
    """Runs what follows on `device`: "interp", or "emu:<arch>"."""
    kind, _, arch = device.partition(":")
    monkeypatch.setenv("HK_DEVICE", kind)
    if arch:
        monkeypatch.setenv("HK_ARCH", arch)


def expected_copy(a, cols):
    """What staged_copy writes into `cols` columns: A, and zeros past its last column."""
    out = torch.zeros(a.shape[0], cols, dtype=a.dtype)
    out[:, :a.shape[1]] = a[:, :cols]
    return out


@pytest.mark.parametrize("device", ["interp"] + ["emu:" + a for a in ARCHS])
@pytest.mark.parametrize("rows,cols,width", [(128, 64, 64), (100, 64, 64), (64, 40, 64), (64, 33, 64),
                                             (70, 34, 64), (64, 44, 64)])
def test_staged_copy_matches_the_tensor_with_zeros_past_its_edges(monkeypatch, device, rows, cols, width):
    # Whole tiles (divisor 64), ragged rows, ragged columns of 16-byte rows (divisor 8) and
    # rows that are not 16-byte multiples (divisors 1, 2 and 4: pieces of 2, 4 and 8 bytes):
    # each path of the copy.
    use_device(monkeypatch, device)
    a = torch.randn(rows, cols).to(torch.bfloat16)
    o = torch.full((rows, width), 7.0, dtype=torch.bfloat16)
    staged_copy(a, o)
    torch.testing.assert_close(o, expected_copy(a, width), rtol=0, atol=0)


@pytest.mark.parametrize("device", ["interp"] + ["emu:" + a for a in ARCHS])
@pytest.mark.parametrize("rows,cols", [(128, 64), (100, 64), (100, 40)])
def test_a_copy_walking_down_the_rows_reads_zeros_before_and_past_them(monkeypatch, device, rows, cols):
    # Whole and ragged row tiles, whole and ragged columns; one tile before row 0, two past the end.
    use_device(monkeypatch, device)
    a = torch.randn(rows, cols).to(torch.bfloat16)
    tiles = (rows + 63) // 64 + 3
    o = torch.full((tiles * 64, 64), 7.0, dtype=torch.bfloat16)
    row_walk(a, o)
    expected = torch.zeros_like(o)
    expected[64:64 + rows, :cols] = a
    torch.testing.assert_close(o, expected, rtol=0, atol=0)


@pytest.mark.parametrize("device", ["interp"] + ["emu:" + a for a in ARCHS])
@pytest.mark.parametrize("rows,cols", [(64, 128), (40, 72)])
def test_a_transposed_commit_writes_the_transpose(monkeypatch, device, rows, cols):
    use_device(monkeypatch, device)
    a = torch.randn(rows, cols).to(torch.bfloat16)
    o = torch.full((cols, rows), 3.0, dtype=torch.bfloat16)
    transposed_copy(a, o)
    torch.testing.assert_close(o, a.t().contiguous(), rtol=0, atol=0)
    assert "commit_transposed(" in transposed_copy.source("gfx1100")


@pytest.mark.parametrize("device", ["interp"] + ["emu:" + a for a in ARCHS])
def test_a_conditional_prefetch_stays_in_flight_across_its_if(monkeypatch, device):
    use_device(monkeypatch, device)
    a = torch.randn(96, 160).to(torch.bfloat16)
    o = torch.zeros(96, 160, dtype=torch.bfloat16)
    conditional_prefetch(a, o)
    torch.testing.assert_close(o, a, rtol=0, atol=0)
    ir = conditional_prefetch.trace("gfx1100", divisors=32).dump()
    branch = ir[ir.index("scf.if"):]
    branch = branch[:branch.index("} else {")]
    assert "hk.copy_issue" in branch and "hk.wait_vm" not in branch


def test_each_divisor_picks_its_load_path():
    sources = {d: staged_copy.source("gfx1100", divisors=d) for d in (1, 8, 64)}
    for d, cpp in sources.items():
        assert "hk::group<4>::issue<%d>(" % d in cpp
        assert "hk::group<4>::commit(" in cpp
    assert "!hk.gl<bf16, div 64>" in staged_copy.trace("gfx1100", divisors=64).dump()
    assert "!hk.gl<bf16>" in staged_copy.trace("gfx1100").dump()


def test_a_call_specializes_on_its_tensors(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")
    staged_copy._traces.clear()
    staged_copy._launchers.clear()  # else a layout met before launches with no trace
    out = torch.zeros(64, 64, dtype=torch.bfloat16)
    whole, ragged = torch.zeros(64, 64, dtype=torch.bfloat16), torch.zeros(64, 40, dtype=torch.bfloat16)
    staged_copy(whole, out)
    staged_copy(ragged, out)
    # One specialization per divisor of A: 8 for 40 columns; for 64, what the allocator's
    # alignment allows (at least 32 with 64-byte aligned host memory).
    expected = [types.divisor_of(t.shape, t.stride(), t.data_ptr(), 2) for t in (ragged, whole)]
    assert expected[0] == 8 and expected[1] >= 32
    assert sorted(key[2][0] for key in staged_copy._traces) == expected


def test_divisor_of():
    # Columns, every stride of a dimension that is not 1, and the data's alignment decide.
    assert types.divisor_of((64, 64), (64, 1), 0, 2) == 64
    assert types.divisor_of((64, 40), (40, 1), 0, 2) == 8
    assert types.divisor_of((64, 40), (104, 1), 0, 2) == 8
    assert types.divisor_of((64, 64), (64, 1), 2, 2) == 1      # data at an odd element
    assert types.divisor_of((2, 64, 64), (4104, 64, 1), 0, 2) == 8  # the batch stride
    assert types.divisor_of((1, 64, 64), (3, 64, 1), 0, 2) == 64   # a batch of 1: no stride
    assert types.divisor_of((64, 128), (1 << 20, 1), 0, 4) == 64   # rows 4 MiB apart


def test_divisors_are_checked():
    with pytest.raises(TraceError, match="divisor of a must be a power of two from 1 to 64, not 12"):
        staged_copy.trace("gfx1100", divisors={"a": 12})
    with pytest.raises(TraceError, match="has no tensor parameter"):
        staged_copy.trace("gfx1100", divisors={"x": 8})


@pytest.mark.parametrize("device", ["interp"] + ["emu:" + a for a in ARCHS])
@pytest.mark.parametrize("tiles", [1, 5, 6, 7])
def test_unrolled_loop_runs_every_iteration(monkeypatch, device, tiles):
    # Three copies of the body per iteration and the iterations left over: 1, 5, 6 and 7 steps.
    use_device(monkeypatch, device)
    x = torch.randn(16 * tiles, 16)
    o = torch.zeros(16, 16)
    unrolled_sum(x, o)
    weights = torch.tensor([i % 2 + 1.0 for i in range(tiles)])
    ref = (x.view(tiles, 16, 16) * weights.view(tiles, 1, 1)).sum(0)
    torch.testing.assert_close(o, ref, rtol=1e-5, atol=1e-5)


def test_unroll_is_translated_as_copies_of_the_body():
    ir = unrolled_sum.trace("gfx1100").dump()
    assert "hk.unroll = 3 : i64" in ir
    cpp = unrolled_sum.source("gfx1100")
    for i in range(3):
        assert cpp.count("_k + %d * " % i) == (2 if i == 2 else 1)  # copy 2 and the loop's test
    assert "_k += 3 * " in cpp
    with pytest.raises(TraceError, match="unroll is True, False or a copy count"):
        hk.range(4, unroll=0)


@pytest.mark.parametrize("device", ["interp"] + ["emu:" + a for a in ARCHS])
def test_a_stored_conversion_converts_on_the_way(monkeypatch, device):
    use_device(monkeypatch, device)
    x = torch.randn(24, 20) * 100
    ob = torch.zeros(24, 20, dtype=torch.bfloat16)
    oh = torch.zeros(24, 20, dtype=torch.float16)
    converted_store(x, ob, oh)
    torch.testing.assert_close(ob, x.to(torch.bfloat16), rtol=0, atol=0)
    torch.testing.assert_close(oh, x.to(torch.float16), rtol=0, atol=0)
    cpp = converted_store.source("gfx1100")
    assert "hk::copy(" not in cpp  # the converted tile is never held


def test_issue_and_commit_refuse_what_does_not_fit():
    @hk.kernel(grid=(1,), warps=4)
    def wrong_dtype(a: hk.Tensor[hk.fp16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32))
        hk.lds.issue(s, a, hk.tile_coord(0, 0, 0, 0))

    @hk.kernel(grid=(1,), warps=4)
    def wrong_shape(a: hk.Tensor[hk.bf16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32))
        t = hk.lds.alloc(hk.ST(hk.bf16, 32, 32))
        hk.lds.commit(t, 0, hk.lds.issue(s, a, hk.tile_coord(0, 0, 0, 0)))

    @hk.kernel(grid=(1,), warps=4)
    def not_staged(a: hk.Tensor[hk.bf16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32))
        hk.lds.commit(s, 0, a[0, 0, 0, 0].load(hk.RT(hk.bf16, 64, 32)))

    with pytest.raises(TraceError, match="cannot stage hk.fp16 elements of a into a shared tile of hk.bf16") as e:
        wrong_dtype.trace("gfx1100")
    assert e.value.location is not None and e.value.location.line > 0
    with pytest.raises(TraceError, match="does not fit"):
        wrong_shape.trace("gfx1100")
    with pytest.raises(TraceError, match="writes what hk.lds.issue returned"):
        not_staged.trace("gfx1100")

    @hk.kernel(grid=(1,), warps=4)
    def transposed_into_the_other_shape(a: hk.Tensor[hk.bf16]):
        s = hk.lds.alloc(hk.ST(hk.bf16, 64, 32))
        t = hk.lds.alloc(hk.ST(hk.bf16, 32, 64))
        hk.lds.commit(s, 0, hk.lds.issue(t, a, hk.tile_coord(0, 0, 0, 0), transpose=True))

    with pytest.raises(TraceError, match="to be written transposed"):
        transposed_into_the_other_shape.trace("gfx1100")


def test_a_staged_copy_waits_only_before_its_commit():
    # The loads stay in flight across the reads of the other buffer.
    ir = staged_copy.trace("gfx1100", divisors=64).dump()
    body = ir[ir.index("scf.for"):]
    issue, load, wait = body.index("hk.copy_issue"), body.index("hk.lds_load"), body.index("hk.wait_vm")
    assert issue < load < wait < body.index("hk.copy_commit")


def test_rows_too_far_apart_are_refused_at_launch(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")
    wide = torch.zeros(2, 1 << 22, dtype=torch.bfloat16)[:, :64]  # rows 8 MiB apart
    with pytest.raises(HKError, match="rows must be less than 8388608 bytes apart"):
        staged_copy(wide, torch.zeros(2, 64, dtype=torch.bfloat16))
