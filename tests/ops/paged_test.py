"""hk.ops.paged_attention_decode and _prefill against attention computed in torch on each
sequence's keys and values gathered from vLLM's paged cache by its block table: grouped-query
heads (1 to 32 query heads per K/V head), head sizes 64 and 128, block sizes 16 and 32, ragged
sequence lengths (one token, a partial last block, a sequence of none), blocks in any order;
prefill with cached context before the new tokens or none, and sequences of no new tokens; on
the interpreter and the emulator (gfx1100, gfx950); opcheck, what they refuse, and their kernels
through the gates on every target; and K and V as the halves of one cache (vLLM 0.33's layout),
read with no copy."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import paged
from hk.target import facts
from tests.ops.paged_cases import prefill_case, prefill_reference, vllm_halves


reference = paged.decode_reference


def case(seqs, heads, kv_heads, d, bs, lens, blocks=24, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(seqs, heads, d, generator=g).to(torch.bfloat16)
    kc = torch.randn(blocks, bs, kv_heads, d, generator=g).to(torch.bfloat16)
    vc = torch.randn(blocks, bs, kv_heads, d, generator=g).to(torch.bfloat16)
    most = max(-(-n // bs) for n in lens) if lens else 1
    tables = torch.stack([torch.randperm(blocks, generator=g)[:most] for _ in range(seqs)]).to(torch.int32)
    return q, kc, vc, tables, torch.tensor(lens, dtype=torch.int32)


def close(got, want):
    torch.testing.assert_close(got.float(), want.float(), rtol=1.6e-2, atol=1e-2)


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("heads, kv_heads, d, bs", [(8, 2, 64, 16), (4, 4, 128, 32), (32, 1, 64, 16), (6, 2, 128, 16)])
def test_decode_on_the_interpreter(interp, heads, kv_heads, d, bs):
    q, kc, vc, tables, lens = case(4, heads, kv_heads, d, bs, [37, 1, 0, 3 * bs])
    scale = d ** -0.5
    close(torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, scale), reference(q, kc, vc, tables, lens, scale))
    out = torch.full_like(q, 9.0)
    torch.ops.hk.paged_attention_decode_out(out, q, kc, vc, tables, lens, scale)
    close(out, reference(q, kc, vc, tables, lens, scale))
    assert torch.equal(out[2], torch.zeros_like(out[2]))  # no tokens: zeros


def test_caches_that_are_views_with_strided_blocks(interp):
    # One K/V head of two (the slots of a block strided), and K and V as halves of one tensor.
    q, kc, vc, tables, lens = case(3, 4, 2, 64, 16, [20, 33, 7])
    close(torch.ops.hk.paged_attention_decode(q, kc[:, :, :1], vc[:, :, :1], tables, lens, 0.1),
          reference(q, kc[:, :, :1], vc[:, :, :1], tables, lens, 0.1))
    kv = torch.stack([kc, vc], 1)  # [blocks, 2, block_size, kv_heads, head_size]
    close(torch.ops.hk.paged_attention_decode(q, kv[:, 0], kv[:, 1], tables, lens, 0.1),
          reference(q, kc, vc, tables, lens, 0.1))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_decode_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    for heads, kv_heads, d, bs in ((8, 2, 64, 16), (4, 1, 128, 32)):
        q, kc, vc, tables, lens = case(3, heads, kv_heads, d, bs, [37, 1, 2 * bs + 5])
        close(torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.1), reference(q, kc, vc, tables, lens, 0.1))


def test_bad_arguments_are_launch_errors(interp):
    q, kc, vc, tables, lens = case(2, 4, 2, 64, 16, [5, 9])
    with pytest.raises(LaunchError, match="query is torch.float16"):
        torch.ops.hk.paged_attention_decode(q.half(), kc, vc, tables, lens, 0.1)
    with pytest.raises(LaunchError, match="block size 8"):
        torch.ops.hk.paged_attention_decode(q, kc[:, :8].contiguous(), vc[:, :8].contiguous(), tables, lens, 0.1)
    with pytest.raises(LaunchError, match="3 heads on 2 K/V heads"):
        torch.ops.hk.paged_attention_decode(q[:, :3].contiguous(), kc, vc, tables, lens, 0.1)
    with pytest.raises(LaunchError, match="seq_lens is torch.int64"):
        torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens.long(), 0.1)
    with pytest.raises(LaunchError, match="no \\[blocks, block_size, kv_heads \\* head_size\\] view"):
        columns = kc.transpose(2, 3).contiguous().transpose(2, 3)  # head_size not contiguous
        torch.ops.hk.paged_attention_decode(q, columns, columns, tables, lens, 0.1)


def test_opcheck(interp):
    q, kc, vc, tables, lens = case(2, 4, 2, 64, 16, [5, 20])
    torch.library.opcheck(torch.ops.hk.paged_attention_decode.default, (q, kc, vc, tables, lens, 0.125))
    torch.library.opcheck(torch.ops.hk.paged_attention_decode_out.default,
                          (torch.empty_like(q), q, kc, vc, tables, lens, 0.125))


@pytest.mark.parametrize("arch", facts.archs())
def test_its_kernels_pass_the_gates(arch):
    for d, group, bs in ((64, 4, 16), (128, 8, 16), (128, 1, 32)):
        built = paged.decode_kernel(d, group, bs).build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()


@pytest.mark.parametrize("heads, kv_heads, d, bs", [(4, 2, 64, 16), (2, 2, 128, 32), (8, 1, 64, 16)])
def test_prefill_on_the_interpreter(interp, heads, kv_heads, d, bs):
    # A prompt of no cached tokens, one after cached context (not block aligned), one token after
    # many, a sequence of no new tokens, and more than 16 queries.
    args = prefill_case([20, 7, 1, 0, 35], [0, 45, 60, 10, 3], heads, kv_heads, d, bs)
    scale = d ** -0.5
    want = prefill_reference(*args[:6], scale)
    close(torch.ops.hk.paged_attention_prefill(*args, scale), want)
    out = torch.full_like(args[0], 9.0)
    torch.ops.hk.paged_attention_prefill_out(out, *args, scale)
    close(out, want)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_prefill_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    for heads, kv_heads, d, bs in ((4, 2, 64, 16), (2, 1, 128, 32)):
        args = prefill_case([18, 5, 0], [0, 40, 9], heads, kv_heads, d, bs)
        close(torch.ops.hk.paged_attention_prefill(*args, 0.1), prefill_reference(*args[:6], 0.1))


def test_prefill_opcheck_and_refusals(interp):
    args = prefill_case([5, 9], [3, 0], 4, 2, 64, 16)
    torch.library.opcheck(torch.ops.hk.paged_attention_prefill.default, (*args, 0.125))
    torch.library.opcheck(torch.ops.hk.paged_attention_prefill_out.default, (torch.empty_like(args[0]), *args, 0.125))
    q, kc, vc, tables, lens, starts, most = args
    with pytest.raises(LaunchError, match="query_start_loc is torch.int32 \\(2,\\).*3 rows"):
        torch.ops.hk.paged_attention_prefill(q, kc, vc, tables, lens, starts[:2], most, 0.1)
    with pytest.raises(LaunchError, match="max_query_len is -1"):
        torch.ops.hk.paged_attention_prefill(q, kc, vc, tables, lens, starts, -1, 0.1)
    with pytest.raises(LaunchError, match="query and out are \\[tokens, heads, head_size\\]"):
        torch.ops.hk.paged_attention_prefill(q[0], kc, vc, tables, lens, starts, most, 0.1)


@pytest.mark.parametrize("arch", facts.archs())
def test_the_prefill_kernels_pass_the_gates(arch):
    for d, group, bs in ((64, 4, 16), (128, 1, 32)):
        built = paged.prefill_kernel(d, group, bs).build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()


def test_halves_of_one_cache_are_read_in_place(interp):
    q, kc, vc, tables, lens = case(3, 8, 2, 64, 16, [37, 1, 48])
    key_cache, value_cache = vllm_halves(kc, vc)
    assert not key_cache.is_contiguous()
    k2, v2, kv = paged.caches("test", key_cache, value_cache)
    assert kv == 2 and k2 is v2 and k2.data_ptr() == key_cache.data_ptr()  # no copy
    assert paged.interleaved(kc, vc) is None and paged.interleaved(key_cache, key_cache) is None
    close(torch.ops.hk.paged_attention_decode(q, key_cache, value_cache, tables, lens, 0.1),
          reference(q, kc, vc, tables, lens, 0.1))
    args = prefill_case([20, 7, 0], [0, 45, 10], 4, 2, 128, 32)
    q, kc, vc, tables, lens, starts, most = args
    key_cache, value_cache = vllm_halves(kc, vc)
    close(torch.ops.hk.paged_attention_prefill(q, key_cache, value_cache, tables, lens, starts, most, 0.1),
          prefill_reference(*args[:6], 0.1))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_halves_of_one_cache_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    q, kc, vc, tables, lens = case(2, 8, 2, 64, 16, [37, 16])
    close(torch.ops.hk.paged_attention_decode(q, *vllm_halves(kc, vc), tables, lens, 0.1),
          reference(q, kc, vc, tables, lens, 0.1))
    args = prefill_case([18, 5], [0, 40], 4, 2, 64, 16)
    q, kc, vc, tables, lens, starts, most = args
    close(torch.ops.hk.paged_attention_prefill(q, *vllm_halves(kc, vc), tables, lens, starts, most, 0.1),
          prefill_reference(*args[:6], 0.1))


@pytest.mark.parametrize("arch", facts.archs())
def test_the_one_cache_kernels_pass_the_gates(arch):
    for d, group, bs in ((64, 4, 16), (128, 8, 16)):
        for kernel in (paged.decode_kernel(d, group, bs, 2), paged.prefill_kernel(d, group, bs, 2)):
            built = kernel.build(arch, divisors=64)
            assert built.meta.spills == 0, built.report()
