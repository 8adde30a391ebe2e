"""hk.ops' 8-bit GEMMs against float64 / int64 torch references: int8_scaled_mm (vLLM's
cutlass_scaled_mm and cutlass_scaled_mm_azp) in every scale mode, with bias and both zero-point
forms; scaled_mm (torch._scaled_mm, which it is also compared to directly where CPU torch runs it)
per tensor, rowwise, with 128 x 128 block scales, W8A16, e5m2 and mixed formats; odd M and N,
ragged K, batched a; on the interpreter and the emulator: int8 on gfx1100, gfx942, gfx950 and
gfx1201, fp8 on gfx1100 (converted to bf16), gfx1201 and gfx950 (fp8 instructions) and gfx942
(OCP bytes decoded by the kernel, checked for every byte; FNUZ on its fp8 instructions, and an
OCP checkpoint converted to FNUZ as vLLM does on MI300X gives the OCP answer); the LDS-staged
kernels (int8 and native fp8 with 16-byte rows; fp8 with 128 x 128 block scales on either or
both operands; W8A16 and fp8 converted to 16-bit after each LDS read, on every target, an e4m3
NaN included) at M, N and K past every edge of their schedule, and which calls take them. Then
opcheck, torch.compile,
every argument refused, and each kernel through the gates on every target."""

import pytest
import torch

import hk
import hk.ops
from hk.emu import disasm
from hk.errors import LaunchError
from hk.ops import mm8
from hk.target import facts

E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2
E4Z, E5Z = torch.float8_e4m3fnuz, torch.float8_e5m2fnuz  # gfx942's matrix instructions' fp8
FRACTION = {torch.bfloat16: 7, torch.float16: 10, torch.float32: 23}  # fraction bits
ARCHS = facts.archs()


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


def on(monkeypatch, device, arch):
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)


def ulp(x, dtype):
    """The unit in the last place of `dtype` at the values of x (float64)."""
    return torch.exp2(torch.floor(torch.log2(x.abs().clamp(min=2.0 ** -14))) - FRACTION[dtype])


def close(got, want, slack=None):
    """got (out's dtype) within a unit in its last place of the float64 `want` (rounding gives
    half of one), plus `slack` (the fp32 accumulation's error bound, where there is one);
    returns the largest error in those units."""
    assert got.shape == want.shape, (got.shape, want.shape)
    unit = ulp(want, got.dtype)
    err = (got.double() - want).abs()
    bound = unit + (slack if slack is not None else 0.0)
    assert bool((err <= bound).all()), "max error %g at %s" % ((err - bound).max(), (err - bound).argmax())
    return float((err / unit).max())


# int8 -------------------------------------------------------------------------------------------

def int8_operands(m, n, k, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
    w = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8)  # the weight [N, K]
    a[0] = -128                        # the range's ends
    w[0], w[1] = -128, 127
    scale_a = torch.rand(m, 1, generator=g) * 1e-2 + 1e-3
    scale_b = torch.rand(n, 1, generator=g) * 1e-2 + 1e-3
    bias = torch.randn(n, generator=g) * 4
    azp = torch.randint(-128, 128, (m,), generator=g, dtype=torch.int32)
    return a, w.t(), scale_a, scale_b, bias, w.sum(1, dtype=torch.int32), azp


def int8_reference(a, b, scale_a, scale_b, bias=None, azp_adj=None, azp=None):
    """vLLM's: scale_a * scale_b * (a @ b - azp * azp_adj) + bias, the product exact."""
    p = a.long() @ b.long()
    if azp_adj is not None:
        p = p - (azp.long().view(-1, 1) if azp is not None else 1) * azp_adj.long().view(1, -1)
    y = p.double() * scale_a.double().reshape(-1, 1) * scale_b.double().reshape(1, -1)
    return y + bias.double() if bias is not None else y


def int8_case(a, b, scale_a, scale_b, bias, adj, azp, modes, out_dtype):
    """The op's arguments for scale `modes` ("tensor", "token", "channel", "channel_col",
    "channel_flat"), bias or not, and zero points "adj" or "token"."""
    sa = scale_a[:1, :1] if modes[0] == "tensor" else scale_a
    sb = {"tensor": scale_b[:1].view(1), "channel": scale_b.t(), "channel_col": scale_b,
          "channel_flat": scale_b.view(-1)}[modes[1]]
    bias = bias.to(out_dtype) if modes[2] else None
    azp_adj = {None: None, "adj": adj * 7, "token": adj}[modes[3]]  # per tensor: azp 7 folded in
    return sa, sb, bias, azp_adj, azp if modes[3] == "token" else None


INT8_MODES = [("tensor", "tensor", False, None), ("token", "channel", True, None),
              ("token", "channel_col", False, "adj"),
              ("tensor", "channel_flat", True, "token"), ("token", "tensor", True, "adj")]


@pytest.mark.parametrize("modes", INT8_MODES, ids=lambda m: "-".join(str(x) for x in m))
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m, n, k", [(37, 80, 192), (1, 64, 100)])
def test_int8_on_the_interpreter(interp, modes, out_dtype, m, n, k):
    a, b, scale_a, scale_b, bias, adj, azp = int8_operands(m, n, k)
    sa, sb, bias, azp_adj, azp = int8_case(a, b, scale_a, scale_b, bias, adj, azp, modes, out_dtype)
    want = int8_reference(a, b, sa, sb, bias, azp_adj, azp)
    got = torch.ops.hk.int8_scaled_mm(a, b, sa, sb, out_dtype, bias, azp_adj, azp)
    assert got.dtype == out_dtype
    close(got, want)
    out = torch.full((m, n), 3.0, dtype=out_dtype)
    torch.ops.hk.int8_scaled_mm_out(out, a, b, sa, sb, bias, azp_adj, azp)
    assert torch.equal(out, got)


