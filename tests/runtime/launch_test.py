"""A repeated kernel call's fast path (hk.runtime.launch): it skips the checks and the lookups
only for a call whose key matches one the full path took; every change that decides the
specialization, the grid or a refusal takes the full path again."""

import math
import struct

import numpy as np
import pytest
import torch

import hk
import hk.interp
from hk.errors import LaunchError
from hk.runtime import launch


def copy_kernel():
    """A fresh kernel (its own caches): o = a, tile by tile."""

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
    def copy(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *, SCALE=1):
        idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
        o[idx] = a[idx].load(hk.RT(hk.bf16, 16, 64)) * SCALE

    return copy


def scalar_kernel():
    """A kernel whose grid reads one of its scalars (n) and not the other (x)."""

    @hk.kernel(grid=lambda p: (p.n, hk.cdiv(p.o.rows, 16)))
    def fill(o: hk.Tensor[hk.fp32], n: int, x: float):
        o[0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x] = hk.zeros(hk.RT(hk.fp32, 16, 64))

    return fill


@pytest.fixture
def runs(monkeypatch):
    """The interpreter's runs as (traced, grid, args), with the interpreter replaced; and the
    counts of the full path and of traces."""
    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.delenv("HK_ARCH", raising=False)
    seen = []
    monkeypatch.setattr(hk.interp, "run", lambda traced, grid, args: seen.append((traced, grid, list(args))))
    counts = {"full": 0}
    full = launch._launch

    def counted(*a, **k):
        counts["full"] += 1
        return full(*a, **k)

    monkeypatch.setattr(launch, "_launch", counted)
    return seen, counts


def bf16(*shape):
    return torch.zeros(*shape, dtype=torch.bfloat16)


def test_a_repeated_call_takes_the_full_path_and_traces_once(runs, monkeypatch):
    seen, counts = runs
    k = copy_kernel()
    traces = []
    real = k._trace
    monkeypatch.setattr(k, "_trace", lambda *a: traces.append(a) or real(*a))
    a, o = bf16(32, 128), bf16(32, 128)
    for _ in range(5):
        k(a, o)
    assert counts["full"] == 1 and len(traces) == 1
    assert [grid for _, grid, _ in seen] == [(2, 2, 1)] * 5
    assert all(args[0] is a and args[1] is o for _, _, args in seen)
    # Other tensors laid out (and aligned) alike share the launcher: 8 KiB further on.
    a2, o2 = torch.stack([a, a]), torch.stack([o, o])
    k(a2[0], o2[0])
    full = counts["full"]
    k(a2[1], o2[1])
    assert counts["full"] == full and seen[-1][2][0].data_ptr() == a2[1].data_ptr()


@pytest.mark.parametrize("change", ["shape", "rows' stride", "alignment", "device", "constant",
                                    "constant's type", "HK_ARCH", "arch="])
def test_what_decides_a_launch_takes_the_full_path_again(runs, monkeypatch, change):
    seen, counts = runs
    k = copy_kernel()
    a, o = bf16(32, 128), bf16(32, 128)
    k(a, o, SCALE=1)
    k(a, o, SCALE=1)
    assert counts["full"] == 1
    kwargs = {"SCALE": 1}
    if change == "shape":
        a, o = bf16(48, 128), bf16(48, 128)
    elif change == "rows' stride":
        a, o = bf16(32, 136)[:, :128], bf16(32, 136)[:, :128]
    elif change == "alignment":
        a, o = bf16(32 * 128 + 1)[1:].view(32, 128), bf16(32 * 128 + 1)[1:].view(32, 128)
    elif change == "device":
        a, o = a.to("meta"), o.to("meta")
    elif change == "constant":
        kwargs = {"SCALE": 2}
    elif change == "constant's type":
        kwargs = {"SCALE": 1.0}  # equal to 1, but another specialization
    elif change == "HK_ARCH":
        monkeypatch.setenv("HK_ARCH", "gfx950")
    else:
        kwargs["arch"] = "gfx942"
    k(a, o, **kwargs)
    assert counts["full"] == 2
    (before, grid0, _), (after, grid1, args) = seen[0], seen[-1]
    assert args[0] is a and args[1] is o
    if change == "shape":
        assert (grid0, grid1) == ((2, 2, 1), (2, 3, 1))
    elif change in ("rows' stride", "alignment"):
        assert after is not before and after.params[0].kind.divisor < before.params[0].kind.divisor
    elif change in ("constant", "constant's type"):
        assert after.constants["SCALE"] == kwargs["SCALE"] and type(after.constants["SCALE"]) is type(kwargs["SCALE"])
    elif change in ("HK_ARCH", "arch="):
        assert (before.arch, after.arch) == ("gfx1100", "gfx950" if change == "HK_ARCH" else "gfx942")
    # ... and the new layout is fast from then on.
    k(a, o, **kwargs)
    assert counts["full"] == 2


def test_a_column_of_one_takes_any_stride(runs):
    seen, _ = runs
    k = copy_kernel()
    a = bf16(1, 32).t()  # [32, 1], strides (1, 32): one element a row, so no stride to keep
    k(a, bf16(32, 1))
    assert len(seen) == 1


