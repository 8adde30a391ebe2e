"""hk.ops' mixture-of-experts ops: the align step against a plain loop over experts (the runs,
their pads, the blocks' experts, expert maps, ids of no expert), the grouped GEMM against one
product per routed row (top_k 1, 2 and 6, weights applied, blocks of another rank's experts,
ragged N and K, bf16 and fp16), the fused layer against torch token by token; on the interpreter
and the emulator (gfx1100, gfx950); opcheck, torch.compile, refusals, and the kernels through
the gates on every target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import moe
from hk.target import facts


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


def routed(tokens, experts, top_k, seed=0):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(tokens, experts, generator=gen)
    weights, ids = torch.topk(torch.softmax(logits, -1), top_k)
    return weights, ids


def looped_align(topk_ids, block, experts, expert_map=None):
    """What the align step returns, one expert at a time in plain Python."""
    flat = topk_ids.reshape(-1).tolist()
    numel = len(flat)
    total = numel + experts * (block - 1)
    ids, owners = [], []
    for e in range(experts):
        run = [i for i, x in enumerate(flat) if x == e]
        if not run:
            continue
        run += [numel] * (-len(run) % block)
        ids += run
        owners += [e if expert_map is None else int(expert_map[e])] * (len(run) // block)
    used = len(ids)
    blocks = -(-total // block)
    return (torch.tensor(ids + [numel] * (total - used), dtype=torch.int32),
            torch.tensor(owners + [-1] * (blocks - len(owners)), dtype=torch.int32),
            torch.tensor([used], dtype=torch.int32))


@pytest.mark.parametrize("tokens, experts, top_k, block, dtype", [
    (1, 8, 2, 16, torch.int32), (37, 8, 2, 16, torch.int64), (100, 64, 6, 64, torch.int32),
    (5, 128, 8, 32, torch.int64)])
def test_align_matches_a_loop_over_experts(tokens, experts, top_k, block, dtype):
    _, ids = routed(tokens, experts, top_k)
    got = torch.ops.hk.moe_align_block_size(ids.to(dtype), block, experts)
    for g, w in zip(got, looped_align(ids, block, experts)):
        assert torch.equal(g, w)


def test_align_maps_experts_and_skips_ids_of_none():
    ids = torch.tensor([[0, 3], [3, -1], [2, 9]])  # -1 and 9: no expert of 4
    expert_map = torch.tensor([-1, 0, 1, -1], dtype=torch.int32)  # this rank holds experts 1 and 2
    sorted_ids, expert_ids, padded = torch.ops.hk.moe_align_block_size(ids, 16, 4, expert_map)
    want = looped_align(torch.tensor([[0, 3], [3, 99], [2, 99]]), 16, 4, expert_map)
    assert torch.equal(sorted_ids, want[0]) and torch.equal(expert_ids, want[1]) and torch.equal(padded, want[2])
    assert expert_ids.tolist()[:3] == [-1, 1, -1]  # experts 0, 2, 3 -> -1, 1, -1


def case(tokens, k, n, experts, top_k, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(tokens, k, generator=gen).to(dtype)
    w = (torch.randn(experts, n, k, generator=gen) / k ** 0.5).to(dtype)
    weights, ids = routed(tokens, experts, top_k, seed)
    return a, w, weights, ids


def per_row(a, w, weights, ids, top_k, scaled, expert_map=None):
    flat, wts = ids.reshape(-1), weights.reshape(-1)
    rows = []
    for i in range(flat.numel()):
        e = int(flat[i]) if expert_map is None else int(expert_map[flat[i]])
        y = a[i // top_k].float() @ w[e].float().T if e >= 0 else torch.zeros(w.shape[1])
        rows.append(y * wts[i] if scaled else y)
    return torch.stack(rows).to(a.dtype)


def close(got, want):
    tol = 2e-2 if want.dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


@pytest.mark.parametrize("tokens, k, n, experts, top_k, block, scaled, dtype", [
    (5, 64, 64, 4, 2, 16, False, torch.bfloat16), (19, 96, 72, 8, 6, 32, True, torch.float16),
    (33, 40, 130, 3, 1, 16, True, torch.bfloat16)])
def test_grouped_gemm_on_the_interpreter(interp, tokens, k, n, experts, top_k, block, scaled, dtype):
    a, w, weights, ids = case(tokens, k, n, experts, top_k, dtype)
    sorted_ids, expert_ids, padded = torch.ops.hk.moe_align_block_size(ids, block, experts)
    out = torch.full((tokens, top_k, n), 7.0, dtype=dtype)  # vLLM's [tokens, top_k, N]
    torch.ops.hk.moe_gemm_out(out, a, w, weights, sorted_ids, expert_ids, padded, top_k, block, scaled)
    close(out.view(-1, n), per_row(a, w, weights, ids, top_k, scaled))


def test_blocks_of_another_ranks_experts_are_zeros(interp):
    a, w, weights, ids = case(9, 32, 64, 2, 2, torch.bfloat16)  # this rank's two experts
    expert_map = torch.tensor([1, -1, 0, -1], dtype=torch.int32)  # of four
    ids = torch.randint(0, 4, ids.shape, generator=torch.Generator().manual_seed(3))
    sorted_ids, expert_ids, padded = torch.ops.hk.moe_align_block_size(ids, 16, 4, expert_map)
    out = torch.full((9 * 2, 64), 7.0, dtype=torch.bfloat16)
    torch.ops.hk.moe_gemm_out(out, a, w, weights, sorted_ids, expert_ids, padded, 2, 16, False)
    want = per_row(a, w, weights, ids, 2, False, expert_map)
    close(out, want)
    assert (out[(expert_map[ids.reshape(-1)] < 0)] == 0).all()


def test_pads_and_blocks_past_the_runs_write_nothing(interp):
    a, w, weights, _ = case(3, 32, 64, 2, 1, torch.bfloat16)
    ids = torch.tensor([[1], [0], [1]])
    sorted_ids, expert_ids, padded = torch.ops.hk.moe_align_block_size(ids, 16, 2)
    # Past num_tokens_post_pad every slot names row 0 and expert 0, whose product is not row
    # 0's (expert 1's): computing any of it would overwrite row 0.
    tail = torch.arange(sorted_ids.numel()) >= int(padded)
    sorted_ids = torch.where(tail, 0, sorted_ids).to(torch.int32)
    expert_ids = torch.where(torch.arange(expert_ids.numel()) * 16 >= int(padded), 0, expert_ids).to(torch.int32)
    assert tail.any()
    out = torch.full((3, 64), 7.0, dtype=torch.bfloat16)
    torch.ops.hk.moe_gemm_out(out, a, w, weights, sorted_ids, expert_ids, padded, 1, 16, False)
    close(out, per_row(a, w, weights, ids, 1, False))


def test_fused_moe_on_the_interpreter(interp):
    for tokens, k, inter, experts, top_k, dtype in ((7, 64, 32, 4, 2, torch.bfloat16), (3, 48, 40, 8, 3, torch.float16)):
        x, w1, weights, ids = case(tokens, k, 2 * inter, experts, top_k, dtype)
        w2 = (torch.randn(experts, k, inter, generator=torch.Generator().manual_seed(1)) / inter ** 0.5).to(dtype)
        close(torch.ops.hk.fused_moe(x, w1, w2, weights, ids), moe.reference(x, w1, w2, weights, ids))


def test_row_strided_and_transposed_inputs(interp):
    x, w1, weights, ids = case(6, 64, 64, 4, 2, torch.float16)
    w2 = (torch.randn(4, 64, 32, generator=torch.Generator().manual_seed(1)) / 32 ** 0.5).to(torch.float16)
    want = moe.reference(x, w1, w2, weights, ids)
    wide = torch.zeros(6, 128, dtype=x.dtype)
    wide[:, 32:96] = x
    w2_t = w2.transpose(1, 2).contiguous().transpose(1, 2)  # the same values in another layout
    got = torch.ops.hk.fused_moe(wide[:, 32:96], w1, w2_t, weights.t().contiguous().t(), ids.int())
    close(got, want)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_fused_moe_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    # 21 tokens: blocks of 16; 70 tokens over 2 experts: blocks of 64 (a workgroup of 4 waves).
    for tokens, experts in ((21, 4), (70, 2)):
        x, w1, weights, ids = case(tokens, 64, 64, experts, 2, torch.bfloat16)
        w2 = (torch.randn(experts, 64, 32, generator=torch.Generator().manual_seed(1)) / 32 ** 0.5).to(torch.bfloat16)
        close(torch.ops.hk.fused_moe(x, w1, w2, weights, ids), moe.reference(x, w1, w2, weights, ids))


def test_fused_moe_takes_a_tuned_block_on_the_emulator(monkeypatch, tmp_path):
    import json

    from hk import tuned
    from hk.runtime import launch

    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    path = tmp_path / "gfx1100.json"
    # 21 tokens, top-2 over 4 experts: 10 rows per expert, blocks of 16 by today's rule.
    bucket = "bf16 E=4 top_k=2 K=64 I=32 rows/expert=4-15"
    path.write_text(json.dumps({"format": tuned.FORMAT, "hk_version": hk.__version__, "arch": "gfx1100",
                                "ops": {"fused_moe": {bucket: {"knobs": {"block": 64}}}}}))
    monkeypatch.setenv("HK_TUNED", str(path))
    tuned.forget()
    try:
        x, w1, weights, ids = case(21, 64, 64, 4, 2, torch.bfloat16)
        w2 = (torch.randn(4, 64, 32, generator=torch.Generator().manual_seed(1)) / 32 ** 0.5).to(torch.bfloat16)
        with launch.capture() as launches:
            moe.launch_fused(x, w1, w2, weights, ids, None, torch.empty_like(x))
        assert [k.warps for k, _, _, _ in launches if k.name.startswith("moe_gemm")] == [4, 4]
        close(torch.ops.hk.fused_moe(x, w1, w2, weights, ids), moe.reference(x, w1, w2, weights, ids))
    finally:
        tuned.forget()


def test_a_layers_bucket_is_its_rows_per_expert():
    assert moe.moe_bucket((4096, 64, 8, 2048, 1024)) == "bf16 E=64 top_k=8 K=2048 I=1024 rows/expert=512-1023"
    assert moe.moe_bucket((1, 64, 8, 2048, 1024, "fp16")) == "fp16 E=64 top_k=8 K=2048 I=1024 rows/expert=0-3"
    assert moe.moe_bucket((8192, 64, 8, 2048, 1024)).endswith("rows/expert=>=1024")
    # block_for's rule is one block per bucket: today's choice is one per bucket too.
    for low, high in zip(moe.PER_EXPERT, moe.PER_EXPERT[1:]):
        assert moe.block_for(low * 4, 4) == moe.block_for((high - 1) * 4, 4)
    assert moe.block_of({}, 8, 4) == moe.block_of({"block": 0}, 8, 4) == 16 and moe.block_of({"block": 48}, 8, 4) == 48


def test_grouped_gemm_on_the_emulator_with_another_ranks_experts(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    a, w, weights, ids = case(40, 96, 136, 2, 2, torch.float16)
    expert_map = torch.tensor([1, -1, 0], dtype=torch.int32)
    ids = torch.randint(0, 3, ids.shape, generator=torch.Generator().manual_seed(5))
    sorted_ids, expert_ids, padded = torch.ops.hk.moe_align_block_size(ids, 32, 3, expert_map)
    out = torch.full((80, 136), 7.0, dtype=torch.float16)
    torch.ops.hk.moe_gemm_out(out, a, w, weights, sorted_ids, expert_ids, padded, 2, 32, True)
    close(out, per_row(a, w, weights, ids, 2, True, expert_map))


def test_opcheck_and_compile(interp):
    x, w1, weights, ids = case(5, 32, 64, 4, 2, torch.bfloat16)
    w2 = (torch.randn(4, 32, 32) / 32 ** 0.5).to(torch.bfloat16)
    torch.library.opcheck(torch.ops.hk.moe_align_block_size.default, (ids, 16, 4))
    sorted_ids, expert_ids, padded = torch.ops.hk.moe_align_block_size(ids, 16, 4)
    out = torch.empty(10, 64, dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.hk.moe_gemm_out.default,
                          (out, x, w1, weights, sorted_ids, expert_ids, padded, 2, 16, True))
    torch.library.opcheck(torch.ops.hk.fused_moe.default, (x, w1, w2, weights, ids))

    def layer(x):
        return torch.ops.hk.fused_moe(x * 2, w1, w2, weights, ids) + 1

    close(torch.compile(layer, fullgraph=True)(x), layer(x))


def test_what_it_refuses(interp):
    x, w1, weights, ids = case(5, 32, 64, 4, 2, torch.bfloat16)
    w2 = torch.randn(4, 32, 32).to(torch.bfloat16)
    with pytest.raises(LaunchError, match="block size is a positive multiple of 16"):
        torch.ops.hk.moe_align_block_size(ids, 24, 4)
    with pytest.raises(LaunchError, match="block size a multiple of 16 up to 128"):
        big = torch.ops.hk.moe_align_block_size(ids, 256, 4)
        torch.ops.hk.moe_gemm_out(torch.empty(10, 64, dtype=x.dtype), x, w1, weights, *big, 2, 256, False)
    with pytest.raises(LaunchError, match="topk_ids are torch.float32"):
        torch.ops.hk.moe_align_block_size(ids.float(), 16, 4)
    with pytest.raises(LaunchError, match=r"w1 \[E, 2I, K\] and w2 \[E, K, I\]"):
        torch.ops.hk.fused_moe(x, w1, w2[:, :, :16], weights, ids)
    with pytest.raises(LaunchError, match="float32 are not supported"):
        torch.ops.hk.fused_moe(x.float(), w1, w2, weights, ids)
    sorted_ids, expert_ids, padded = torch.ops.hk.moe_align_block_size(ids, 16, 4)
    with pytest.raises(LaunchError, match="topk_weights is torch.bfloat16"):
        torch.ops.hk.moe_gemm_out(torch.empty(10, 64, dtype=x.dtype), x, w1, weights.bfloat16(), sorted_ids,
                                  expert_ids, padded, 2, 16, True)
    with pytest.raises(LaunchError, match="sorted_ids is torch.int64"):
        torch.ops.hk.moe_gemm_out(torch.empty(10, 64, dtype=x.dtype), x, w1, weights, sorted_ids.long(),
                                  expert_ids, padded, 2, 16, True)
    with pytest.raises(LaunchError, match=r"out has shape \(9, 64\)"):
        torch.ops.hk.moe_gemm_out(torch.empty(9, 64, dtype=x.dtype), x, w1, weights, sorted_ids, expert_ids,
                                  padded, 2, 16, True)


@pytest.mark.parametrize("arch", facts.archs())
def test_its_kernels_pass_the_gates(arch):
    # Every block size's workgroup and both epilogues in bf16; fp16's kernels differ in the
    # matrix instruction only.
    forms = [(hk.bf16, 8, False, 16), (hk.bf16, 1, True, 64), (hk.bf16, 6, True, 32),
             (hk.bf16, 2, False, moe.MAX_BLOCK), (hk.fp16, 1, True, 16)]
    for dtype, top_k, weighted, block in forms:
        built = moe.moe_gemm_kernel(dtype, top_k, weighted, block).build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()
    assert moe.moe_sum_kernel(hk.bf16).build(arch, divisors=64).meta.spills == 0
