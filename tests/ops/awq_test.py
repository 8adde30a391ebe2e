"""hk.ops.awq_gemm against the dequantized product in torch: AWQ's packing (checked by packing
known weights in AWQ's column order), group sizes 32, 64 and 128, fp16 and bf16, ragged and
batched rows of x, a decode's split of K (up to 32 rows) and the whole K in one part; on the
interpreter and the emulator (gfx1100, gfx950); opcheck, what it refuses, and its kernels through
the gates on every target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import awq
from hk.target import facts

# AWQ packs the 8 columns 8j + ORDER[i] into nibble i of word j (AutoAWQ's pack order).
ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


def pack(values):
    """[rows, 8 * cols] of 0..15 -> [rows, cols] int32 words in AWQ's order."""
    rows, n = values.shape
    v = values.view(rows, n // 8, 8).to(torch.int64)
    word = sum(v[:, :, ORDER[i]] << (4 * i) for i in range(8))
    return torch.where(word >= 2 ** 31, word - 2 ** 32, word).to(torch.int32)


def case(m, k, n, g, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    w = torch.randint(0, 16, (k, n), generator=gen)
    zeros = torch.randint(0, 16, (k // g, n), generator=gen)
    scales = (torch.rand(k // g, n, generator=gen) * 0.02 + 0.002).to(dtype)
    x = torch.randn(*m, k, generator=gen).to(dtype)
    return x, pack(w), scales, pack(zeros), (w, zeros)


def dequantized(w, zeros, scales):
    g = w.shape[0] // scales.shape[0]
    return (w - zeros.repeat_interleave(g, 0)).float() * scales.float().repeat_interleave(g, 0)


def close(got, want, k):
    tol = 2e-2 if want.dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol * max(1.0, (k / 16) ** 0.5))


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


def test_the_reference_unpacks_awq_order():
    x, q, s, z, (w, zeros) = case((4,), 64, 48, 32, torch.float16)
    want = (x.float() @ dequantized(w, zeros, s).to(x.dtype).float()).to(x.dtype)
    assert torch.equal(awq.reference(x, q, s, z), want)


@pytest.mark.parametrize("m, k, n, g, dtype", [((1,), 256, 128, 128, torch.float16), ((7,), 128, 200, 32, torch.bfloat16),
                                               ((33,), 192, 64, 64, torch.float16), ((2, 3), 128, 136, 64, torch.bfloat16)])
def test_awq_gemm_on_the_interpreter(interp, m, k, n, g, dtype):
    x, q, s, z, (w, zeros) = case(m, k, n, g, dtype)
    want = (x.float() @ dequantized(w, zeros, s).to(dtype).float()).to(dtype)
    close(torch.ops.hk.awq_gemm(x, q, s, z), want, k)
    out = torch.full(tuple(m) + (n,), 7.0, dtype=dtype)
    torch.ops.hk.awq_gemm_out(out, x, q, s, z)
    close(out, want, k)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_awq_gemm_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    # Two decodes (K split in two parts) and the whole K in one part past DECODE_ROWS.
    for m, k, n, g, dtype in (((5,), 256, 136, 128, torch.float16), ((18,), 64, 64, 32, torch.bfloat16),
                              ((awq.DECODE_ROWS + 3,), 64, 64, 32, torch.bfloat16)):
        x, q, s, z, _ = case(m, k, n, g, dtype)
        close(torch.ops.hk.awq_gemm(x, q, s, z), awq.reference(x, q, s, z), k)


def test_opcheck(interp):
    x, q, s, z, _ = case((3,), 64, 64, 32, torch.float16)
    torch.library.opcheck(torch.ops.hk.awq_gemm.default, (x, q, s, z))
    torch.library.opcheck(torch.ops.hk.awq_gemm_out.default, (torch.empty(3, 64, dtype=x.dtype), x, q, s, z))


def test_what_it_refuses(interp):
    x, q, s, z, _ = case((3,), 128, 64, 32, torch.float16)
    with pytest.raises(LaunchError, match="qweight is torch.int64"):
        torch.ops.hk.awq_gemm(x, q.long(), s, z)
    with pytest.raises(LaunchError, match="scales is torch.bfloat16"):
        torch.ops.hk.awq_gemm(x, q, s.bfloat16(), z)
    with pytest.raises(LaunchError, match="group size G a multiple of 16"):
        torch.ops.hk.awq_gemm(x[:, :120], q[:120], s[:3], z[:3])  # groups of 40
    with pytest.raises(LaunchError, match="float32 are not supported"):
        torch.ops.hk.awq_gemm(x.float(), q, s, z)


def test_decode_splits_k_into_whole_groups():
    # A decode's rows over Qwen3-8B's O projection: parts of whole groups, every group in one.
    parts, per = awq.split_k(1, 4096, 4096, 128)
    assert parts > 1 and (parts - 1) * per < 4096 // 128 <= parts * per
    assert awq.split_k(4, 128, 256, 128) == (2, 1)  # the interpreter's m=1 case above: two parts
    assert awq.split_k(awq.DECODE_ROWS + 1, 4096, 4096, 128) == (1, 32)  # past decode: one part


@pytest.mark.parametrize("arch", facts.archs())
def test_its_kernels_pass_the_gates(arch):
    for dtype in (hk.fp16, hk.bf16):
        for g in (32, 128):
            for split in (False, True):
                built = awq.awq_kernel(dtype, g, split).build(arch, divisors=64)
                assert built.meta.spills == 0, built.report()
        built = awq.sum_kernel(dtype).build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()