def test_a_grid_function_that_raises_is_a_launch_error(runs):
    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, p.n),))
    def fill(o: hk.Tensor[hk.fp32], n: int):
        o[0, 0, 0, hk.arch.block_idx.x] = hk.zeros(hk.RT(hk.fp32, 16, 64))

    with pytest.raises(LaunchError, match=r"kernel fill: its grid function \(.*launch_test.py:\d+\) raised "
                                          "ZeroDivisionError: .* on these arguments"):
        fill(torch.zeros(16, 64), 0)


def test_refusals_are_raised_after_a_fast_call(runs):
    seen, counts = runs
    k = copy_kernel()
    a, o = bf16(32, 128), bf16(32, 128)
    k(a, o)
    k(a, o)
    with pytest.raises(LaunchError, match="must be a tensor of hk.bf16"):
        k(a.to(torch.float16), o)
    with pytest.raises(LaunchError, match="unit stride in its last dimension"):
        k(bf16(128, 32).t(), o)
    with pytest.raises(LaunchError, match="has no elements"):
        k(bf16(0, 128), o)
    with pytest.raises(LaunchError, match="must be a tensor"):
        k([1, 2], o)
    with pytest.raises(LaunchError, match="takes 2 arguments"):
        k(a)
    assert len(seen) == 2


def test_the_runner_is_read_at_each_call(runs, monkeypatch):
    seen, _ = runs
    k = copy_kernel()
    a, o = bf16(32, 128), bf16(32, 128)
    k(a, o)
    monkeypatch.setenv("HK_DEVICE", "cuda")
    with pytest.raises(LaunchError, match="HK_DEVICE=cuda is not a runner"):
        k(a, o)
    monkeypatch.setenv("HK_DEVICE", "interp")
    k(a, o)
    assert len(seen) == 2


def test_scalars_are_checked_and_rounded_at_each_call(runs):
    seen, counts = runs
    k = scalar_kernel()
    o = torch.zeros(32, 128)
    k(o, 2, 0.1)
    k(o, 2, 0.3)
    k(o, 2, 7)  # an int where a float is declared: another key, the same plan
    assert counts["full"] == 2
    fp32 = [struct.unpack("f", struct.pack("f", x))[0] for x in (0.1, 0.3)]
    assert [args[2] for _, _, args in seen] == [torch.tensor(x).item() for x in (0.1, 0.3, 7.0)] == fp32 + [7.0]
    with pytest.raises(LaunchError, match="does not fit the kernel's 32-bit int"):
        k(o, 2 ** 31, 0.1)
    k(o, 2, 1e39)  # past fp32's range: the full path rounds it as torch does
    assert math.isinf(seen[-1][2][2])
    with pytest.raises(LaunchError, match="must be a Python float"):
        k(o, 2, "0.5")
    k(o, 2, np.float32(0.25))  # numpy's scalars, as its ints are for an int
    assert seen[-1][2][2] == 0.25
    with pytest.raises(LaunchError, match="must be a Python float, not Tensor") as e:
        k(o, 2, torch.tensor(0.5))
    assert "x.item()" in e.value.hint


def test_a_grid_that_reads_a_scalar_is_computed_per_value(runs):
    seen, counts = runs
    k = scalar_kernel()
    o = torch.zeros(32, 128)
    for n in (2, 3, 2, 3, 2):
        k(o, n, 0.5)
    assert [grid for _, grid, _ in seen] == [(2, 2, 1), (3, 2, 1)] * 2 + [(2, 2, 1)]
    assert counts["full"] == 2
    # x is not read by the grid: its values share a plan.
    k(o, 2, 1.5)
    assert counts["full"] == 2


def test_capture_records_calls_the_fast_path_knows(runs):
    seen, _ = runs
    k = copy_kernel()
    a, o = bf16(32, 128), bf16(32, 128)
    k(a, o)
    with launch.capture() as launches:
        k(a, o)
    assert len(launches) == 1 and launches[0][0] is k and len(seen) == 1


def test_a_capture_for_a_target_is_what_ops_plan_for(monkeypatch):
    # hk.perf.predict_call(..., arch=) captures for its target: an op asking launch_arch() (the
    # fp8 GEMM's plan) plans for it, nested captures keep it, and it ends with the capture.
    from hk.dsl.kernel import launch_arch

    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    with launch.capture("gfx942"):
        assert launch_arch() == "gfx942"
        with launch.capture():
            assert launch_arch() == "gfx942"
        with launch.capture("gfx950"):
            assert launch_arch() == "gfx950"
        assert launch_arch() == "gfx942"
    assert launch_arch() == "gfx1100" and launch.captured_arch() is None
    with launch.capture():
        assert launch_arch() == "gfx1100"


def test_launchers_per_kernel_are_bounded(runs, monkeypatch):
    seen, counts = runs
    monkeypatch.setattr(launch, "MAX_LAUNCHERS", 3)
    k = copy_kernel()
    pairs = [(bf16(rows, 64), bf16(rows, 64)) for rows in (16, 32, 48, 64, 80)]
    for a, o in pairs:
        k(a, o)
    assert len(k._launchers) == 3 and counts["full"] == 5
    k(*pairs[-1])  # the newest stays
    assert counts["full"] == 5
    k(*pairs[0])  # the oldest went
    assert counts["full"] == 6
    # So are the plans of a grid that reads a scalar (a decode's lengths vary at every call).
    fill = scalar_kernel()
    o = torch.zeros(16, 64)
    for n in range(1, 6):
        fill(o, n, 0.5)
    [launcher] = fill._launchers.values()
    assert sorted(launcher.plans) == [(3,), (4,), (5,)]
