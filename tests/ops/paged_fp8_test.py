"""vLLM's fp8 KV cache (kv_cache_dtype "fp8": OCP e4m3 bytes with per-tensor k_scale and
v_scale): hk.ops.reshape_and_cache_flash writing it bit for bit as torch's saturating reference
of vLLM's scaled conversion (x / scale in fp32, clamped to +-448, rounded to nearest even; NaN
stays NaN), uint8 and float8_e4m3fn caches, separate and interleaved (vLLM 0.33's one cache with
a K and a V scale); paged decode and prefill attention reading it, against a float64 reference
that dequantizes as vLLM's Triton kernel does (bf16(byte * scale)); on the interpreter (also as
gfx942, whose bytes indexed.encode_e4m3 computes and mm8.decode_ocp decodes) and the emulator
(gfx1100, gfx950; decode and the write also gfx942 and gfx1201); opcheck, the refusals, and the
kernels through the gates on every target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import indexed, paged
from hk.target import facts

E4M3 = torch.float8_e4m3fn


def vllm_bytes(x, scale):
    """What vLLM stores for x in an fp8 cache: x / scale in fp32, saturated, to e4m3 (uint8)."""
    return (x.float() / scale.float()).clamp(-448.0, 448.0).to(E4M3).view(torch.uint8)


def dequant(cache, scale):
    """An e4m3 cache's values as vLLM's attention reads them: bf16(value * scale), in float64."""
    return (cache.view(E4M3).float() * scale.float()).to(torch.bfloat16).double()


def same_bytes(got, want):
    got, want = got.view(torch.uint8), want.view(torch.uint8)
    nan = want.view(E4M3).isnan()
    assert torch.equal(got.view(E4M3).isnan(), nan)
    assert torch.equal(got[~nan], want[~nan])


def on(monkeypatch, device, arch=None):
    monkeypatch.setenv("HK_DEVICE", device)
    if arch:
        monkeypatch.setenv("HK_ARCH", arch)


@pytest.fixture
def interp(monkeypatch):
    on(monkeypatch, "interp")


def write_case(tokens, kv_heads, head, blocks, bs, dtype=torch.bfloat16, slot_dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    key = (torch.randn(tokens, kv_heads, head, generator=g) * 3).to(dtype)
    value = (torch.randn(tokens, kv_heads, head, generator=g) * 0.2).to(dtype)
    slots = (torch.randperm(blocks * bs - 1, generator=g)[:tokens] + 1).to(slot_dtype)
    slots[1::4] = -1
    if slot_dtype == torch.int64:  # outside int32, with a low word inside the cache: dropped
        slots[2::5] = 2 ** 32 + 5
    old = torch.randint(0, 256, (2, blocks, bs, kv_heads, head), generator=g, dtype=torch.int32).to(torch.uint8)
    return key, value, old[0], old[1], slots


def expected(key, value, key_cache, value_cache, slots, k_scale, v_scale):
    kc, vc = key_cache.clone().view(torch.uint8), value_cache.clone().view(torch.uint8)
    kb, vb = vllm_bytes(key, k_scale), vllm_bytes(value, v_scale)
    for i, s in enumerate(slots.tolist()):
        if 0 <= s < kc.shape[0] * kc.shape[1]:
            kc.view(-1, *kc.shape[2:])[s] = kb[i]
            vc.view(-1, *vc.shape[2:])[s] = vb[i]
    return kc, vc


def scales(k=0.01, v=0.0017):
    return torch.tensor([k]), torch.tensor([v])


def write_and_check(key, value, kc, vc, slots, k_scale, v_scale, kv_cache_dtype="fp8"):
    want_k, want_v = expected(key, value, kc, vc, slots, k_scale, v_scale)
    torch.ops.hk.reshape_and_cache_flash(key, value, kc, vc, slots, kv_cache_dtype, k_scale, v_scale)
    same_bytes(kc, want_k)
    same_bytes(vc, want_v)


# the cache write ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("slot_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("cache_dtype", [torch.uint8, E4M3])
def test_write_on_the_interpreter(interp, dtype, slot_dtype, cache_dtype):
    key, value, kc, vc, slots = write_case(21, 2, 64, 6, 16, dtype, slot_dtype)
    k_scale, v_scale = scales()  # some keys beyond 448 * k_scale: saturated
    assert (key.float().abs() > 448 * 0.01).any()
    write_and_check(key, value, kc.view(cache_dtype), vc.view(cache_dtype), slots, k_scale, v_scale,
                    "fp8_e4m3" if dtype == torch.float16 else "fp8")


def special_values():
    """Beyond the range (saturated), infinities (saturated), NaN, -0.0, ties of the grid, the
    subnormals and what rounds to zero, at scale 0.5."""
    row = [1000.0, -1000.0, 448.0, 464.0, -470.0, float("inf"), float("-inf"), float("nan"), -0.0, 0.0,
           2.0 ** -10, -(2.0 ** -11), 2.0 ** -8 * 3, 1.0625, 1.1875, 0.0078125]
    row = torch.tensor(row) * 0.5
    return row.repeat(4).view(1, 1, 64)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx942"])
def test_saturation_nan_and_rounding(monkeypatch, arch):
    on(monkeypatch, "interp", arch)
    for dtype in (torch.float32, torch.bfloat16):
        x = special_values().to(dtype)
        kc = torch.zeros(1, 16, 1, 64, dtype=torch.uint8)
        vc = torch.zeros(1, 16, 1, 64, dtype=torch.uint8)
        slots = torch.tensor([3])
        half = torch.tensor([0.5])
        torch.ops.hk.reshape_and_cache_flash(x, -x, kc, vc, slots, "fp8", half, half)
        got = kc[0, 3, 0, :16]
        assert got[:8].view(E4M3).float()[[0, 1, 2, 3, 4, 5, 6]].tolist() == [448, -448, 448, 448, -448, 448, -448]
        assert got[7].view(E4M3).isnan()
        same_bytes(kc[0, 3, 0], vllm_bytes(x[0, 0], half))  # -0.0 as 0x80, ties to even
        same_bytes(vc[0, 3, 0], vllm_bytes(-x[0, 0], half))


@pytest.mark.parametrize("head", [32, 64])
def test_write_into_the_halves_of_one_cache(interp, head):
    # vLLM 0.33's layer cache (each head's K then its V), with different K and V scales; a head
    # of 32 is written 16 columns at a time.
    key, value, kc, vc, slots = write_case(19, 2, head, 4, 16)
    k_scale, v_scale = scales()
    one = torch.cat([kc, vc], -1)
    k_half, v_half = one.split(head, dim=-1)
    want_k, want_v = expected(key, value, kc, vc, slots, k_scale, v_scale)
    torch.ops.hk.reshape_and_cache_flash(key, value, k_half, v_half, slots, "fp8", k_scale, v_scale)
    same_bytes(k_half, want_k)
    same_bytes(v_half, want_v)


def test_auto_is_the_16_bit_path(interp):
    key, value, _, _, slots = write_case(9, 2, 64, 2, 16)
    kc, vc = torch.zeros(2, 2, 16, 2, 64, dtype=torch.bfloat16)
    torch.ops.hk.reshape_and_cache_flash(key, value, kc, vc, slots, "auto", None, None)
    kc2, vc2 = torch.zeros(2, 2, 16, 2, 64, dtype=torch.bfloat16)
    torch.ops.hk.reshape_and_cache_flash(key, value, kc2, vc2, slots)
    assert torch.equal(kc, kc2) and torch.equal(vc, vc2) and kc.abs().sum() > 0


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950", "gfx942", "gfx1201"])
def test_write_on_the_emulator(monkeypatch, arch):
    on(monkeypatch, "emu", arch)
    key, value, kc, vc, slots = write_case(21, 2, 64, 4, 16)
    write_and_check(key, value, kc, vc, slots, *scales())
    x = special_values()
    kc, vc = torch.zeros(2, 1, 16, 1, 64, dtype=torch.uint8)
    torch.ops.hk.reshape_and_cache_flash(x, x, kc, vc, torch.tensor([5]), "fp8", torch.tensor([0.5]),
                                         torch.tensor([0.5]))
    same_bytes(kc[0, 5, 0], vllm_bytes(x[0, 0], torch.tensor([0.5])))


# attention on it ---------------------------------------------------------------------------------

def cache(seqs_lens, heads, kv_heads, d, bs, blocks=24, seed=0):
    """Tokens written through the op into fresh uint8 caches: (kc, vc, tables, k_scale, v_scale)."""
    g = torch.Generator().manual_seed(seed)
    kc = torch.randint(0, 256, (blocks, bs, kv_heads, d), generator=g, dtype=torch.int32).to(torch.uint8)
    vc = torch.randint(0, 256, (blocks, bs, kv_heads, d), generator=g, dtype=torch.int32).to(torch.uint8)
    most = max(max(-(-n // bs) for n in seqs_lens), 1)
    order = torch.randperm(blocks, generator=g)
    tables = torch.stack([order[most * s:most * (s + 1)] for s in range(len(seqs_lens))]).to(torch.int32)
    slots = torch.cat([tables[s].long().repeat_interleave(bs)[:n] * bs + torch.arange(n) % bs
                       for s, n in enumerate(seqs_lens)] + [torch.zeros(0, dtype=torch.int64)])
    tokens = slots.numel()
    key = (torch.randn(tokens, kv_heads, d, generator=g) * 2).to(torch.bfloat16)
    value = torch.randn(tokens, kv_heads, d, generator=g).to(torch.bfloat16)
    k_scale, v_scale = torch.tensor([0.02]), torch.tensor([0.005])  # some keys saturate
    torch.ops.hk.reshape_and_cache_flash(key, value, kc, vc, slots, "fp8", k_scale, v_scale)
    return kc, vc, tables, k_scale, v_scale


def reference(q, kc, vc, tables, lens, starts, scale, k_scale, v_scale):
    """float64 attention of each sequence's queries (its last tokens, causal) on the cache
    dequantized as vLLM reads it."""
    _, heads, d = q.shape
    _, bs, kv_heads, _ = kc.shape
    out = torch.zeros(q.shape, dtype=torch.float64)
    k_all, v_all = dequant(kc, k_scale), dequant(vc, v_scale)
    for s in range(len(lens)):
        a, b, n = int(starts[s]), int(starts[s + 1]), int(lens[s])
        if a == b or n == 0:
            continue
        blocks = tables[s, :(n + bs - 1) // bs].long()
        k = k_all[blocks].reshape(-1, kv_heads, d)[:n].repeat_interleave(heads // kv_heads, 1)
        v = v_all[blocks].reshape(-1, kv_heads, d)[:n].repeat_interleave(heads // kv_heads, 1)
        logits = torch.einsum("thd,nhd->thn", q[a:b].double(), k) * scale
        mask = torch.ones(b - a, n, dtype=torch.bool).tril(n - (b - a))
        p = torch.softmax(logits.masked_fill(~mask[:, None, :], float("-inf")), -1)
        out[a:b] = torch.einsum("thn,nhd->thd", p, v)
    return out


def close(got, want):
    torch.testing.assert_close(got.double(), want, rtol=1.6e-2, atol=1e-2)


def decode_case(lens, heads, kv_heads, d, bs, seed=0):
    kc, vc, tables, ks, vs = cache(lens, heads, kv_heads, d, bs, seed=seed)
    q = torch.randn(len(lens), heads, d, generator=torch.Generator().manual_seed(seed + 1)).to(torch.bfloat16)
    return q, kc, vc, tables, torch.tensor(lens, dtype=torch.int32), ks, vs


def check_decode(q, kc, vc, tables, lens, ks, vs, scale=0.1):
    want = reference(q, kc, vc, tables, lens, torch.arange(len(lens) + 1), scale, ks, vs)
    close(torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, scale, ks, vs), want)
    return want


@pytest.mark.parametrize("heads, kv_heads, d, bs", [(8, 2, 64, 16), (4, 4, 128, 32), (6, 2, 128, 16)])
def test_decode_on_the_interpreter(interp, heads, kv_heads, d, bs):
    q, kc, vc, tables, lens, ks, vs = decode_case([37, 1, 0, 3 * bs], heads, kv_heads, d, bs)
    want = check_decode(q, kc, vc, tables, lens, ks, vs)
    out = torch.full_like(q, 9.0)
    torch.ops.hk.paged_attention_decode_out(out, q, kc.view(E4M3), vc.view(E4M3), tables, lens, 0.1, ks, vs)
    close(out, want)
    assert torch.equal(out[2], torch.zeros_like(out[2]))
    # The scales are read: others give other values.
    other = torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.1, ks, vs * 2)
    close(other, want * 2)


def test_decode_as_gfx942_on_the_interpreter(monkeypatch):
    on(monkeypatch, "interp", "gfx942")  # the bytes decoded by mm8.decode_ocp
    check_decode(*decode_case([37, 5], 8, 2, 64, 16))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950", "gfx942", "gfx1201"])
def test_decode_on_the_emulator(monkeypatch, arch):
    on(monkeypatch, "emu", arch)
    check_decode(*decode_case([37, 1, 2 * 16 + 5], 8, 2, 64, 16))


def prefill_case(new, cached, heads, kv_heads, d, bs, seed=1):
    lens = [n + c for n, c in zip(new, cached)]
    kc, vc, tables, ks, vs = cache(lens, heads, kv_heads, d, bs, blocks=40, seed=seed)
    q = torch.randn(sum(new), heads, d, generator=torch.Generator().manual_seed(seed + 1)).to(torch.bfloat16)
    starts = torch.tensor([0] + list(torch.tensor(new).cumsum(0)), dtype=torch.int32)
    return q, kc, vc, tables, torch.tensor(lens, dtype=torch.int32), starts, max(new), ks, vs


def check_prefill(q, kc, vc, tables, lens, starts, most, ks, vs, scale=0.1):
    want = reference(q, kc, vc, tables, lens, starts, scale, ks, vs)
    close(torch.ops.hk.paged_attention_prefill(q, kc, vc, tables, lens, starts, most, scale, ks, vs), want)
    return want


@pytest.mark.parametrize("heads, kv_heads, d, bs", [(4, 2, 64, 16), (2, 2, 128, 32)])
def test_prefill_on_the_interpreter(interp, heads, kv_heads, d, bs):
    args = prefill_case([20, 7, 1, 0, 35], [0, 45, 60, 10, 3], heads, kv_heads, d, bs)
    want = check_prefill(*args)
    out = torch.full_like(args[0], 9.0)
    torch.ops.hk.paged_attention_prefill_out(out, *args[:7], 0.1, *args[7:])
    close(out, want)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_prefill_on_the_emulator(monkeypatch, arch):
    on(monkeypatch, "emu", arch)
    check_prefill(*prefill_case([18, 5, 0], [0, 40, 9], 4, 2, 64, 16))


def halves(kc, vc):
    d = kc.shape[-1]
    return torch.cat([kc, vc], -1).permute(0, 2, 1, 3).transpose(1, 2).split(d, dim=-1)


@pytest.mark.parametrize("device, arch", [("interp", None), ("emu", "gfx1100"), ("emu", "gfx950")])
def test_halves_of_one_fp8_cache(monkeypatch, device, arch):
    on(monkeypatch, device, arch)
    q, kc, vc, tables, lens, ks, vs = decode_case([37, 16], 8, 2, 64, 16)
    k_half, v_half = halves(kc, vc)
    assert paged.interleaved(k_half, v_half) is not None
    want = reference(q, kc, vc, tables, lens, torch.arange(3), 0.1, ks, vs)
    close(torch.ops.hk.paged_attention_decode(q, k_half, v_half, tables, lens, 0.1, ks, vs), want)
    args = prefill_case([18, 5], [0, 40], 4, 2, 64, 16)
    q, kc, vc, tables, lens, starts, most, ks, vs = args
    close(torch.ops.hk.paged_attention_prefill(q, *halves(kc, vc), tables, lens, starts, most, 0.1, ks, vs),
          reference(q, kc, vc, tables, lens, starts, 0.1, ks, vs))


# opcheck, refusals, gates ------------------------------------------------------------------------

def test_opcheck(interp):
    key, value, kc, vc, slots = write_case(20, 1, 64, 2, 16)
    ks, vs = scales()
    torch.library.opcheck(torch.ops.hk.reshape_and_cache_flash.default, (key, value, kc, vc, slots, "fp8", ks, vs))
    q, kc, vc, tables, lens, ks, vs = decode_case([5, 20], 4, 2, 64, 16)
    torch.library.opcheck(torch.ops.hk.paged_attention_decode.default, (q, kc, vc, tables, lens, 0.125, ks, vs))
    torch.library.opcheck(torch.ops.hk.paged_attention_decode_out.default,
                          (torch.empty_like(q), q, kc, vc, tables, lens, 0.125, ks, vs))
    args = prefill_case([5, 9], [3, 0], 4, 2, 64, 16)
    torch.library.opcheck(torch.ops.hk.paged_attention_prefill.default, (*args[:7], 0.125, *args[7:]))


def test_refusals(interp):
    key, value, kc, vc, slots = write_case(8, 2, 64, 2, 16)
    ks, vs = scales()
    write = torch.ops.hk.reshape_and_cache_flash
    with pytest.raises(LaunchError, match="key_cache is torch.uint8 but kv_cache_dtype is 'auto'"):
        write(key, value, kc, vc, slots)
    with pytest.raises(LaunchError, match="k_scale is missing"):
        write(key, value, kc, vc, slots, "fp8", None, vs)
    with pytest.raises(LaunchError, match="v_scale is torch.float32 \\[2\\].*float32 of one element"):
        write(key, value, kc, vc, slots, "fp8", ks, torch.ones(2))
    with pytest.raises(LaunchError, match="k_scale is torch.float16"):
        write(key, value, kc, vc, slots, "fp8", ks.half(), vs)
    with pytest.raises(LaunchError, match="kv_cache_dtype 'fp8_e5m2' is not supported"):
        write(key, value, kc, vc, slots, "fp8_e5m2", ks, vs)
    with pytest.raises(LaunchError, match="kv_cache_dtype is 'int4'"):
        write(key, value, kc, vc, slots, "int4", ks, vs)
    with pytest.raises(LaunchError, match="key_cache is torch.bfloat16; with kv_cache_dtype='fp8'"):
        write(key, value, kc.to(torch.bfloat16), vc, slots, "fp8", ks, vs)
    q, kc, vc, tables, lens, ks, vs = decode_case([5, 9], 4, 2, 64, 16)
    with pytest.raises(LaunchError, match="v_scale is missing"):
        torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.1, ks)
    with pytest.raises(LaunchError, match="k_scale is torch.float32 \\[1, 2\\]"):
        torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.1, torch.ones(1, 2), vs)
    with pytest.raises(LaunchError, match="key_cache is torch.uint8 and value_cache torch.float8_e4m3fn"):
        torch.ops.hk.paged_attention_decode(q, kc, vc.view(E4M3), tables, lens, 0.1, ks, vs)
    with pytest.raises(LaunchError, match="key_cache is torch.int8"):
        torch.ops.hk.paged_attention_decode(q, kc.view(torch.int8), vc.view(torch.int8), tables, lens, 0.1, ks, vs)


@pytest.mark.parametrize("arch", facts.archs())
def test_the_kernels_pass_the_gates(arch):
    raw = facts.target(arch).fp8_format == "fnuz"
    fp8 = "raw fp8e4m3" if raw else "fp8e4m3"
    kernels = [indexed.kv_write_fp8_kernel(hk.bf16, raw, width) for width in ((16,) if raw else (16, 64))]
    for d, group, bs in ((64, 4, 16), (128, 8, 16), (128, 1, 32)):
        kernels += [paged.decode_kernel(d, group, bs, 1, fp8), paged.prefill_kernel(d, group, bs, 1, fp8)]
    kernels += [paged.decode_kernel(128, 8, 16, 2, fp8), paged.prefill_kernel(128, 8, 16, 2, fp8)]
    for kernel in kernels:
        built = kernel.build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()