def test_int8_batched_a_and_a_row_major_b(interp):
    a, b, scale_a, scale_b, bias, _, _ = int8_operands(12, 64, 128)
    got = torch.ops.hk.int8_scaled_mm(a.view(3, 4, 128), b.contiguous(), scale_a, scale_b, torch.bfloat16)
    assert got.shape == (3, 4, 64)
    close(got.view(12, 64), int8_reference(a, b, scale_a, scale_b))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx942", "gfx950", "gfx1201"])
def test_int8_on_the_emulator(monkeypatch, arch):
    a, b, scale_a, scale_b, bias, adj, azp = int8_operands(37, 80, 192, seed=1)
    for modes, out_dtype in (((("token", "channel", True, "token")), torch.bfloat16),
                             ((("tensor", "channel_flat", False, "adj")), torch.float16)):
        sa, sb, bias_, azp_adj, azp_ = int8_case(a, b, scale_a, scale_b, bias, adj, azp, modes, out_dtype)
        want = int8_reference(a, b, sa, sb, bias_, azp_adj, azp_)
        on(monkeypatch, "emu", arch)
        got = torch.ops.hk.int8_scaled_mm(a, b, sa, sb, out_dtype, bias_, azp_adj, azp_)
        close(got, want)
        on(monkeypatch, "interp", arch)
        assert torch.equal(got, torch.ops.hk.int8_scaled_mm(a, b, sa, sb, out_dtype, bias_, azp_adj, azp_))


def fast_calls(monkeypatch):
    """The arguments (dtype, out, bias[, a_type, b_type][, block]) of each LDS-staged kernel
    hk.ops asks mm8 for from here on."""
    calls, build = [], mm8.mm8_fast_kernel

    def fast(*key, **named):
        calls.append(key + tuple(named.values()))
        return build(*key, **named)

    monkeypatch.setattr(mm8, "mm8_fast_kernel", fast)
    return calls


@pytest.mark.parametrize("arch", ["gfx1100", "gfx942", "gfx950", "gfx1201"])
def test_int8_lds_staged_on_the_emulator(monkeypatch, arch):
    # M, N and K past a workgroup's 128 x 128 and a step's 64: every edge of the schedule.
    a, b, scale_a, scale_b, bias, adj, azp = int8_operands(133, 144, 208, seed=4)
    calls = fast_calls(monkeypatch)
    for modes, out_dtype in ((("token", "channel", True, None), torch.bfloat16),
                             (("tensor", "tensor", False, None), torch.float16)):
        sa, sb, bias_, _, _ = int8_case(a, b, scale_a, scale_b, bias, adj, azp, modes, out_dtype)
        want = int8_reference(a, b, sa, sb, bias_)
        on(monkeypatch, "emu", arch)
        got = torch.ops.hk.int8_scaled_mm(a, b, sa, sb, out_dtype, bias_)
        close(got, want)
        on(monkeypatch, "interp", arch)
        assert torch.equal(got, torch.ops.hk.int8_scaled_mm(a, b, sa, sb, out_dtype, bias_))
    assert calls == [(hk.i8, hk.bf16, True)] * 2 + [(hk.i8, hk.fp16, False)] * 2  # emulator, interpreter


def test_which_int8_calls_take_the_lds_staged_kernel(interp, monkeypatch):
    calls = fast_calls(monkeypatch)
    a, b, scale_a, scale_b, bias, adj, azp = int8_operands(5, 64, 96)
    torch.ops.hk.int8_scaled_mm(a, b, scale_a, scale_b, torch.bfloat16)
    assert calls == [(hk.i8, hk.bf16, False)]
    torch.ops.hk.int8_scaled_mm(a, b, scale_a, scale_b, torch.bfloat16, None, adj)  # a zero point
    torch.ops.hk.int8_scaled_mm(a, b, scale_a, scale_b, torch.bfloat16, None, adj, azp)
    a, b, scale_a, scale_b, bias, adj, azp = int8_operands(5, 64, 100)  # rows of 100 bytes
    torch.ops.hk.int8_scaled_mm(a, b, scale_a, scale_b, torch.bfloat16)
    assert calls == [(hk.i8, hk.bf16, False)]


# fp8 --------------------------------------------------------------------------------------------

