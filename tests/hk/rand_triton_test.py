"""hk.rand draws what Triton's tl.rand draws for the same seed and offsets: bit for bit, on the
interpreter and in the compiled code object (run on the emulator), against Triton's own
interpreter (TRITON_INTERPRET=1, on the CPU)."""

import os

# Triton reads this when it is imported: its kernels then run in its CPU interpreter.
os.environ["TRITON_INTERPRET"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

import hk  # noqa: E402

T = hk.RT(hk.fp32, 16, 64)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16)))
def uniform(o: hk.Tensor[hk.fp32], seed: int):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    offsets = (hk.iota(T, "row") + r * 16) * o.cols + hk.iota(T, "col") + c * 64
    o[0, 0, r, c] = hk.rand(seed, offsets)


def triton_rand(seed, n):
    import triton
    import triton.language as tl

    @triton.jit
    def draw(out_ptr, seed, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(out_ptr + offs, tl.rand(seed, offs))

    out = torch.zeros(n)
    draw[(1,)](out, seed, N=n)
    return out


@pytest.mark.parametrize("device,arch", [("interp", "gfx1100"), ("emu", "gfx1100"), ("emu", "gfx950")])
@pytest.mark.parametrize("seed", [0, 1234, 2 ** 31 - 1])
def test_same_draws_as_tl_rand(monkeypatch, device, arch, seed):
    pytest.importorskip("triton")
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)
    out = torch.zeros(32, 128)
    uniform(out, seed)
    assert torch.equal(out.reshape(-1), triton_rand(seed, out.numel()))
