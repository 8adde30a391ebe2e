"""The engines' Triton kernels that need gfx12's scalar float compares, gfx950's f8f6f4 MFMAs, or
LDS stores left outstanding at a barrier (gfx1100), run in the emulator on those targets:
vLLM's block-scaled fp8 GEMM (_w8a8_triton_block_scaled_mm) and SGLang's (_w8a8_block_fp8_matmul)
on gfx950 and gfx1100, and vLLM's split-K decode attention (kernel_unified_attention, then
reduce_segments) on gfx1201. Each is predicted as hk-routes predicts it (a positive time, no
error); the GEMMs and reduce_segments also run on data, checked against float64 references."""

import numpy as np
import pytest

from hk import emu
from hk_engine import engine_kernels as ek
from hk_engine import routes_from_model as rfm


@pytest.fixture(scope="module")
def roots():
    return {"vllm": ek.package_root(rfm._runfile("vllm_env/python")),
            "sglang": ek.package_root(rfm._runfile("sglang_env/python"))}


@pytest.fixture
def kernels(roots, tmp_path):
    ek.triton_cache(str(tmp_path))
    return lambda op: rfm.load_kernels([op], roots, str(tmp_path))[op.key]


@pytest.mark.parametrize("key, arch, count", [
    ("fp8_block_scaled_mm", "gfx950", 33),
    ("fp8_block_scaled_mm", "gfx1100", 33),
    ("sglang.fp8_block_scaled_mm", "gfx950", 33),
    ("sglang.fp8_block_scaled_mm", "gfx1100", 33),
    ("vllm.attention_decode", "gfx1201", 4),
])
def test_the_engines_kernel_is_predicted(kernels, key, arch, count):
    op = rfm.PREDICTED[key]
    mine, theirs = op.predict(kernels(op), arch, count, op.shapes(1)[0])
    assert mine > 0 and theirs > 0


def _launch(co, name, grid, block, values, lds):
    """hk.emu.launch of a compiled kernel, with None for the scratch pointers Triton appends."""
    from hk.emu import runner

    explicit = len(runner.load(co)[0].kernel(name).explicit_args)
    emu.launch(co, name, grid, block, values + [None] * (explicit - len(values)), shared_mem=lds)


