"""hk.ops.embedding and hk.ops.reshape_and_cache_flash against torch: int32 and int64 indices
(no copy) of any shape, padding and out-of-range indices (int64 ones past int32's range too),
ragged token counts, bf16, fp16 and fp32, row-padded tables and keys sliced out of one qkv
tensor, vLLM's flash cache layout with the slots nobody writes left as they are; on the
interpreter and the emulator (gfx1100, gfx950); opcheck, what they refuse, and the kernels
through the gates on every target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import indexed
from hk.target import facts

DTYPES = [torch.bfloat16, torch.float16, torch.float32]


def expected_embedding(weight, ids):
    inside = (ids >= 0) & (ids < weight.shape[0])
    out = weight[ids.clamp(0, weight.shape[0] - 1).long()]
    out[~inside] = 0
    return out


def ids_for(shape, vocab, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, shape, generator=g).to(dtype)
    flat = ids.view(-1)
    flat[3::7] = -1          # padding
    flat[5::11] = vocab + 3  # another shard's token
    if dtype == torch.int64:  # outside int32, with a low word inside the vocabulary
        flat[2::13] = 2 ** 32 + 7
        flat[4::17] = -2 ** 32 + 1
        flat[6::19] = 2 ** 31 + 2
    return ids


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("id_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("shape", [(37,), (3, 5), (16,)])
def test_embedding_on_the_interpreter(interp, dtype, id_dtype, shape):
    weight = torch.randn(100, 72).to(dtype)
    ids = ids_for(shape, 100, id_dtype)
    assert torch.equal(torch.ops.hk.embedding(weight, ids), expected_embedding(weight, ids))
    out = torch.full(shape + (72,), 5.0, dtype=dtype)
    torch.ops.hk.embedding_out(out, weight, ids)
    assert torch.equal(out, expected_embedding(weight, ids))


def test_embedding_of_a_row_padded_table(interp):
    weight = torch.randn(50, 128 + 64).to(torch.bfloat16)[:, :128]
    ids = ids_for((21,), 50, torch.int64)
    assert torch.equal(torch.ops.hk.embedding(weight, ids), expected_embedding(weight, ids))


def cache_case(tokens, kv_heads, head, blocks, block_size, dtype, slot_dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    qkv = torch.randn(tokens, (2 + 2 * kv_heads) * head, generator=g).to(dtype)
    key = qkv[:, 2 * head:(2 + kv_heads) * head].view(tokens, kv_heads, head)
    value = qkv[:, (2 + kv_heads) * head:].view(tokens, kv_heads, head)
    # Never slot 0: the slots read past the end of the mapping must not write there either.
    slots = (torch.randperm(blocks * block_size - 1, generator=g)[:tokens] + 1).to(slot_dtype)
    slots[1::4] = -1
    if slot_dtype == torch.int64:  # outside int32, with a low word inside the cache: dropped
        slots[2::5] = 2 ** 32 + 5
        slots[3::7] = -2 ** 32 + 3
    key_cache = torch.randn(blocks, block_size, kv_heads, head, generator=g).to(dtype)
    value_cache = torch.randn(blocks, block_size, kv_heads, head, generator=g).to(dtype)
    return key, value, key_cache, value_cache, slots


def expected_caches(key, value, key_cache, value_cache, slots):
    kc, vc = key_cache.clone(), value_cache.clone()
    for i, s in enumerate(slots.tolist()):
        if 0 <= s < kc.shape[0] * kc.shape[1]:
            kc.view(-1, *kc.shape[2:])[s] = key[i]
            vc.view(-1, *vc.shape[2:])[s] = value[i]
    return kc, vc


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("slot_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("tokens", [21, 64, 1])
def test_kv_cache_write_on_the_interpreter(interp, dtype, slot_dtype, tokens):
    key, value, key_cache, value_cache, slots = cache_case(tokens, 2, 64, 8, 16, dtype, slot_dtype)
    want_k, want_v = expected_caches(key, value, key_cache, value_cache, slots)
    torch.ops.hk.reshape_and_cache_flash(key, value, key_cache, value_cache, slots)
    assert torch.equal(key_cache, want_k) and torch.equal(value_cache, want_v)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_both_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    for dtype in (torch.bfloat16, torch.float32):  # the ids read for 16- and 32-bit rows
        weight = torch.randn(100, 200).to(dtype)
        ids = ids_for((37,), 100, torch.int64)
        assert torch.equal(torch.ops.hk.embedding(weight, ids), expected_embedding(weight, ids))
    key, value, key_cache, value_cache, slots = cache_case(21, 2, 128, 4, 16, torch.bfloat16)
    want_k, want_v = expected_caches(key, value, key_cache, value_cache, slots)
    torch.ops.hk.reshape_and_cache_flash(key, value, key_cache, value_cache, slots)
    assert torch.equal(key_cache, want_k) and torch.equal(value_cache, want_v)


def halves(key_cache, value_cache):
    """The two caches as the halves of one (vLLM 0.33's layout: each head's K, then its V)."""
    d = key_cache.shape[-1]
    return torch.cat([key_cache, value_cache], -1).split(d, dim=-1)


@pytest.mark.parametrize("device", ["interp", "emu"])
def test_kv_cache_write_into_the_halves_of_one_cache(monkeypatch, device):
    monkeypatch.setenv("HK_DEVICE", device)
    key, value, key_cache, value_cache, slots = cache_case(21, 2, 64, 4, 16, torch.bfloat16)
    want_k, want_v = expected_caches(key, value, key_cache, value_cache, slots)
    kc, vc = halves(key_cache, value_cache)
    torch.ops.hk.reshape_and_cache_flash(key, value, kc, vc, slots)
    assert torch.equal(kc, want_k) and torch.equal(vc, want_v)
    # Blocks that are not one run of rows (every other block of a larger cache) are refused.
    kc, vc = halves(torch.cat([key_cache, key_cache]), torch.cat([value_cache, value_cache]))
    with pytest.raises(LaunchError, match="blocks of the KV cache .* are not one run of rows"):
        torch.ops.hk.reshape_and_cache_flash(key, value, kc[::2], vc[::2], slots)


def test_bad_arguments_are_launch_errors(interp):
    weight = torch.randn(10, 64).to(torch.bfloat16)
    with pytest.raises(LaunchError, match="indices are torch.float32"):
        torch.ops.hk.embedding(weight, torch.zeros(4))
    with pytest.raises(LaunchError, match="must be \\[vocab, dim\\]"):
        torch.ops.hk.embedding(weight.view(-1), torch.zeros(4, dtype=torch.int32))
    with pytest.raises(LaunchError, match="out has shape"):
        torch.ops.hk.embedding_out(torch.empty(3, 64, dtype=torch.bfloat16), weight, torch.zeros(4, dtype=torch.int32))
    key, value, key_cache, value_cache, slots = cache_case(8, 2, 64, 2, 16, torch.bfloat16)
    with pytest.raises(LaunchError, match="has 8 tokens, slot_mapping 7"):
        torch.ops.hk.reshape_and_cache_flash(key, value, key_cache, value_cache, slots[:7])
    with pytest.raises(LaunchError, match="heads \\* head_size = 128"):
        torch.ops.hk.reshape_and_cache_flash(key, value, key_cache[..., :32], value_cache, slots)
    with pytest.raises(LaunchError, match="cannot be written in place"):
        torch.ops.hk.reshape_and_cache_flash(key, value, key_cache.transpose(0, 1), value_cache, slots)
    with pytest.raises(LaunchError, match="value_cache is torch.float16"):
        torch.ops.hk.reshape_and_cache_flash(key, value, key_cache, value_cache.half(), slots)


def test_opcheck(interp):
    weight = torch.randn(30, 64).to(torch.bfloat16)
    ids = ids_for((20,), 30, torch.int64)
    torch.library.opcheck(torch.ops.hk.embedding.default, (weight, ids))
    torch.library.opcheck(torch.ops.hk.embedding_out.default, (torch.empty(20, 64, dtype=torch.bfloat16), weight, ids))
    key, value, key_cache, value_cache, slots = cache_case(20, 1, 64, 2, 16, torch.bfloat16)
    torch.library.opcheck(torch.ops.hk.reshape_and_cache_flash.default, (key, value, key_cache, value_cache, slots))


@pytest.mark.parametrize("arch", facts.archs())
def test_the_kernels_pass_the_gates(arch):
    for dtype in (hk.bf16, hk.fp16, hk.fp32):
        for kernel in (indexed.embedding_kernel(dtype), indexed.kv_write_kernel(dtype)):
            built = kernel.build(arch, divisors=1)
            assert built.meta.spills == 0, built.report()