def fp8_operands(m, n, k, dtype=E4, b_dtype=None, seed=0):
    """a [M, K] and b [K, N] (the weight's transpose), normal and subnormal magnitudes."""
    g = torch.Generator().manual_seed(seed)
    spread = torch.tensor([1.0, 2.0 ** -7, 16.0, 2.0 ** -9, 0.5, 4.0, 2.0 ** -3, 1.0])
    a = (torch.randn(m, k, generator=g) * spread.repeat(-(-k // 8))[:k]).to(dtype)
    w = (torch.randn(n, k, generator=g) * 2).to(b_dtype or dtype)
    top = {E4: 448.0, E4Z: 240.0}.get(dtype, 1024.0)  # e4m3's largest (fp16 out: no 57344)
    a[0, :4] = torch.tensor([top, -0.0, 0.0, -1.0]).to(dtype)
    return a, w.t()


def fp8_scales(m, n, k, seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *shape: torch.rand(*shape, generator=g) + 0.25  # noqa: E731
    return {"tensor": (r(1)[0].reshape(()), r(1)), "row": (r(m, 1), r(1, n)),
            "block": (r(m, k // 128), r(n // 128, k // 128).t()), "w8a16": (None, r(1, n)),
            "block_w": (r(1), r(n // 128, k // 128).t()), "block_w_token": (r(m, 1), r(n // 128, k // 128).t()),
            "block_a": (r(m, k // 128), r(1, n)),
            "none": (None, None)}


def fp8_reference(a, b, sa, sb, bias=None):
    """float64: per-tensor and rowwise scales multiply a @ b; block scales each 128-group's
    product (sa [M, K/128], sb [K/128, N/128])."""
    m, k = a.shape
    n = b.shape[1]
    ad, bd = a.double(), b.double()
    blocked = sb is not None and sb.dim() == 2 and tuple(sb.shape) == (k // 128, n // 128) and sb.numel() > 1 \
        and tuple(sb.shape) != (1, n)
    if blocked or (sa is not None and sa.dim() == 2 and sa.shape[1] > 1):
        y = torch.zeros(m, n, dtype=torch.float64)
        for g in range(k // 128):
            part = ad[:, 128 * g:128 * (g + 1)] @ bd[128 * g:128 * (g + 1)]
            if sa is not None:
                blocks_a = sa.dim() == 2 and sa.shape[1] > 1
                part = part * (sa.double()[:, g:g + 1] if blocks_a else sa.double().reshape(-1, 1) if sa.numel() > 1
                               else sa.double().reshape(()))
            if sb is not None and blocked:
                part = part * sb.double()[g].repeat_interleave(128)
            elif sb is not None:
                part = part * (sb.double().reshape(1, -1) if sb.numel() > 1 else sb.double().reshape(()))
            y += part
    else:
        y = ad @ bd
        if sa is not None:
            y = y * sa.double().reshape(-1, 1)
        if sb is not None:
            y = y * sb.double().reshape(1, -1)
    slack = (ad.abs() @ bd.abs()) * 2.0 ** -20 * 64  # fp32 accumulation and scaling
    return (y + bias.double() if bias is not None else y), slack


FP8_CASES = [  # (mode, a dtype, b dtype, bias, out dtype)
    ("tensor", E4, E4, False, torch.bfloat16), ("row", E4, E4, True, torch.bfloat16),
    ("row", E5, E5, False, torch.float16), ("block", E4, E4, True, torch.bfloat16),
    ("block_w", E4, E4, False, torch.float16), ("block_w_token", E4, E4, True, torch.bfloat16),
    ("w8a16", torch.bfloat16, E4, True, torch.bfloat16), ("row", E4, E4, True, torch.float32),
    ("block", E5, E5, False, torch.float32), ("w8a16", torch.float16, E4, True, torch.float32),
    ("w8a16", torch.float16, E5, False, torch.float16), ("none", E4, E5, False, torch.bfloat16),
]


def fp8_case(mode, a_dtype, b_dtype, with_bias, out_dtype, m, n, k, seed=0):
    if a_dtype in (E4, E5, E4Z, E5Z):
        a, b = fp8_operands(m, n, k, a_dtype, b_dtype, seed)
    else:
        a = torch.randn(m, k, generator=torch.Generator().manual_seed(seed)).to(a_dtype)
        b = fp8_operands(m, n, k, b_dtype, seed=seed)[1]
    sa, sb = fp8_scales(m, n, k, seed)[mode]
    bias = torch.randn(n, generator=torch.Generator().manual_seed(seed + 1)).to(out_dtype) if with_bias else None
    return a, b, sa, sb, bias


@pytest.mark.parametrize("case", FP8_CASES, ids=lambda c: "%s-%s-%s" % (c[0], c[1], c[2]))
def test_fp8_on_the_interpreter(interp, case):
    m, n, k = 37, 256, 384
    a, b, sa, sb, bias = fp8_case(*case, m, n, k)
    want, slack = fp8_reference(a, b, sa, sb, bias)
    got = torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias)
    assert got.dtype == case[4]
    close(got, want, slack)
    out = torch.empty(m, n, dtype=case[4])
    torch.ops.hk.scaled_mm_out(out, a, b, sa, sb, bias)
    assert torch.equal(out, got)


@pytest.mark.parametrize("mode, bias", [("tensor", False), ("row", True), ("row", False)])
@pytest.mark.parametrize("dtype", [E4, E5])
def test_fp8_agrees_with_torch_scaled_mm(interp, mode, bias, dtype):
    m, n, k = 33, 48, 100  # odd M, N and K
    a, b = fp8_operands(m, n, k, dtype)
    sa, sb = fp8_scales(m, n, k)[mode]
    bias = torch.randn(n, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16) if bias else None
    want = torch._scaled_mm(a, b, sa, sb, bias=bias, out_dtype=torch.bfloat16)
    got = torch.ops.hk.scaled_mm(a, b, sa, sb, torch.bfloat16, bias)
    reference, slack = fp8_reference(a, b, sa, sb, bias)
    # Both accumulate in fp32 in their own order, then round: apart by a unit in the last place
    # (more where the sum cancels: the fp32 orders' difference, bounded by the slack).
    assert bool(((got.double() - want.double()).abs() <= ulp(want.double(), torch.bfloat16) + slack).all())
    close(got, reference, slack)


@pytest.mark.parametrize("bias", [False, True])
def test_fp32_out_agrees_with_torch_scaled_mm(interp, bias):
    m, n, k = 33, 48, 100
    a, b = fp8_operands(m, n, k, E4)
    sa, sb = fp8_scales(m, n, k)["row"]
    bias = torch.randn(n, generator=torch.Generator().manual_seed(6)) if bias else None
    want = torch._scaled_mm(a, b, sa, sb, bias=bias, out_dtype=torch.float32)
    got = torch.ops.hk.scaled_mm(a, b, sa, sb, torch.float32, bias)
    assert got.dtype == torch.float32
    reference, slack = fp8_reference(a, b, sa, sb, bias)
    # Both sum the exact products in fp32, in their own orders: apart by the orders' difference.
    assert bool(((got.double() - want.double()).abs() <= 2 * slack + ulp(want.double(), torch.float32)).all())
    close(got, reference, slack)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx942", "gfx950", "gfx1201"])
def test_fp8_on_the_emulator(monkeypatch, arch):
    m, n, k = 37, 256, 256
    for case in (("row", E4, E4, True, torch.bfloat16), ("block", E4, E4, False, torch.bfloat16),
                 ("w8a16", torch.bfloat16, E4, False, torch.bfloat16), ("tensor", E4, E4, True, torch.float32)):
        a, b, sa, sb, bias = fp8_case(*case, m, n, k, seed=2)
        want, slack = fp8_reference(a, b, sa, sb, bias)
        on(monkeypatch, "emu", arch)
        got = torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias)
        close(got, want, slack)
        on(monkeypatch, "interp", arch)
        close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)


@pytest.mark.parametrize("arch, dtype", [("gfx950", E4), ("gfx1201", E5), ("gfx942", E4Z)])
def test_fp8_lds_staged_on_the_emulator(monkeypatch, arch, dtype):
    m, n, k = 133, 144, 208
    calls = fast_calls(monkeypatch)
    for case in (("row", dtype, dtype, True, torch.bfloat16), ("tensor", dtype, dtype, False, torch.float32)):
        a, b, sa, sb, bias = fp8_case(*case, m, n, k, seed=5)
        want, slack = fp8_reference(a, b, sa, sb, bias)
        on(monkeypatch, "emu", arch)
        close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)
    fp8 = {E4: hk.fp8e4m3, E5: hk.fp8e5m2, E4Z: hk.fp8e4m3fnuz}[dtype]
    assert calls == [(fp8, hk.bf16, True), (fp8, hk.fp32, False)]


@pytest.mark.parametrize("arch, dtype", [("gfx950", E4), ("gfx1201", E5), ("gfx942", E4Z)])
def test_fp8_block_scaled_lds_staged_on_the_emulator(monkeypatch, arch, dtype):
    # M past a workgroup's 128 rows; N two workgroups' columns (four of gfx1201's 64); K three
    # groups: an odd count of steps, the last run outside the loop's two-step iterations.
    m, n, k = 133, 256, 384
    calls = fast_calls(monkeypatch)
    for case in (("block", dtype, dtype, True, torch.bfloat16), ("block_w_token", dtype, dtype, False, torch.float32),
                 ("block_a", dtype, dtype, False, torch.float16)):
        a, b, sa, sb, bias = fp8_case(*case, m, n, k, seed=6)
        want, slack = fp8_reference(a, b, sa, sb, bias)
        on(monkeypatch, "emu", arch)
        close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)
        on(monkeypatch, "interp", arch)  # (its fp32 sums in another order)
        close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)
    fp8 = {E4: hk.fp8e4m3, E5: hk.fp8e5m2, E4Z: hk.fp8e4m3fnuz}[dtype]
    assert calls == [(fp8, hk.bf16, True, "ab")] * 2 + [(fp8, hk.fp32, False, "b")] * 2 + \
        [(fp8, hk.fp16, False, "a")] * 2


@pytest.mark.parametrize("m, k", [(1, 256), (5, 128)])
def test_block_scales_of_one_row_or_one_group(interp, m, k):
    # A decode's one row of scale_a, or K one group: their transposes are views torch calls
    # contiguous whose strides are not the kernel's.
    a, b, sa, sb, _ = fp8_case("block", E4, E4, False, torch.bfloat16, m, 256, k, seed=7)
    want, slack = fp8_reference(a, b, sa, sb)
    close(torch.ops.hk.scaled_mm(a, b, sa, sb, torch.bfloat16), want, slack)


# The converted products on the LDS-staged schedule: W8A16 everywhere (e4m3 and e5m2 weights),
# e4m3 x e4m3 where no instruction reads OCP fp8 (gfx1100 converts, gfx942 too: the bytes are
# staged typed, not decoded as int8).
CONVERTED_STAGED = {
    "gfx1100": [("w8a16", torch.bfloat16, E4, True, torch.bfloat16), ("row", E4, E4, False, torch.float32)],
    "gfx942": [("w8a16", torch.bfloat16, E4, True, torch.bfloat16), ("row", E4, E4, False, torch.float32)],
    "gfx950": [("w8a16", torch.bfloat16, E4, True, torch.bfloat16), ("w8a16", torch.float16, E5, False, torch.float16)],
    "gfx1201": [("w8a16", torch.bfloat16, E4, True, torch.bfloat16), ("row", E4, E5, False, torch.float16)],
}
KINDS = {E4: hk.fp8e4m3, E5: hk.fp8e5m2, torch.bfloat16: hk.bf16, torch.float16: hk.fp16, torch.float32: hk.fp32}


@pytest.mark.parametrize("arch", sorted(CONVERTED_STAGED))
def test_converted_lds_staged_on_the_emulator(monkeypatch, arch):
    m, n, k = 133, 144, 208
    calls = fast_calls(monkeypatch)
    for i, case in enumerate(CONVERTED_STAGED[arch]):
        a, b, sa, sb, bias = fp8_case(*case, m, n, k, seed=6)
        if i == 0:  # an e4m3 NaN in the weight (S.1111.111): its column of out is NaN
            b[7, 3] = float("nan")
        want, slack = fp8_reference(a, b, sa, sb, bias)
        on(monkeypatch, "emu", arch)
        got = torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias)
        assert bool(got[:, 3].isnan().all()) == (i == 0)
        keep = [j for j in range(n) if i or j != 3]
        close(got[:, keep], want[:, keep], slack[:, keep])
        compute = hk.bf16 if case[1] in (E4, E5) else KINDS[case[1]]
        assert calls[-1] == (compute, KINDS[case[4]], case[3], KINDS[case[1]], KINDS[case[2]])
    assert len(calls) == 2


@pytest.mark.filterwarnings("error::hk.errors.HKWarning")
@pytest.mark.parametrize("arch", ["gfx1100", "gfx942"])
def test_converted_block_scaled_lds_staged_on_the_emulator(monkeypatch, arch):
    # OCP e4m3 where no instruction reads it, with block scales: each 128-group of K several
    # steps (mm8.CONVERT_BLOCK_BK), three groups; M past a workgroup's rows, N two workgroups'
    # columns; an e5m2 activation too. The race check proves the nested loops race-free (a
    # warning here is one every user's call would print).
    m, n, k = 133, 256, 384
    assert mm8.GROUP // mm8.CONVERT_BLOCK_BK > 1
    calls = fast_calls(monkeypatch)
    cases = (("block", E4, E4, True, torch.bfloat16), ("block_w_token", E4, E4, False, torch.float32),
             ("block_a", E5, E4, False, torch.float16))
    for case in cases:
        a, b, sa, sb, bias = fp8_case(*case, m, n, k, seed=8)
        want, slack = fp8_reference(a, b, sa, sb, bias)
        on(monkeypatch, "emu", arch)
        close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)
        on(monkeypatch, "interp", arch)
        close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)
    assert calls == [(hk.bf16, hk.bf16, True, hk.fp8e4m3, hk.fp8e4m3, "ab")] * 2 + \
        [(hk.bf16, hk.fp32, False, hk.fp8e4m3, hk.fp8e4m3, "b")] * 2 + \
        [(hk.bf16, hk.fp16, False, hk.fp8e5m2, hk.fp8e4m3, "a")] * 2


def test_which_fp8_calls_take_the_lds_staged_kernel(monkeypatch):
    calls = fast_calls(monkeypatch)
    on(monkeypatch, "interp", "gfx950")
    for case in (("row", E4, E4, False, torch.bfloat16), ("block", E4, E4, False, torch.bfloat16),
                 ("row", E4, E5, False, torch.bfloat16), ("w8a16", torch.bfloat16, E4, False, torch.bfloat16),
                 ("block", E4, E5, False, torch.bfloat16)):
        a, b, sa, sb, bias = fp8_case(*case, 5, 256, 256)  # (at K 128 blocks are rows)
        torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias)
    a, b, sa, sb, _ = fp8_case("block", E4, E4, False, torch.bfloat16, 5, 256, 264)  # rows of 264 bytes
    torch.ops.hk.scaled_mm(a[:, :256], b[:256], sa[:, :2], sb[:2], torch.bfloat16)  # (K 256 of 264-byte rows)
    on(monkeypatch, "interp", "gfx1100")  # no fp8 instruction: converted to bf16
    torch.ops.hk.scaled_mm(*fp8_case("row", E4, E4, False, torch.bfloat16, 5, 256, 256)[:4], torch.bfloat16)
    torch.ops.hk.scaled_mm(*fp8_case("block", E4, E4, False, torch.bfloat16, 5, 256, 256)[:4], torch.bfloat16)
    # The converted products (mixed formats, W8A16 on gfx950; e4m3 on gfx1100, blocks too) on
    # the same schedule, their tiles converted after each LDS read.
    converted = [(hk.bf16, hk.bf16, False, hk.fp8e4m3, hk.fp8e5m2), (hk.bf16, hk.bf16, False, hk.bf16, hk.fp8e4m3),
                 (hk.bf16, hk.bf16, False, hk.fp8e4m3, hk.fp8e5m2, "ab"), (hk.bf16, hk.bf16, False, hk.fp8e4m3, hk.fp8e4m3),
                 (hk.bf16, hk.bf16, False, hk.fp8e4m3, hk.fp8e4m3, "ab")]
    native = [(hk.fp8e4m3, hk.bf16, False), (hk.fp8e4m3, hk.bf16, False, "ab")]
    assert calls == native + converted
    a, b, sa, sb, _ = fp8_case("w8a16", torch.bfloat16, E4, False, torch.bfloat16, 5, 256, 100)  # 100-byte rows
    torch.ops.hk.scaled_mm(a, b, sa, sb, torch.bfloat16)
    on(monkeypatch, "interp", "gfx942")  # FNUZ weights of 16-bit activations: the direct kernel
    torch.ops.hk.scaled_mm(*fp8_case("w8a16", torch.bfloat16, E4Z, False, torch.bfloat16, 5, 256, 256)[:4],
                           torch.bfloat16)
    a, b, sa, sb, _ = fp8_case("row", E4, E4, False, torch.bfloat16, 5, 256, 256)  # OCP bytes, staged typed
    torch.ops.hk.scaled_mm(a, b, sa, sb, torch.bfloat16)
    # OCP blocks: converted, LDS-staged; FNUZ blocks on the fp8 instruction, LDS-staged.
    torch.ops.hk.scaled_mm(*fp8_case("block", E4, E4, False, torch.bfloat16, 5, 256, 256)[:4], torch.bfloat16)
    torch.ops.hk.scaled_mm(*fp8_case("block", E4Z, E4Z, False, torch.bfloat16, 5, 256, 256)[:4], torch.bfloat16)
    assert calls == native + converted + [(hk.bf16, hk.bf16, False, hk.fp8e4m3, hk.fp8e4m3),
                                          (hk.bf16, hk.bf16, False, hk.fp8e4m3, hk.fp8e4m3, "ab"),
                                          (hk.fp8e4m3fnuz, hk.bf16, False, "ab")]


def test_which_instruction_each_target_runs():
    plan = mm8.fp8_plan
    assert plan(E4, E4, "gfx950") == (hk.fp8e4m3, hk.fp8e4m3, hk.fp8e4m3)
    assert plan(E5, E5, "gfx1201") == (hk.fp8e5m2, hk.fp8e5m2, hk.fp8e5m2)
    assert plan(E4, E5, "gfx950") == (hk.fp8e4m3, hk.fp8e5m2, hk.bf16)        # mixed: converted
    assert plan(E4, E4, "gfx1100") == (hk.fp8e4m3, hk.fp8e4m3, hk.bf16)       # no fp8 instruction
    assert plan(E4, E4, "gfx942") == ("raw fp8e4m3", "raw fp8e4m3", hk.bf16)  # FNUZ: decoded bytes
    assert plan(torch.float16, E5, "gfx950") == (hk.fp16, hk.fp8e5m2, hk.fp16)
    assert plan(E4Z, E4Z, "gfx942") == (hk.fp8e4m3fnuz, hk.fp8e4m3fnuz, hk.fp8e4m3fnuz)  # FNUZ: native
    assert plan(E5Z, E5Z, "gfx942") == (hk.fp8e5m2fnuz, hk.fp8e5m2fnuz, hk.fp8e5m2fnuz)
    assert plan(E4Z, E5Z, "gfx942") == (hk.fp8e4m3fnuz, hk.fp8e5m2fnuz, hk.bf16)
    assert plan(torch.bfloat16, E4Z, "gfx942") == (hk.bf16, hk.fp8e4m3fnuz, hk.bf16)


FNUZ_CASES = [("row", E4Z, E4Z, True, torch.bfloat16), ("block", E4Z, E4Z, False, torch.bfloat16),
              ("tensor", E5Z, E5Z, True, torch.float32), ("w8a16", torch.bfloat16, E4Z, False, torch.bfloat16),
              ("none", E4Z, E5Z, False, torch.float16)]


@pytest.mark.parametrize("case", FNUZ_CASES, ids=lambda c: "%s-%s-%s" % (c[0], c[1], c[2]))
def test_fnuz_on_gfx942_interpreter(monkeypatch, case):
    on(monkeypatch, "interp", "gfx942")
    m, n, k = 37, 256, 384
    a, b, sa, sb, bias = fp8_case(*case, m, n, k)
    assert not torch.isnan(a.float()).any() and not torch.isnan(b.float()).any()
    want, slack = fp8_reference(a, b, sa, sb, bias)
    close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)


def test_fnuz_on_gfx942_emulator(monkeypatch):
    m, n, k = 37, 256, 256
    for case in FNUZ_CASES[:3]:
        a, b, sa, sb, bias = fp8_case(*case, m, n, k, seed=3)
        want, slack = fp8_reference(a, b, sa, sb, bias)
        on(monkeypatch, "emu", "gfx942")
        close(torch.ops.hk.scaled_mm(a, b, sa, sb, case[4], bias), want, slack)


def to_fnuz(x):
    """vLLM's OCP e4m3 -> FNUZ for MI300X: the same bytes (0x80, OCP's -0, made 0) read as FNUZ,
    which halves every value; the scales double to make up for it."""
    bits = x.view(torch.int8).clone()
    bits[bits == -128] = 0
    return bits.view(E4Z)


def test_an_ocp_checkpoint_in_fnuz_gives_the_ocp_answer_on_gfx942(monkeypatch):
    on(monkeypatch, "interp", "gfx942")
    m, n, k = 37, 128, 256
    a, b = fp8_operands(m, n, k, E4, seed=4)
    sa, sb = fp8_scales(m, n, k, seed=4)["row"]
    ocp = torch.ops.hk.scaled_mm(a, b, sa, sb, torch.float32)
    fnuz = torch.ops.hk.scaled_mm(to_fnuz(a), to_fnuz(b.t()).t(), sa * 2, sb * 2, torch.float32)
    want, slack = fp8_reference(a, b, sa, sb)
    close(ocp, want, slack)
    close(fnuz, want, slack)


@pytest.mark.parametrize("device, arch", [("interp", "gfx942"), ("emu", "gfx942"), ("emu", "gfx1100")])
def test_every_ocp_byte_decodes_as_torch_reads_it(monkeypatch, device, arch):
    on(monkeypatch, device, arch)
    for fmt, dtype in (("fp8e4m3", E4), ("fp8e5m2", E5)):
        @hk.kernel(grid=(1,))
        def decode(q: hk.Tensor[hk.i8], x: hk.Tensor[hk.bf16]):
            x[0, 0, 0, 0] = mm8.decode_ocp(q[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 16)), fmt, hk.bf16)

        q = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch.int8).view(16, 16)
        x = torch.empty(16, 16, dtype=torch.bfloat16)
        decode(q, x)
        want = q.view(dtype).to(torch.bfloat16)
        nan = want.isnan()
        assert torch.equal(x.isnan(), nan), fmt
        assert torch.equal(x.view(torch.int16)[~nan], want.view(torch.int16)[~nan]), fmt  # -0.0 and infinities too


