"""hk.ops.gptq_gemm against the dequantized product in torch: GPTQ's packing (checked by packing
known weights along K and zero points along N, independently of the op's reference), v1 and v2
zero points, consecutive groups of 32 to 256 rows and one group, act-order g_idx, fp16 and
bf16, ragged and batched rows of x; on the interpreter and the emulator (gfx1100, gfx950, and
act-order on gfx1201); what the CDNA targets refuse; opcheck, refusals, and the kernels through
the gates on every target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import gptq
from hk.target import facts


def words(v):
    """Sums of nibbles (int64) as int32 words."""
    return torch.where(v >= 2 ** 31, v - 2 ** 32, v).to(torch.int32)


def pack_rows(w):
    """[K, N] of 0..15 -> [K/8, N]: row k in the nibble at bits 4 (k % 8) of word row k / 8."""
    k, n = w.shape
    v = w.view(k // 8, 8, n).to(torch.int64)
    return words(sum(v[:, i] << (4 * i) for i in range(8)))


def pack_cols(z):
    """[G, N] of 0..15 -> [G, N/8]: column n in the nibble at bits 4 (n % 8) of word n / 8."""
    g, n = z.shape
    v = torch.nn.functional.pad(z, (0, -n % 8)).view(g, -1, 8).to(torch.int64)
    return words(sum(v[:, :, i] << (4 * i) for i in range(8)))


def case(m, k, n, group, dtype, act_order=False, v2=False, seed=0):
    gen = torch.Generator().manual_seed(seed)
    groups = k // group
    w = torch.randint(0, 16, (k, n), generator=gen)
    zeros = torch.randint(1, 16, (groups, n), generator=gen)  # v1 stores zero - 1: 0 .. 14
    scales = (torch.rand(groups, n, generator=gen) * 0.02 + 0.002).to(dtype)
    g_idx = torch.arange(k) // group
    if act_order:
        g_idx = g_idx[torch.randperm(k, generator=gen)]
    x = torch.randn(*m, k, generator=gen).to(dtype)
    qzeros = pack_cols(zeros if v2 else zeros - 1)
    wanted = ((w - zeros[g_idx]).float() * scales.float()[g_idx]).to(dtype)
    g = g_idx.to(torch.int32) if act_order else torch.empty(0, dtype=torch.int32)
    return (x, pack_rows(w), qzeros, scales, g), (x.float() @ wanted.float()).to(dtype)


def close(got, want, k):
    tol = 2e-2 if want.dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol * max(1.0, (k / 16) ** 0.5))


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("act_order, v2", [(False, False), (True, False), (False, True)])
def test_the_reference_unpacks_gptq_order(act_order, v2):
    args, want = case((4,), 256, 40, 64, torch.float16, act_order, v2)
    assert torch.equal(gptq.reference(*args, use_v2_format=v2), want)


@pytest.mark.parametrize("m, k, n, group, dtype, act_order", [
    ((1,), 256, 128, 128, torch.float16, False), ((7,), 256, 200, 32, torch.bfloat16, False),
    ((33,), 384, 64, 64, torch.float16, False), ((2, 3), 512, 48, 256, torch.bfloat16, False),
    ((5,), 200, 32, 200, torch.float16, False), ((9,), 256, 72, 64, torch.bfloat16, True),
    ((3,), 136, 16, 8, torch.float16, True)])
def test_gptq_gemm_on_the_interpreter(interp, m, k, n, group, dtype, act_order):
    args, want = case(m, k, n, group, dtype, act_order)
    close(torch.ops.hk.gptq_gemm(*args), want, k)
    out = torch.full(tuple(m) + (n,), 7.0, dtype=dtype)
    torch.ops.hk.gptq_gemm_out(out, *args)
    close(out, want, k)


def test_row_strided_x_and_out(interp):
    (x, q, z, s, g), want = case((9,), 256, 32, 128, torch.bfloat16)
    wide = torch.zeros(9, 256 + 64, dtype=x.dtype)
    wide[:, :256] = x  # rows padded to 320, as vLLM pads gfx11 activations
    close(torch.ops.hk.gptq_gemm(wide[:, :256], q, z, s, g), want, 256)
    out = torch.zeros(9, 48, dtype=x.dtype)
    torch.ops.hk.gptq_gemm_out(out[:, 8:40], x, q, z, s, g)
    close(out[:, 8:40], want, 256)
    assert (out[:, :8] == 0).all() and (out[:, 40:] == 0).all()


def test_v2_zero_points(interp):
    args, want = case((6,), 256, 64, 128, torch.float16, v2=True)
    close(torch.ops.hk.gptq_gemm(*args, use_v2_format=True), want, 256)
    # Read as v1 (the stored zero plus one), the same words give another product.
    assert not torch.allclose(torch.ops.hk.gptq_gemm(*args).float(), want.float(), atol=0.05)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_gptq_gemm_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    shapes = [((5,), 256, 40, 128, torch.float16, False), ((18,), 512, 32, 256, torch.bfloat16, False)]
    if arch == "gfx1100":
        shapes += [((3,), 256, 32, 32, torch.bfloat16, False), ((4,), 128, 16, 32, torch.float16, True)]
    for m, k, n, group, dtype, act_order in shapes:
        args, want = case(m, k, n, group, dtype, act_order)
        close(torch.ops.hk.gptq_gemm(*args), gptq.reference(*args), k)


def test_act_order_on_the_emulator_for_gfx1201(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", "gfx1201")
    args, want = case((20,), 256, 48, 64, torch.float16, act_order=True)
    close(torch.ops.hk.gptq_gemm(*args), want, 256)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_cdna_refuses_several_groups_per_step(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.setenv("HK_ARCH", arch)
    args, _ = case((2,), 256, 16, 64, torch.float16, act_order=True)
    with pytest.raises(LaunchError, match="by g_idx .act-order."):
        torch.ops.hk.gptq_gemm(*args)
    args, _ = case((2,), 256, 16, 64, torch.float16)
    with pytest.raises(LaunchError, match="multiple of 128 rows; these are of 64 rows"):
        torch.ops.hk.gptq_gemm(*args)


def test_opcheck(interp):
    for act_order in (False, True):
        args, _ = case((3,), 128, 32, 32, torch.float16, act_order)
        torch.library.opcheck(torch.ops.hk.gptq_gemm.default, args)
        torch.library.opcheck(torch.ops.hk.gptq_gemm_out.default, (torch.empty(3, 32, dtype=torch.float16),) + args)


def test_what_it_refuses(interp):
    (x, q, z, s, g), _ = case((3,), 128, 32, 32, torch.float16)
    with pytest.raises(LaunchError, match="qweight is torch.int64"):
        torch.ops.hk.gptq_gemm(x, q.long(), z, s, g)
    with pytest.raises(LaunchError, match="scales is torch.bfloat16"):
        torch.ops.hk.gptq_gemm(x, q, z, s.bfloat16(), g)
    with pytest.raises(LaunchError, match=r"qweight is \[K/8, N\]"):
        torch.ops.hk.gptq_gemm(x[:, :120], q, z, s, g)
    with pytest.raises(LaunchError, match=r"g_idx has shape \(64,\)"):
        torch.ops.hk.gptq_gemm(x, q, z, s, torch.zeros(64, dtype=torch.int32))
    with pytest.raises(LaunchError, match="groups of 12 rows"):
        torch.ops.hk.gptq_gemm(*case((3,), 96, 32, 12, torch.float16)[0])  # 8 groups of 12 rows
    with pytest.raises(LaunchError, match="float32 are not supported"):
        torch.ops.hk.gptq_gemm(x.float(), q, z, s, g)


@pytest.mark.parametrize("arch", facts.archs())
def test_its_kernels_pass_the_gates(arch):
    # Every form in bf16 (its rounding is the longer); fp16's differ in the conversions only.
    groups = (128, 256) if arch in gptq.ONE_GROUP_PER_STEP else (32, 64, 128, 200, None)
    for dtype, g in [(hk.bf16, g) for g in groups] + [(hk.fp16, 128)]:
        built = gptq.gptq_kernel(dtype, g).build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()
