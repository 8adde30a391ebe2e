"""hk.ops.flash_attention (the library's attention kernel as an op) against torch's SDPA: head
sizes 64 and 128, grouped-query heads, causal or not, ragged token counts, a non-contiguous q;
on the interpreter and on the emulator (gfx1100, gfx950); opcheck, torch.compile(fullgraph),
what it refuses, and its kernels through the gates on every target."""

import math

import pytest
import torch
import torch.nn.functional as F

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import attention
from hk.target import facts


def qkv(b, h, hkv, n, d, seed=0, nk=None):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, n, d, generator=g).to(torch.bfloat16)
    k = torch.randn(b, hkv, nk or n, d, generator=g).to(torch.bfloat16)
    v = torch.randn(b, hkv, nk or n, d, generator=g).to(torch.bfloat16)
    return q, k, v


def reference(q, k, v, scale, causal):
    # Causal as in a prefill: the queries are the last of the keys' tokens (query i sees keys up
    # to Nk - Nq + i; torch's is_causal aligns query i with key i instead).
    group = q.shape[1] // k.shape[1]
    k, v = (t.float().repeat_interleave(group, 1) for t in (k, v))
    n, nk = q.shape[2], k.shape[2]
    mask = torch.ones(n, nk, dtype=torch.bool).tril(nk - n) if causal else None
    return F.scaled_dot_product_attention(q.float(), k, v, attn_mask=mask, scale=scale).to(q.dtype)


def close(got, want):
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("d, h, hkv, n, nk", [(64, 2, 2, 200, 200), (64, 4, 1, 45, 45), (128, 4, 2, 150, 150),
                                              (128, 2, 1, 17, 17), (64, 2, 1, 30, 170), (128, 2, 2, 140, 141)])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_on_the_interpreter(interp, d, h, hkv, n, nk, causal):
    q, k, v = qkv(1, h, hkv, n, d, nk=nk)
    scale = 1 / math.sqrt(d)
    close(torch.ops.hk.flash_attention(q, k, v, scale, causal), reference(q, k, v, scale, causal))
    out = torch.empty_like(q)
    torch.ops.hk.flash_attention_out(out, q, k, v, scale, causal)
    close(out, reference(q, k, v, scale, causal))


def test_a_transposed_q_is_read_through_a_copy(interp):
    q, k, v = qkv(2, 2, 2, 40, 64)
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # [B, H, N, D] seen through [B, N, H, D]
    close(torch.ops.hk.flash_attention(qt, k, v, 0.125, False), reference(q, k, v, 0.125, False))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("d, h, hkv, n, nk, causal", [(128, 2, 1, 70, 70, True), (64, 2, 2, 90, 90, False),
                                                      (64, 2, 1, 20, 150, True)])
def test_flash_attention_on_the_emulator(monkeypatch, arch, d, h, hkv, n, nk, causal):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    q, k, v = qkv(1, h, hkv, n, d, nk=nk)
    close(torch.ops.hk.flash_attention(q, k, v, 0.09, causal), reference(q, k, v, 0.09, causal))


def test_a_nan_reaches_the_rows_it_touches(monkeypatch):
    # P's conversion skips its NaN test (hk.cast finite); the NaN still reaches the sum.
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    q, k, v = qkv(1, 1, 1, 40, 64)
    q[0, 0, 7, 3] = float("nan")
    got = torch.ops.hk.flash_attention(q, k, v, 0.125, False)
    rows = got[0, 0].isnan().all(dim=1)
    assert rows[7] and rows.sum() == 1, rows
    k[0, 0, 30, 0] = float("nan")
    assert torch.ops.hk.flash_attention(q, k, v, 0.125, False).isnan().all()