@pytest.mark.parametrize("arch", ARCHS)
def test_every_ocp_byte_converts_to_16_bit_as_torch_reads_it(monkeypatch, arch):
    # The converted kernels' tile conversion (four elements of a word at once), each byte in
    # each slot of a lane's words: NaN, infinities, subnormals and -0.0 included.
    on(monkeypatch, "emu", arch)
    for hk_type, dtype in ((hk.fp8e4m3, E4), (hk.fp8e5m2, E5)):
        @hk.kernel(grid=(1,))
        def convert(q: hk.Tensor[hk_type], x: hk.Tensor[hk.bf16], h: hk.Tensor[hk.fp16]):
            t = q[0, 0, 0, 0].load(hk.RT(hk_type, 16, 64))
            x[0, 0, 0, 0] = t.to(hk.bf16, "row")
            h[0, 0, 0, 0] = t.to(hk.fp16, "row")

        codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
        q = torch.cat([codes.roll(r) for r in range(4)]).view(16, 64).view(dtype)
        x, h = torch.empty(16, 64, dtype=torch.bfloat16), torch.empty(16, 64, dtype=torch.float16)
        convert(q, x, h)
        for got, out in ((x, torch.bfloat16), (h, torch.float16)):
            want = q.to(out)
            nan = want.isnan()
            assert torch.equal(got.isnan(), nan), (dtype, out)
            assert torch.equal(got.view(torch.int16)[~nan], want.view(torch.int16)[~nan]), (dtype, out)


