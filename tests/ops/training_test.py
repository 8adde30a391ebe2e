"""hk.ops.dropout against the draws themselves (hk.interp's Philox, which tests/hk checks bit
for bit against Triton's tl.rand) and hk.ops.layer_norm_backward against torch's own
native_layer_norm_backward: bf16, fp16 and fp32, ragged and row-strided; on the interpreter and
the emulator (gfx1100, gfx950); opcheck, what they refuse, and the kernels through the gates on
every target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.interp import philox
from hk.ops import training
from hk.target import facts

TOL = {torch.bfloat16: 1.6e-2, torch.float16: 2e-3, torch.float32: 1e-5}


def expected_dropout(x, p, seed):
    u = philox.uniform(seed, torch.arange(x.numel(), dtype=torch.int32)).reshape(x.shape)
    return torch.where(u > p, x.float() / (1 - p), torch.zeros(())).to(x.dtype)


def close(got, want, tol=None):
    tol = tol or TOL[want.dtype]
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(37, 100), (3, 5, 64), (130,)])
def test_dropout_keeps_the_drawn_elements(interp, dtype, shape):
    x = torch.randn(*shape).to(dtype)
    out = torch.ops.hk.dropout(x, 0.3, 1234)
    close(out, expected_dropout(x, 0.3, 1234))
    assert 0.6 < (out != 0).float().mean().item() < 0.8
    assert torch.equal(torch.ops.hk.dropout(x, 0.3, 1234), out)       # the same draws again
    assert not torch.equal(torch.ops.hk.dropout(x, 0.3, 1235), out)   # and others for another seed
    assert torch.equal(torch.ops.hk.dropout(x, 0.0, 7), x)


def test_dropout_of_a_row_strided_tensor_draws_by_logical_index(interp):
    x = torch.randn(20, 96 + 64)[:, :96]
    close(torch.ops.hk.dropout(x, 0.5, 9), expected_dropout(x.contiguous(), 0.5, 9))


def reference_backward(dy, x, w, b, eps=1e-5):
    """torch's LayerNorm backward for the statistics its forward saves."""
    n = x.shape[-1]
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), [n], w.float(), b.float(), eps)
    dx, dw, db = torch.ops.aten.native_layer_norm_backward(dy.float(), x.float(), [n], mean, rstd, w.float(),
                                                            b.float(), [True, True, True])
    return (mean, rstd), (dx.to(x.dtype), dw.to(w.dtype), db.to(w.dtype))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(37, 100), (2, 3, 256), (16, 64)])
def test_layer_norm_backward_matches_torch(interp, dtype, shape):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(*shape, generator=g).to(dtype)
    dy = torch.randn(*shape, generator=g).to(dtype)
    w = torch.randn(shape[-1], generator=g).to(dtype)
    b = torch.randn(shape[-1], generator=g).to(dtype)
    (mean, rstd), (dx, dw, db) = reference_backward(dy, x, w, b)
    got = torch.ops.hk.layer_norm_backward(dy, x, w, mean, rstd)
    # The column sums add 16-row partials: only their order differs from torch's.
    for g_, w_ in zip(got, (dx, dw, db)):
        assert g_.shape == w_.shape and g_.dtype == w_.dtype
        close(g_, w_, 1e-4 if dtype == torch.float32 else None)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_both_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    x = torch.randn(37, 100).to(torch.bfloat16)
    close(torch.ops.hk.dropout(x, 0.5, 42), expected_dropout(x, 0.5, 42))
    dy, w, b = torch.randn(37, 100), torch.randn(100), torch.randn(100)
    (mean, rstd), want = reference_backward(dy, x.float(), w, b)
    for got, ref in zip(torch.ops.hk.layer_norm_backward(dy, x.float(), w, mean, rstd), want):
        close(got, ref, 1e-4)


def test_bad_arguments_are_launch_errors(interp):
    x = torch.randn(4, 64)
    with pytest.raises(LaunchError, match="it must be in \\[0, 1\\)"):
        torch.ops.hk.dropout(x, 1.0, 0)
    with pytest.raises(LaunchError, match="not a 32-bit integer"):
        torch.ops.hk.dropout(x, 0.5, 2 ** 40)
    w = torch.randn(64)
    mean, rstd = torch.zeros(4), torch.ones(4)
    with pytest.raises(LaunchError, match="do not fit"):
        torch.ops.hk.layer_norm_backward(x[:, :32], x, w, mean, rstd)
    with pytest.raises(LaunchError, match="one value per row of x"):
        torch.ops.hk.layer_norm_backward(x, x, w, mean[:3], rstd)
    with pytest.raises(LaunchError, match="weight is torch.bfloat16"):
        torch.ops.hk.layer_norm_backward(x, x, w.bfloat16(), mean, rstd)


def test_opcheck(interp):
    x = torch.randn(20, 64).to(torch.bfloat16)
    torch.library.opcheck(torch.ops.hk.dropout.default, (x, 0.25, 3))
    dy, w, b = torch.randn(20, 64), torch.randn(64), torch.randn(64)
    (mean, rstd), _ = reference_backward(dy, x.float(), w, b)
    torch.library.opcheck(torch.ops.hk.layer_norm_backward.default, (dy, x.float(), w, mean, rstd))


@pytest.mark.parametrize("arch", facts.archs())
def test_the_kernels_pass_the_gates(arch):
    for dtype in (hk.bf16, hk.fp16, hk.fp32):
        for kernel in (training.dropout_kernel(dtype), training.layer_norm_backward_kernel(dtype)):
            built = kernel.build(arch, divisors=1)
            assert built.meta.spills == 0, built.report()