def _block_scaled_reference(a, b, scale_a, scale_b, group=128):
    """out[i, j] = sum over K blocks of scale_a[i, kb] scale_b[j / 128, kb] (A B^T over the block)."""
    m, k = a.shape
    out = np.zeros((m, b.shape[0]))
    for kb in range(k // group):
        part = a[:, kb * group:(kb + 1) * group] @ b[:, kb * group:(kb + 1) * group].T
        out += part * scale_a[:, kb:kb + 1] * np.repeat(scale_b[:, kb], group)[None, :]
    return out


@pytest.mark.parametrize("key", ["fp8_block_scaled_mm", "sglang.fp8_block_scaled_mm"])
@pytest.mark.parametrize("arch", ["gfx950", "gfx1100"])
def test_the_block_scaled_fp8_gemm_computes_its_product(kernels, key, arch):
    # Three K blocks, so the loop body runs: on gfx1100 each wave stores its part of the
    # converted tiles and meets the others at a barrier with no wait on lgkmcnt before it.
    import torch

    op = rfm.PREDICTED[key]
    m, n, k, g = 40, 256, 384, op.GROUP
    gen = torch.Generator().manual_seed(7)
    fp8 = op.fp8_dtype(arch)
    a = (torch.randn(m, k, generator=gen) * 2).to(fp8)
    b = (torch.randn(n, k, generator=gen) * 2).to(fp8)
    scale_a = torch.rand(m, k // g, generator=gen) + 0.5
    scale_b = torch.rand(n // g, k // g, generator=gen) + 0.5
    out = np.zeros(m * n, np.uint16)
    name = str(fp8).replace("torch.", "")
    P = ek.Ptr
    args = dict(A=P(name, array=a.view(torch.uint8).numpy()), B=P(name, array=b.view(torch.uint8).numpy()),
                C=P("bfloat16", array=out), As=P("float32", array=scale_a.numpy()),
                Bs=P("float32", array=scale_b.numpy()), M=m, N=n, K=k, group_n=g, group_k=g, stride_am=k,
                stride_ak=1, stride_bk=1, stride_bn=k, stride_cm=n, stride_cn=1, stride_As_m=k // g,
                stride_As_k=1, stride_Bs_k=1, stride_Bs_n=k // g)
    co, kname, lds, values = ek.compile_kernel(kernels(op)[op.kernel], arch, args,
                                               dict(op.CONFIG, **op.constexprs(k)), op.WARPS, op.STAGES)
    grid = (-(-m // op.CONFIG["BLOCK_SIZE_M"]) * -(-n // op.CONFIG["BLOCK_SIZE_N"]),)
    _launch(co, kname, grid, (op.WARPS * ek.WAVE[arch],), values, lds)
    got = torch.from_numpy(out.view(np.int16)).view(torch.bfloat16).double().numpy().reshape(m, n)
    want = _block_scaled_reference(a.double().numpy(), b.double().numpy(), scale_a.double().numpy(),
                                   scale_b.double().numpy())
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * np.abs(want).max())


def test_reduce_segments_merges_split_softmax_partials(kernels):
    # Per-segment partials of attention over random scores (each segment's max, its sum of
    # exponentials, its unnormalised output), as kernel_unified_attention leaves them; the merge
    # must be softmax(scores) @ V over all keys. One segment within a sequence is empty (max
    # -inf, sum 0: the compare gfx1201 does with s_cmp_neq_f32); segments past a sequence's last
    # hold NaN, which the kernel must not read.
    op = rfm.PREDICTED["vllm.attention_decode"]
    heads, kvh, d = op.shapes(1)[0]
    segm, tile = op.SEGMENTS, 16
    lens = [1024, 300, 17, 1]
    seqs = len(lens)
    rng = np.random.default_rng(3)
    seg_o = np.full((seqs, heads, segm, d), np.nan, np.float32)
    seg_max = np.full((seqs, heads, segm), np.nan, np.float32)
    seg_sum = np.full((seqs, heads, segm), np.nan, np.float32)
    want = np.zeros((seqs, heads, d))
    for t, length in enumerate(lens):
        scores = rng.normal(0, 2, (heads, length))
        values = rng.normal(0, 1, (heads, length, d))
        per = -(-length // (segm * tile)) * tile                 # keys per segment
        keep = np.ones(length, bool)
        empty = 1 if length > per else None                      # no keys land in segment 1
        if empty is not None:
            keep[per:2 * per] = False
        for s in range(-(-length // per)):
            lo, hi = s * per, min((s + 1) * per, length)
            if s == empty:
                seg_max[t, :, s], seg_sum[t, :, s], seg_o[t, :, s] = -np.inf, 0, 0
                continue
            mx = scores[:, lo:hi].max(axis=1)
            w = np.exp(scores[:, lo:hi] - mx[:, None])
            seg_max[t, :, s], seg_sum[t, :, s] = mx, w.sum(axis=1)
            seg_o[t, :, s] = np.einsum("hk,hkd->hd", w, values[:, lo:hi])
        p = np.exp(scores[:, keep] - scores[:, keep].max(axis=1, keepdims=True))
        want[t] = np.einsum("hk,hkd->hd", p / p.sum(axis=1, keepdims=True), values[:, keep])
    out = np.zeros(seqs * heads * d, np.uint16)
    P = ek.Ptr
    group = heads // kvh
    block_m = 16 if group <= 16 else 1 << (group - 1).bit_length()
    args = dict(output_ptr=P("bfloat16", array=out), segm_output_ptr=P("float32", array=seg_o),
                segm_max_ptr=P("float32", array=seg_max), segm_expsum_ptr=P("float32", array=seg_sum),
                seq_lens_ptr=P("int32", array=np.array(lens, np.int32)), num_seqs=seqs, out_scale_inv=1.0,
                output_stride_0=heads * d, output_stride_1=d, block_table_stride=64 + op.SPARE_BLOCKS,
                query_start_len_ptr=P("int32", array=np.arange(seqs + 1, dtype=np.int32)))
    consts = dict(num_query_heads=heads, TILE_SIZE=tile, HEAD_SIZE=d, HEAD_SIZE_PADDED=d,
                  BLOCK_Q=block_m // group, NUM_SEGMENTS_PER_SEQ=segm, USE_FP8=False)
    co, name, lds, values = ek.compile_kernel(kernels(op)["reduce_segments"], "gfx1201", args, consts, 4)
    _launch(co, name, (seqs, heads), (4 * ek.WAVE["gfx1201"],), values, lds)
    import torch

    got = torch.from_numpy(out.view(np.int16)).view(torch.bfloat16).double().numpy().reshape(seqs, heads, d)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