# the ops ----------------------------------------------------------------------------------------

def test_opcheck(interp):
    a, b, scale_a, scale_b, bias, adj, azp = int8_operands(16, 64, 64)
    bias = bias.to(torch.bfloat16)
    out = torch.empty(16, 64, dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.hk.int8_scaled_mm.default,
                          (a, b, scale_a, scale_b, torch.bfloat16, bias, adj, azp))
    torch.library.opcheck(torch.ops.hk.int8_scaled_mm_out.default, (out, a, b, scale_a, scale_b, bias))
    a8, b8 = fp8_operands(16, 128, 128)
    sa, sb = fp8_scales(16, 128, 128)["block"]
    # (test_schema compares the inputs before and after with an op CPU torch lacks for fp8.)
    utils = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
    torch.library.opcheck(torch.ops.hk.scaled_mm.default, (a8, b8, sa, sb, torch.bfloat16,
                                                           torch.randn(128).to(torch.bfloat16)), test_utils=utils)
    torch.library.opcheck(torch.ops.hk.scaled_mm_out.default, (torch.empty(16, 128, dtype=torch.bfloat16), a8, b8, None,
                                                               None), test_utils=utils)


def test_torch_compile_fullgraph(interp):
    a, b, scale_a, scale_b, _, _, _ = int8_operands(8, 64, 64)
    a8, b8 = fp8_operands(8, 64, 64)

    def both(a, a8):
        return (torch.ops.hk.int8_scaled_mm(a, b, scale_a, scale_b, torch.bfloat16)
                + torch.ops.hk.scaled_mm(a8, b8, None, scale_b.t().contiguous(), torch.bfloat16))

    assert torch.equal(torch.compile(both, fullgraph=True, backend="aot_eager")(a, a8), both(a, a8))


