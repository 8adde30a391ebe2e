"""hk.ops.rotary_embedding (vLLM's signature, in place on q and k) against a torch reference:
neox and interleaved, bf16 and fp16 (and fp32 with an fp32 cache, neox), whole and partial
rotary widths, head sizes 64, 80 and 128, grouped-query k, q and k sliced out of one qkv tensor,
int32 and int64 positions, ragged token counts; on the interpreter and the emulator (gfx1100,
gfx950); opcheck, what it refuses, torch.compile(fullgraph) over a model block (norm -> linear ->
rope -> attention -> silu-mul) against eager, and its kernels through the gates on every target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import rotary
from hk.target import facts

# One rounding of an fp32 result: at most one unit in the last place of the dtype.
TOL = {torch.bfloat16: 8e-3, torch.float16: 1e-3, torch.float32: 1e-5}


reference = rotary.reference


def case(tokens, heads, kv_heads, head, rot, dtype, cache_dtype=None, seed=0, max_pos=300):
    """positions, q and k (slices of one qkv tensor), the cache, and the expected q and k."""
    g = torch.Generator().manual_seed(seed)
    positions = torch.randint(0, max_pos, (tokens,), generator=g)
    cache = torch.randn(max_pos, rot, generator=g).to(cache_dtype or dtype)
    qkv = torch.randn(tokens, (heads + 2 * kv_heads) * head, generator=g).to(dtype)
    q, k = qkv[:, :heads * head], qkv[:, heads * head:(heads + kv_heads) * head]
    return positions, qkv, q, k, cache


def close(got, want):
    tol = TOL[want.dtype]
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


def run_case(neox, dtype, head, rot, tokens=37, heads=4, kv_heads=2, cache_dtype=None, int32=False):
    positions, qkv, q, k, cache = case(tokens, heads, kv_heads, head, rot, dtype, cache_dtype)
    want_q, want_k = reference(positions, q, head, cache, neox), reference(positions, k, head, cache, neox)
    v = qkv[:, (heads + kv_heads) * head:].clone()
    torch.ops.hk.rotary_embedding(positions.int() if int32 else positions, q, k, head, cache, neox)
    close(q, want_q)
    close(k, want_k)
    assert torch.equal(qkv[:, (heads + kv_heads) * head:], v)  # v, beside them, untouched


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("neox", [True, False])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head, rot", [(64, 64), (128, 128), (128, 64), (80, 32)])
def test_rotary_on_the_interpreter(interp, neox, dtype, head, rot):
    if not neox and head % 32:
        pytest.skip("the interleaved form moves 32 columns at a time")
    run_case(neox, dtype, head, rot)


def test_fp32_with_an_fp32_cache_and_int32_positions(interp):
    run_case(True, torch.float32, 64, 64, int32=True)
    run_case(True, torch.bfloat16, 128, 128, cache_dtype=torch.float32, tokens=5)


def test_q_alone_three_dimensional_and_one_token(interp):
    positions, _, q, _, cache = case(1, 2, 1, 64, 64, torch.bfloat16)
    q3 = q.clone().view(1, 2, 64)
    want = reference(positions, q3, 64, cache, False)
    torch.ops.hk.rotary_embedding(positions.view(1, 1), q3, None, 64, cache, False)
    close(q3, want)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_rotary_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    run_case(True, torch.bfloat16, 128, 128, tokens=21)
    run_case(False, torch.float16, 64, 64, tokens=21)
    run_case(True, torch.bfloat16, 128, 64, tokens=21, cache_dtype=torch.float32)


def test_bad_arguments_are_launch_errors(interp):
    positions, _, q, k, cache = case(8, 2, 1, 64, 64, torch.bfloat16)
    with pytest.raises(LaunchError, match="rotary width of 48"):
        torch.ops.hk.rotary_embedding(positions, q, k, 64, cache[:, :48].contiguous(), True)
    with pytest.raises(LaunchError, match="interleaved form takes bf16 or fp16"):
        torch.ops.hk.rotary_embedding(positions, q, k, 64, cache.float(), False)
    with pytest.raises(LaunchError, match="not 8 tokens of heads of 64"):
        torch.ops.hk.rotary_embedding(positions, q[:, :96], None, 64, cache, True)
    with pytest.raises(LaunchError, match="cannot be rotated in place"):
        torch.ops.hk.rotary_embedding(positions, q.t().contiguous().t(), None, 64, cache, True)
    with pytest.raises(LaunchError, match="positions are torch.float32"):
        torch.ops.hk.rotary_embedding(positions.float(), q, k, 64, cache, True)


def test_opcheck(interp):
    for neox in (True, False):
        positions, _, q, k, cache = case(16, 2, 1, 64, 64, torch.bfloat16)
        torch.library.opcheck(torch.ops.hk.rotary_embedding.default,
                              (positions, q.clone(), k.clone(), 64, cache, neox))


def test_torch_compile_fullgraph_over_a_model_block(interp):
    # norm -> qkv linear -> rope -> attention -> output linear -> gated MLP, against eager.
    g = torch.Generator().manual_seed(5)
    tokens, heads, kv_heads, head = 24, 2, 1, 64
    w_qkv = (torch.randn((heads + 2 * kv_heads) * head, 128, generator=g) * 0.1).to(torch.bfloat16)
    w_o = (torch.randn(128, heads * head, generator=g) * 0.1).to(torch.bfloat16)
    w_up = (torch.randn(256, 128, generator=g) * 0.1).to(torch.bfloat16)
    cache = torch.randn(64, head, generator=g).to(torch.bfloat16)
    x = torch.randn(tokens, 128, generator=g).to(torch.bfloat16)
    positions = torch.arange(tokens)

    def block(x, positions):
        qkv = torch.ops.hk.linear(torch.ops.hk.rms_norm(x, None, 1e-6), w_qkv)
        q, k, v = qkv.split([heads * head, kv_heads * head, kv_heads * head], -1)
        q, k = q.clone(), k.clone()
        torch.ops.hk.rotary_embedding(positions, q, k, head, cache, True)
        def bhnd(t, n):
            return t.reshape(1, tokens, n, head).transpose(1, 2)
        o = torch.ops.hk.flash_attention(bhnd(q, heads), bhnd(k, kv_heads), bhnd(v.contiguous(), kv_heads),
                                         head ** -0.5, True)
        h = torch.ops.hk.linear(o.transpose(1, 2).reshape(tokens, heads * head), w_o)
        return torch.ops.hk.silu_and_mul(torch.ops.hk.linear(h, w_up))

    assert torch.equal(torch.compile(block, fullgraph=True, backend="aot_eager")(x, positions), block(x, positions))


# Each form and dtype once, each width once (the gates' cost is a compile each, on every target).
KERNELS = [(True, hk.bf16, hk.bf16, 64, 64), (True, hk.fp16, hk.fp16, 128, 128), (True, hk.bf16, hk.fp32, 128, 64),
           (False, hk.bf16, hk.bf16, 128, 128), (False, hk.fp16, hk.fp16, 64, 64)]


@pytest.mark.parametrize("arch", facts.archs())
def test_its_kernels_pass_the_gates(arch):
    for neox, dtype, cache, head, rot in KERNELS:
        built = rotary.rope_kernel(dtype, cache, head, rot, neox).build(arch, divisors=1)
        assert built.meta.spills == 0, built.report()