def test_what_it_refuses(interp):
    q, k, v = qkv(1, 2, 1, 16, 64)
    with pytest.raises(LaunchError, match="head size 96"):
        torch.ops.hk.flash_attention(*qkv(1, 2, 1, 16, 96), 0.1, False)
    with pytest.raises(LaunchError, match="float16 are not supported"):
        torch.ops.hk.flash_attention(q.half(), k.half(), v.half(), 0.1, False)
    with pytest.raises(LaunchError, match="causal with 16 queries and 8 keys.*Nq <= Nk"):
        torch.ops.hk.flash_attention(q, k[:, :, :8], v[:, :, :8], 0.1, True)
    with pytest.raises(LaunchError, match="multiple of the K/V heads"):
        torch.ops.hk.flash_attention(*qkv(1, 3, 2, 16, 64), 0.1, False)
    for scale in (0.0, -0.1, float("nan")):
        with pytest.raises(LaunchError, match="takes a positive scale"):
            torch.ops.hk.flash_attention(q, k, v, scale, False)


@pytest.mark.parametrize("name", ["flash_attention", "flash_attention_out"])
def test_opcheck(interp, name):
    q, k, v = qkv(1, 2, 1, 24, 64)
    args = (q, k, v, 0.125, True)
    torch.library.opcheck(getattr(torch.ops.hk, name).default,
                          args if name == "flash_attention" else (torch.empty_like(q),) + args)


def test_torch_compile_fullgraph(interp):
    q, k, v = qkv(1, 2, 2, 32, 64)
    w = torch.randn(64, 64).to(torch.bfloat16)

    def layer(q, k, v):
        o = torch.ops.hk.flash_attention(torch.ops.hk.rms_norm(q, None, 1e-6), k, v, 0.125, True)
        return torch.ops.hk.linear(o, w)

    assert torch.equal(torch.compile(layer, fullgraph=True, backend="aot_eager")(q, k, v), layer(q, k, v))


@pytest.mark.parametrize("arch", facts.archs())
def test_its_kernels_pass_the_gates(arch):
    for d, group in ((64, 2), (128, 4)):
        for causal in (False, True):
            built = attention.attention_kernel(d, group).build(arch, divisors=64, CAUSAL=causal)
            assert built.meta.spills == 0, built.report()


def test_sdpa_runs_hk_where_it_can_and_torch_elsewhere(interp):
    q, k, v = qkv(1, 4, 2, 48, 64)
    assert hk.ops.sdpa_route(q, k, v, is_causal=True, enable_gqa=True) is None
    close(hk.ops.sdpa(q, k, v, is_causal=True, enable_gqa=True), reference(q, k, v, 0.125, True))
    q2, k2, v2 = qkv(1, 2, 2, 48, 128)
    close(hk.ops.sdpa(q2, k2, v2, scale=0.3), reference(q2, k2, v2, 0.3, False))
    # Each call the kernel does not cover is torch's own, bit for bit, and route says why.
    mask = torch.ones(48, 48, dtype=torch.bool).tril()
    q80 = qkv(1, 2, 2, 48, 80)
    cases = [((q, k, v), dict(is_causal=True), "query heads"),             # GQA without enable_gqa
             ((q2, k2, v2), dict(attn_mask=mask), "attn_mask"),
             ((q2, k2, v2), dict(dropout_p=0.0, is_causal=False), None),
             ((q2.half(), k2.half(), v2.half()), {}, "dtype"),
             (q80, {}, "head size 80"),
             ((q2, k2[:, :, :40], v2[:, :, :40]), dict(is_causal=True), "causal mask"),
             ((q2, k2, v2), dict(scale=-0.3), "positive scale"),
             ((q2, k2, v2), dict(scale=0.0), "positive scale")]
    for args, kwargs, why in cases:
        reason = hk.ops.sdpa_route(*args, **kwargs)
        if why is None:
            assert reason is None
            continue
        assert why in reason, reason
        if "query heads" in why:
            continue  # torch refuses it too
        want = F.scaled_dot_product_attention(*args, **kwargs)
        assert torch.equal(hk.ops.sdpa(*args, **kwargs), want)