def refused(call, message):
    with pytest.raises(LaunchError, match=message):
        call()


def test_bad_int8_arguments_are_launch_errors(interp):
    a, b, sa, sb, bias, adj, azp = int8_operands(8, 64, 64)
    mm = torch.ops.hk.int8_scaled_mm
    bf = torch.bfloat16
    refused(lambda: mm(a.float(), b, sa, sb, bf), r"a is float32 \[8, 64\]; it must be int8")
    refused(lambda: mm(a, b.to(torch.int32), sa, sb, bf), r"b is int32 \[64, 64\]; it must be int8")
    refused(lambda: mm(a, b[:32], sa, sb, bf), r"they must be \[..., K\] and \[K, N\]")
    refused(lambda: mm(a, b, sa, sb, torch.float32), r"out_dtype is torch.float32; it must be bfloat16 or float16")
    refused(lambda: mm(a, b, sa.double(), sb, bf), r"scale_a is float64 \[8, 1\] on cpu; it must be float32")
    refused(lambda: mm(a, b, sa[:4], sb, bf), r"scale_a has shape \[4, 1\]; it must be one element \(per tensor\) "
                                              r"or per token \(\[M, 1\] = \[8, 1\]\)")
    refused(lambda: mm(a, b, sa, sb[:5], bf), r"scale_b has shape \[5, 1\]; .*per channel")
    refused(lambda: mm(a, b, sa, sb, bf, bias), r"bias is float32 \[64\] on cpu; it must be bfloat16 \[N\] = \[64\]")
    refused(lambda: mm(a, b, sa, sb, bf, None, adj[:3]), r"azp_adj is int32 \[3\]")
    refused(lambda: mm(a, b, sa, sb, bf, None, adj.float()), r"azp_adj is float32 \[64\]")
    refused(lambda: mm(a, b, sa, sb, bf, None, None, azp), "azp is given without azp_adj")
    refused(lambda: mm(a, b, sa, sb, bf, None, adj, azp[:2]), r"azp is int32 \[2\] on cpu; it must be int32 per token")
    refused(lambda: mm(a[:, :0], b[:0], sa, sb, bf), "K is 0")
    refused(lambda: torch.ops.hk.int8_scaled_mm_out(torch.empty(8, 32, dtype=bf), a, b, sa, sb),
            r"out is bfloat16 \[8, 32\] on cpu; it must be bfloat16 \[8, 64\]")


def test_bad_fp8_arguments_are_launch_errors(interp):
    m, n, k = 8, 256, 256
    a, b = fp8_operands(m, n, k)
    s = fp8_scales(m, n, k)
    mm = torch.ops.hk.scaled_mm
    bf = torch.bfloat16
    refused(lambda: mm(a.float(), b, None, None, bf), r"a is float32 \[8, 256\]; it must be float8_e4m3fn or "
                                                      r"float8_e5m2 or float8_e4m3fnuz or float8_e5m2fnuz or "
                                                      r"bfloat16 or float16")
    refused(lambda: mm(a, b.to(bf), None, None, bf),
            r"b is bfloat16 \[256, 256\]; it must be float8_e4m3fn or float8_e5m2 or float8_e4m3fnuz or "
            r"float8_e5m2fnuz")
    refused(lambda: mm(a.view(E4Z), b, None, None, bf), "a is float8_e4m3fnuz")
    refused(lambda: mm(a, b[:128], None, None, bf), r"\[K, N\]")
    refused(lambda: mm(a, b, s["row"][0].half(), None, bf), "scale_a is float16")
    refused(lambda: mm(a, b, None, s["row"][1].t(), bf), r"scale_b has shape \[256, 1\]; it must be one element "
                                                         r"\(per tensor\) or per column \(\[1, N\] = \[1, 256\]\), or "
                                                         r"block scales \[K/128, N/128\]")
    refused(lambda: mm(a, b, s["block"][0][:, :1].repeat(1, 3), s["block"][1], bf),
            r"scale_a has shape \[8, 3\]; block scales are \[M, K/128\] = \[8, 2\]")
    refused(lambda: mm(a, b, None, s["block"][1][:, :1], bf), r"scale_b has shape \[2, 1\]; block scales are "
                                                              r"\[K/128, N/128\] = \[2, 2\]")
    refused(lambda: mm(a[:, :200], b[:200], s["block"][0], s["block"][1], bf),
            "block scales need K a multiple of 128, not 200")
    refused(lambda: mm(a, b[:, :200], None, s["block"][1][:, :1], bf), "block scales need N a multiple of 128, not 200")
    refused(lambda: mm(a, b, None, None, bf, torch.zeros(256)), r"bias is float32 \[256\]")
    refused(lambda: mm(a, b, None, None, torch.float64), r"out_dtype is torch.float64; it must be bfloat16 or "
                                                         r"float16 or float32")
    refused(lambda: mm(a, b, None, None, torch.float32, torch.zeros(256, dtype=bf)),
            r"bias is bfloat16 \[256\] on cpu; it must be float32")


@pytest.mark.parametrize("arch", ["gfx950", "gfx1201", "gfx1100"])
def test_fnuz_is_refused_where_the_target_reads_ocp(monkeypatch, arch):
    on(monkeypatch, "interp", arch)
    a, b = fp8_operands(8, 128, 128, E4Z)
    takes = "takes OCP fp8" if arch != "gfx1100" else "has no fp8 instructions"
    with pytest.raises(LaunchError, match=r"a is float8_e4m3fnuz \[8, 128\], an FNUZ fp8 format, which only "
                                          r"gfx942's matrix instructions read; %s %s" % (arch, takes)) as e:
        torch.ops.hk.scaled_mm(a, b, None, None, torch.bfloat16)
    assert "float8_e4m3fn) keeps every value from 2^-9 up" in str(e.value)
    refused(lambda: torch.ops.hk.scaled_mm(a.view(E4), b, None, None, torch.bfloat16),
            r"b is float8_e4m3fnuz \[128, 128\], an FNUZ fp8 format")
    refused(lambda: torch.ops.hk.scaled_mm(torch.ones(8, 128, dtype=torch.bfloat16), b.view(E5Z), None, None,
                                           torch.bfloat16), r"b is float8_e5m2fnuz \[128, 128\], an FNUZ")


def test_ocp_with_fnuz_is_refused(monkeypatch):
    on(monkeypatch, "interp", "gfx942")
    a, b = fp8_operands(8, 128, 128, E4)
    for x, y in ((a, b.view(E4Z)), (a.view(E4Z), b), (a.view(E5Z), b.view(E5))):
        refused(lambda: torch.ops.hk.scaled_mm(x, y, None, None, torch.bfloat16),
                r"a is %s \[8, 128\] and b %s \[128, 128\]: one OCP, the other FNUZ; both must be one family"
                % (str(x.dtype)[6:], str(y.dtype)[6:]))


@pytest.mark.parametrize("arch", ARCHS)
def test_the_kernels_pass_the_gates(arch):
    target = facts.target(arch)
    kernels = [mm8.mm8_kernel(hk.i8, hk.i8, hk.i8, hk.bf16, True, "token"),
               mm8.mm8_kernel(hk.i8, hk.i8, hk.i8, hk.fp16, False, "adj")]
    raw = target.fp8_format == "fnuz"
    f8 = "raw fp8e4m3" if raw else hk.fp8e4m3
    native = []  # FNUZ kernels, which must run gfx942's fp8 MFMA
    for block in (False, True):
        kernels.append(mm8.mm8_kernel(f8, f8, hk.bf16, hk.bf16, True, None, block))  # converted
        kernels.append(mm8.mm8_kernel(hk.bf16, f8, hk.bf16, hk.bf16, True, None, block))  # W8A16
        if target.fp8_format == "ocp":
            kernels.append(mm8.mm8_kernel(hk.fp8e4m3, hk.fp8e4m3, hk.fp8e4m3, hk.bf16, True, None, block))
            kernels.append(mm8.mm8_kernel(hk.fp8e4m3, hk.fp8e4m3, hk.fp8e4m3, hk.fp32, True, None, block))
        else:
            kernels.append(mm8.mm8_kernel(f8, f8, hk.bf16, hk.fp32, True, None, block))
        if target.fp8_format == "fnuz":
            z = hk.fp8e4m3fnuz  # FNUZ on the fp8 instruction, and as a 16-bit activation's weight
            native.append(mm8.mm8_kernel(z, z, z, hk.bf16, True, None, block))
            native.append(mm8.mm8_kernel(z, z, z, hk.fp32, True, None, block))
            kernels.append(mm8.mm8_kernel(hk.bf16, z, hk.bf16, hk.bf16, True, None, block))
    fast = [mm8.mm8_fast_kernel(hk.i8, hk.bf16, True), mm8.mm8_fast_kernel(hk.i8, hk.fp16, False)]
    if target.fp8_format:
        z = hk.fp8e4m3fnuz if target.fp8_format == "fnuz" else hk.fp8e4m3
        fast += [mm8.mm8_fast_kernel(z, hk.bf16, True), mm8.mm8_fast_kernel(z, hk.fp32, False)]
    for kernel in fast:  # (rows of 16-byte multiples only)
        built = kernel.build(arch, divisors=16)
        assert built.meta.spills == 0, built.report()
        mnemonics = {line.mnemonic for line in disasm.disassemble(built.code_object, arch)}
        assert any(m.startswith(("v_wmma_", "v_mfma_")) and ("i8" in m or "iu8" in m or "fp8" in m) for m in mnemonics), \
            sorted(mnemonics)
    # The converted products on the same schedule, on the 16-bit instruction.
    converted = [mm8.mm8_fast_kernel(hk.bf16, hk.bf16, True, hk.bf16, hk.fp8e4m3),
                 mm8.mm8_fast_kernel(hk.fp16, hk.fp32, False, hk.fp16, hk.fp8e5m2),
                 mm8.mm8_fast_kernel(hk.bf16, hk.fp16, True, hk.fp8e4m3, hk.fp8e5m2),
                 mm8.mm8_fast_kernel(hk.bf16, hk.bf16, True, hk.fp8e4m3, hk.fp8e5m2, block="ab"),
                 mm8.mm8_fast_kernel(hk.bf16, hk.fp32, False, hk.fp8e5m2, hk.fp8e4m3, block="b")]
    for kernel in converted:
        built = kernel.build(arch, divisors=16)
        assert built.meta.spills == 0, built.report()
        mnemonics = {line.mnemonic for line in disasm.disassemble(built.code_object, arch)}
        assert any(m.startswith(("v_wmma_f32_16x16x16_", "v_mfma_f32_16x16x")) and ("bf16" in m or "f16" in m)
                   for m in mnemonics), sorted(mnemonics)
    for kernel in kernels + native:
        for divisors in (16, 1):
            built = kernel.build(arch, divisors=divisors)
            assert built.meta.spills == 0, built.report()
            if kernel in native:
                mnemonics = {line.mnemonic for line in disasm.disassemble(built.code_object, arch)}
                assert "v_mfma_f32_16x16x32_fp8_fp8" in mnemonics, sorted(mnemonics)
