"""hk-routes: the engines' routing tables (hk_engine/tables/<arch>.json) from hk.perf's
predictions of hk's kernel and of the engine's own Triton kernel for the same call.

    bazel run //integration/engine:hk-routes -- --out=$PWD/integration/engine/hk_engine/tables

For each target and each op whose engine kernel is Triton (vLLM 0.33's AWQ GEMM, W8A8 int8
GEMM, fused MoE GEMMs and unified paged attention, read from the pinned engine environment and compiled ahead of time for the target), at a
set of token buckets over a model's shapes (hk/autotune/models.json), both launches are
predicted and the op's rule for the bucket routes to hk when the engine's predicted time is at
least (1 + margin) times hk's, the margin being the model's stated error for the target by
default: a route the model cannot vouch for stays on the engine, the default a table falls back
to anyway. Each such rule records the ratio (engine / hk) and both times. A bucket's rule
covers the token counts above the previous bucket up to its own.

Ops with no code object the model can read (the engine calls hipBLASLt or its C++ kernels: the
plain linear, RMSNorm, rotary, SiLU-and-mul, the KV cache write, the AWQ path above 255 tokens,
the W8A8 fp8 GEMM) get rules whose "basis" says so, hk only where a published measurement
supports it.

Exit codes: 0 tables written, 1 a prediction failed for some op (its rule says why), 2 a wrong
command.
"""

import dataclasses
import datetime
import json
import os
import sys

from absl import app, flags

from hk_engine import engine_kernels as ek
from hk_engine import routing

FLAGS = flags.FLAGS
ARCHS = ["gfx1100", "gfx1201", "gfx942", "gfx950"]
HALF = ["bfloat16", "float16"]
FLOATS = HALF + ["float32"]


def define_flags():
    flags.DEFINE_list("archs", ARCHS, "the targets whose tables to write")
    flags.DEFINE_list("ops", None, "the predicted ops to predict again (default: all of PREDICTED); the shipped "
                      "tables' rules of the others stay")
    flags.DEFINE_list("tokens", None, "token buckets for every predicted op (default: each op's own)")
    flags.DEFINE_integer("shapes", None, "predict only the first N shapes of each op's model (a quick run)",
                         lower_bound=1)
    flags.DEFINE_string("out", None, "the directory to write <arch>.json into")
    flags.DEFINE_string("vllm_python", None, "vLLM's environment's interpreter (default: @vllm_env's)")
    flags.DEFINE_string("vllm_root", None, "or the site-packages holding vllm (instead of --vllm_python)")
    flags.DEFINE_string("margin", "stated", "route to hk when the engine is predicted this much slower "
                        "(0.1: 10%); \"stated\": the model's stated error for the target")
    flags.DEFINE_integer("jobs", 1, "worker processes for the predictions", lower_bound=1)


# The models the buckets take their shapes from (hk/autotune/models.json).
def _models():
    from hk.autotune import cli

    return cli.models()


def linear_shapes(model):
    from hk.autotune import cli

    return cli.linear_shapes(_models()[model])


# ---------------------------------------------------------------------------------------------
# The predicted ops: each an engine Triton kernel, the model whose shapes it is predicted at,
# its buckets and the two predictions at one bucket.

@dataclasses.dataclass
class Op:
    name: str
    engine: str           # "vllm"
    module: str           # the engine module holding the kernel
    kernel: str
    model: str            # the models.json model whose shapes are predicted
    tokens: tuple         # default buckets
    dtypes: tuple         # the dtypes the rules name (the dtype predicted first)
    upper: int = None     # the engine's Triton path ends here (above: another rule)
    given: dict = dataclasses.field(default_factory=dict)
    fact: str = "m"       # the fact the buckets are of
    kernels: tuple = ()   # more kernels of the module the launch runs

    def shapes(self, limit=None):
        raise NotImplementedError

    def predict(self, kernels, arch, tokens, shape):
        """(hk's seconds, the engine's seconds) at one shape and token count."""
        raise NotImplementedError


class AwqGemm(Op):
    """vLLM's Triton AWQ GEMM (awq_gemm_triton, which its ops.awq_gemm calls on ROCm below 256
    tokens: 32x32x32 blocks, split-K 8, 4 warps) against hk.ops.awq_gemm, fp16, group 128, on
    Qwen3-8B's linear layers. The engine's split-K partial sums are added by a torch reduction
    afterwards, not counted (it favours the engine)."""

    GROUP = 128
    SPLIT_K = 8
    BLOCK = 32

    def shapes(self, limit=None):
        return linear_shapes(self.model)[:limit]

    def predict(self, kernels, arch, m, shape):
        import torch

        from hk import perf
        from hk.ops import awq

        n, k = shape
        g = self.GROUP
        meta = dict(device="meta")
        x = torch.empty(m, k, dtype=torch.float16, **meta)
        qweight = torch.empty(k, n // 8, dtype=torch.int32, **meta)
        scales = torch.empty(k // g, n, dtype=torch.float16, **meta)
        qzeros = torch.empty(k // g, n // 8, dtype=torch.int32, **meta)
        out = torch.empty(m, n, dtype=torch.float16, **meta)
        # The launch itself (the torch op on meta tensors is its shape function: it launches nothing).
        mine = sum(p.seconds for p in perf.predict_call(awq.launch_awq, x, qweight, scales, qzeros, out, arch=arch))
        P = ek.Ptr
        args = dict(a_ptr=P("float16", m * k * 2), b_ptr=P("int32", k * n // 2),
                    c_ptr=P("float16", self.SPLIT_K * m * n * 2), zeros_ptr=P("int32", k // g * n // 2),
                    scales_ptr=P("float16", k // g * n * 2), M=m, N=n, K=k, group_size=g)
        b = self.BLOCK
        consts = dict(BLOCK_SIZE_M=b, BLOCK_SIZE_N=b, BLOCK_SIZE_K=b, SPLIT_K=self.SPLIT_K)
        grid = (-(-m // b) * -(-n // b), self.SPLIT_K)
        return mine, _engine_seconds(kernels[self.kernel], arch, args, consts, grid, 4)


class Int8ScaledMM(Op):
    """vLLM's Triton W8A8 int8 GEMM (scaled_mm_kernel, which TritonInt8ScaledMMLinearKernel
    launches on ROCm without AITER) at the tile triton_scaled_mm's heuristic picks, 4 warps,
    against hk.ops.int8_scaled_mm: activations int8 per token, weights int8 per channel stored
    K x N column-major (vLLM's layout for both), out in the activations' 16-bit type, on
    Qwen3-8B's linear layers. The activations' quantization (a kernel before either GEMM) is
    not counted."""

    def shapes(self, limit=None):
        return linear_shapes(self.model)[:limit]

    @staticmethod
    def vllm_tile(m, n):
        """(BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K) triton_scaled_mm's heuristic picks."""
        rows = max(32, 1 << max(m - 1, 0).bit_length())
        if rows <= 32:
            return (64, 64, 256) if n < 8192 else (64, 128, 256)
        return (64, 64, 256) if rows <= 64 else (64, 128, 128) if rows <= 128 else (128, 128, 128)

    def predict(self, kernels, arch, m, shape):
        import torch
        import triton.language as tl

        from hk import perf
        from hk.ops import mm8

        n, k = shape
        meta = dict(device="meta")
        a = torch.empty(m, k, dtype=torch.int8, **meta)
        b = torch.empty(n, k, dtype=torch.int8, **meta).t()  # K x N, column-major
        scale_a = torch.empty(m, 1, dtype=torch.float32, **meta)
        scale_b = torch.empty(1, n, dtype=torch.float32, **meta)
        out = torch.empty(m, n, dtype=torch.bfloat16, **meta)
        mine = sum(p.seconds for p in perf.predict_call(mm8.launch_int8, a, b, scale_a, scale_b, None, None, None,
                                                        out, arch=arch))
        bm, bn, bk = self.vllm_tile(m, n)
        P = ek.Ptr
        args = dict(a_ptr=P("int8", m * k), b_ptr=P("int8", k * n), scale_a_ptr=P("float32", m * 4),
                    scale_b_ptr=P("float32", n * 4), c_ptr=P("bfloat16", m * n * 2), bias_ptr=None, M=m, N=n, K=k,
                    stride_am=k, stride_ak=1, stride_bk=1, stride_bn=k, stride_cm=n, stride_cn=1)
        # A per-token scale of one row is a scalar to triton_scaled_mm ([1, 1]).
        consts = dict(ACCUMULATOR_DTYPE=tl.int32, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                      BLOCK_SIZE_SCALE_A=1 if m == 1 else bm, BLOCK_SIZE_SCALE_B=bn, USE_TD=False, B_T=True)
        grid = (-(-m // bm) * -(-n // bn),)
        return mine, _engine_seconds(kernels[self.kernel], arch, args, consts, grid, 4)


class FusedMoe(Op):
    """vLLM's Triton fused_moe_kernel, its two grouped GEMMs (gate-up, then down with the routing
    weights) at the tile vLLM's get_default_config picks for bf16 on ROCm, its sorted ids as its
    moe_align_block_size lays them out (or, for a few tokens over many experts, its naive
    assignment), against hk's grouped GEMMs (hk.ops.moe) on the same routing: OLMoE-1B-7B's
    experts, each token's top-k spread evenly over them. The align step, the activation and the
    final sum (C++ or torch in vLLM, a torch sort and hk kernels in hk) are not counted."""

    def shapes(self, limit=None):
        cfg = _models()[self.model]
        return [(cfg["num_experts"], cfg["experts_per_token"], cfg["hidden_size"], cfg["intermediate_size"])]

    @staticmethod
    def vllm_config(m, experts):
        """The tile vLLM 0.33's get_default_config picks for a bf16 MoE of m tokens on ROCm."""
        block_m = 16 if m <= 32 else 32 if m <= 96 else 64 if m <= 512 else 128
        return {"BLOCK_SIZE_M": block_m, "BLOCK_SIZE_N": 64 if m <= 64 else 128,
                "BLOCK_SIZE_K": 128 if m <= 64 else 64, "GROUP_SIZE_M": 16 if m // max(experts, 1) > 128 else 1,
                "num_warps": 4 if m <= 128 else 8, "num_stages": 2}

    def predict(self, kernels, arch, m, shape):
        import torch

        import hk
        from hk import perf, tuned
        from hk.ops import moe

        experts, top_k, hidden, inter = shape
        topk_ids = (torch.arange(m * top_k, dtype=torch.int32) % experts).view(m, top_k)
        gemms = [(2 * inter, hidden, False, top_k), (hidden, inter, True, 1)]  # (N, K, weighted, rows per a-row)
        # hk: the block hk.ops.fused_moe launches with (the tuned one for the layer's bucket, else
        # block_for's), its align.
        knobs = tuned.lookup(moe.FUSED_MOE, (m, experts, top_k, hidden, inter, "bf16"), arch)
        block = moe.block_of(knobs, m * top_k, experts)
        ids, blocks, padded = moe.align(topk_ids, block, experts)
        mine = 0.0
        for n, k, weighted, per_row in gemms:
            rows_a = m * top_k // per_row
            a = torch.empty(rows_a, k, dtype=torch.bfloat16, device="meta")
            w = torch.empty(experts, 1, n, k, dtype=torch.bfloat16, device="meta")
            weights = torch.empty(m * top_k, 1, dtype=torch.float32, device="meta")
            out = torch.empty(m * top_k, n, dtype=torch.bfloat16, device="meta")
            kernel = moe.moe_gemm_kernel(hk.bf16, per_row, weighted, block)
            mine += perf.predict(kernel, a, w, ids.view(-1, 1), blocks.view(-1, 1), padded.view(1, 1), weights, out,
                                 arch=arch).seconds
        # vLLM: its tile, its assignment.
        import triton.language as tl

        cfg = self.vllm_config(m, experts)
        bm = cfg["BLOCK_SIZE_M"]
        numel = m * top_k
        naive = numel * 4 <= experts
        if naive:
            sorted_ids, expert_ids = None, topk_ids.view(-1).numpy()
            post_pad = torch.tensor([numel * bm], dtype=torch.int32).numpy()
            em = numel * bm
        else:
            s, e, p = moe.align(topk_ids, bm, experts)
            sorted_ids, expert_ids, post_pad = s.numpy(), e.numpy(), p.numpy()
            em = s.numel() if m >= bm else min(s.numel(), m * top_k * bm)
        P = ek.Ptr
        theirs = 0.0
        for n, k, weighted, per_row in gemms:
            rows_a = numel // per_row
            args = dict(a_ptr=P("bfloat16", rows_a * k * 2), b_ptr=P("bfloat16", experts * n * k * 2),
                        c_ptr=P("bfloat16", numel * n * 2), b_bias_ptr=None, a_scale_ptr=None, b_scale_ptr=None,
                        topk_weights_ptr=P("float32", numel * 4),
                        sorted_token_ids_ptr=None if naive else P("int32", array=sorted_ids),
                        expert_ids_ptr=P("int32", array=expert_ids), num_tokens_post_padded_ptr=P("int32", array=post_pad),
                        N=n, K=k, EM=em, num_valid_tokens=numel,
                        stride_am=k, stride_ak=1, stride_be=n * k, stride_bk=1, stride_bn=k, stride_cm=n, stride_cn=1,
                        stride_asm=0, stride_ask=0, stride_bse=0, stride_bsk=0, stride_bsn=0, stride_bbe=0,
                        stride_bbn=0)
            consts = dict(group_n=0, group_k=0, naive_block_assignment=naive, BLOCK_SIZE_M=bm,
                          BLOCK_SIZE_N=cfg["BLOCK_SIZE_N"], BLOCK_SIZE_K=cfg["BLOCK_SIZE_K"],
                          GROUP_SIZE_M=cfg["GROUP_SIZE_M"], SPLIT_K=1, MUL_ROUTED_WEIGHT=weighted, top_k=per_row,
                          compute_type=tl.bfloat16, use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False,
                          per_channel_quant=False, HAS_BIAS=False, SWAP_AB=False)
            grid = (-(-em // bm) * -(-n // cfg["BLOCK_SIZE_N"]),)
            theirs += _engine_seconds(kernels[self.kernel], arch, args, consts, grid, cfg["num_warps"],
                                      cfg["num_stages"])
        return mine, theirs


class PagedAttention(Op):
    """vLLM's Triton unified attention (kernel_unified_attention; for a decode batch of at most
    seq_threshold_3D = 128 / K/V heads sequences its split-K form, 16 segments, and then
    reduce_segments) as its TritonAttention backend launches it, against hk's paged decode or
    prefill kernel (hk.ops.paged), bf16, on Qwen3-8B's heads, 16-slot blocks, K and V each a
    [blocks, 16, K/V heads, head size] cache. Decode: `seqs` sequences of CONTEXT keys, one query
    each; prefill: one causal sequence of `tokens` tokens, nothing cached."""

    CONTEXT = 1024
    BS = 16
    SPARE_BLOCKS = 16
    SEGMENTS = 16       # vLLM's NUM_PAR_SOFTMAX_SEGMENTS
    MIN_GRID_2D = 128   # vLLM's MIN_LAUNCH_GRID_SIZE_2D

    def shapes(self, limit=None):
        cfg = _models()[self.model]
        return [(cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"])]

    def batch(self, count):
        """(query lengths, key lengths) of a bucket."""
        if self.fact == "seqs":
            return [1] * count, [self.CONTEXT] * count
        return [count], [count]

    def predict(self, kernels, arch, count, shape):
        import numpy as np
        import torch

        from hk import perf
        from hk.ops import paged

        heads, kvh, d = shape
        qlens, klens = self.batch(count)
        seqs, tokens, bs = len(qlens), sum(qlens), self.BS
        used = -(-max(klens) // bs)
        # vLLM's block table is as wide as the longest sequence the engine admits: its kernel
        # reads a whole tile's entries (unmasked) past a short sequence's last block.
        per_seq = used + self.SPARE_BLOCKS
        tables = torch.zeros(seqs, per_seq, dtype=torch.int32)
        tables[:, :used] = torch.arange(seqs * used, dtype=torch.int32).view(seqs, used)
        lens = torch.tensor(klens, dtype=torch.int32)
        starts = torch.tensor([0] + list(np.cumsum(qlens)), dtype=torch.int32)
        blocks = seqs * used
        scale = d ** -0.5
        meta = dict(dtype=torch.bfloat16, device="meta")
        q = torch.empty(tokens, heads * d, **meta).view(-1, d)
        k = torch.empty(blocks, 1, bs, kvh * d, **meta)
        o = torch.empty(tokens, heads * d, **meta).view(-1, d)
        if self.fact == "seqs":
            kernel = paged.decode_kernel(d, heads // kvh, bs, 1)
            mine = perf.predict(kernel, q, k, k, tables, lens, o, scale, arch=arch).seconds
        else:
            kernel = paged.prefill_kernel(d, heads // kvh, bs, 1)
            mine = perf.predict(kernel, q, k, k, tables, lens, starts, o, scale, max(qlens), arch=arch).seconds
        # vLLM's launch (unified_attention, its defaults for bf16 without windows, sinks or scales).
        group = heads // kvh
        block_m = 16 if group <= 16 else 1 << (group - 1).bit_length()
        block_q = block_m // group
        q_blocks = tokens // block_q + seqs
        use_3d = max(qlens) == 1 and seqs <= self.MIN_GRID_2D // kvh
        P = ek.Ptr
        cache = P("bfloat16", blocks * bs * kvh * d * 2)
        lens_ptr = P("int32", array=lens.numpy())
        starts_ptr = P("int32", array=starts.numpy())
        segm = self.SEGMENTS if use_3d else 1
        args = dict(output_ptr=P("bfloat16", tokens * heads * d * 2), query_ptr=P("bfloat16", tokens * heads * d * 2),
                    key_cache_ptr=cache, value_cache_ptr=cache, sink_ptr=None,
                    block_tables_ptr=P("int32", array=tables.numpy()), seq_lens_ptr=lens_ptr, alibi_slopes_ptr=None,
                    qq_bias_ptr=None, scale=scale, q_scale=None, k_scale=P("float32", array=np.ones(1, np.float32)),
                    v_scale=P("float32", array=np.ones(1, np.float32)), out_scale=1.0, softcap=0,
                    block_table_stride=per_seq, query_stride_0=heads * d, query_stride_1=d,
                    output_stride_0=heads * d, output_stride_1=d, qq_bias_stride_0=0, per_seq_causal_ptr=None,
                    mm_prefix_range_ptr=None, rswa_prefix_lens_ptr=lens_ptr,
                    stride_k_cache_0=bs * kvh * d, stride_k_cache_1=kvh * d, stride_k_cache_2=d,
                    stride_v_cache_0=bs * kvh * d, stride_v_cache_1=kvh * d, stride_v_cache_2=d,
                    query_start_len_ptr=starts_ptr, num_seqs=seqs,
                    segm_output_ptr=P("float32", tokens * heads * segm * d * 4) if use_3d else None,
                    segm_max_ptr=P("float32", tokens * heads * segm * 4) if use_3d else None,
                    segm_expsum_ptr=P("float32", tokens * heads * segm * 4) if use_3d else None)
        tile = 16 if use_3d else 32
        consts = dict(num_query_heads=heads, num_queries_per_kv=group, BLOCK_SIZE=bs, TILE_SIZE=tile, HEAD_SIZE=d,
                      HEAD_SIZE_PADDED=d, USE_ALIBI_SLOPES=False, USE_ALIBI_SQRT=False, USE_QQ_BIAS=False,
                      USE_SOFTCAP=False, USE_SINKS=False, SLIDING_WINDOW=0, USE_CAUSAL=True,
                      USE_PER_SEQ_CAUSAL=False, USE_MM_PREFIX=False, MAX_MM_RANGES=0, R_SWA_WINDOW=0, USE_R_SWA=False,
                      stride_k_cache_3=1, stride_v_cache_3=1, BLOCK_Q=block_q, BLOCK_M=block_m,
                      NUM_SEGMENTS_PER_SEQ=segm, USE_FP8=False, IS_3D=use_3d, KV_QUANT_MODE=0, Q_IS_FP8=False,
                      CHUNK_LOOKBACK=-1, CHUNK_SIZE=-1, USE_TD=False, USE_TD_QO=False, MM_PREFIX_CLAMP_SW=False)
        grid = (q_blocks, kvh, segm) if use_3d else (q_blocks, kvh)
        theirs = _engine_seconds(kernels["kernel_unified_attention"], arch, args, consts, grid, 4)
        if use_3d:
            args = dict(output_ptr=args["output_ptr"], segm_output_ptr=args["segm_output_ptr"],
                        segm_max_ptr=args["segm_max_ptr"], segm_expsum_ptr=args["segm_expsum_ptr"],
                        seq_lens_ptr=lens_ptr, num_seqs=seqs, out_scale_inv=1.0, output_stride_0=heads * d,
                        output_stride_1=d, block_table_stride=per_seq, query_start_len_ptr=starts_ptr)
            consts = dict(num_query_heads=heads, TILE_SIZE=tile, HEAD_SIZE=d, HEAD_SIZE_PADDED=d, BLOCK_Q=block_q,
                          NUM_SEGMENTS_PER_SEQ=segm, USE_FP8=False)
            theirs += _engine_seconds(kernels["reduce_segments"], arch, args, consts, (tokens, heads), 4)
        return mine, theirs


def _engine_seconds(fn, arch, args, consts, grid, warps, stages=2):
    from hk import perf

    co, name, lds, values = ek.compile_kernel(fn, arch, args, consts, warps, stages)
    from hk.emu import runner

    explicit = len(runner.load(co)[0].kernel(name).explicit_args)
    values = values + [None] * (explicit - len(values))  # Triton's scratch pointers
    return perf.predict_code_object(co, name, grid, (warps * ek.WAVE[arch],), values, arch=arch,
                                    shared_mem=lds).seconds


_UNIFIED = "vllm.v1.attention.ops.triton_unified_attention"
# What the unified attention module computes at import from the platform: only its fp8 range
# (the defaults of constants the bf16 launch does not use).
_PLATFORM = {"float8_info": "torch.finfo(torch.float8_e4m3fn)"}

PREDICTED = {
    "awq_gemm": AwqGemm("awq_gemm", "vllm", "vllm.model_executor.layers.quantization.awq_triton", "awq_gemm_kernel",
                        "qwen3-8b", (1, 8, 32, 128), ("float16", "bfloat16"), upper=255),
    "moe": FusedMoe("moe", "vllm", "vllm.model_executor.layers.fused_moe.fused_moe", "fused_moe_kernel",
                    "olmoe-1b-7b", (1, 8, 32, 128, 512, 2048), ("bfloat16", "float16")),
    "int8_scaled_mm": Int8ScaledMM("int8_scaled_mm", "vllm",
                                   "vllm.model_executor.layers.quantization.compressed_tensors.triton_scaled_mm",
                                   "scaled_mm_kernel", "qwen3-8b", (1, 32, 128, 2048), ("bfloat16", "float16")),
    "attention_decode": PagedAttention("attention_decode", "vllm", _UNIFIED, "kernel_unified_attention", "qwen3-8b",
                                       (1, 4, 16, 64, 256), ("bfloat16",), given=_PLATFORM, fact="seqs",
                                       kernels=("reduce_segments",)),
    "attention_prefill": PagedAttention("attention_prefill", "vllm", _UNIFIED, "kernel_unified_attention", "qwen3-8b",
                                        (128, 512, 2048), ("bfloat16",), given=_PLATFORM, fact="tokens"),
}


# ---------------------------------------------------------------------------------------------
# Ops the model does not predict (most have no code object it can read): rules from published
# measurements (the system's record, W7900 for gfx1100 and MI355X for gfx950), hk only where one
# shows hk ahead.

NO_CODE_OBJECT = {
    "linear": "the engine multiplies with hipBLASLt/rocBLAS through torch: no code object to predict",
    "rms_norm": "the engine's kernel is C++ (vLLM's _C, SGLang's sgl_kernel): no code object to predict",
    "rotary": "the engine's kernel is C++ (vLLM's _C): no code object to predict",
    "silu_and_mul": "the engine's kernel is C++ (vLLM's _C): no code object to predict",
    "kv_cache_write": "the engine's kernel is C++ (vLLM's _C reshape_and_cache_flash): no code object to predict",
    "awq_gemm": "above 255 tokens vLLM dequantizes (Triton) and multiplies with hipBLASLt: no code object "
                "for its GEMM",
    "fp8_scaled_mm": "vLLM multiplies W8A8 fp8 with AITER's GEMMs or torch._scaled_mm (hipBLASLt): no code object "
                     "to predict",
}

NONE_PUBLISHED = "no published measurement of hk against the engine on this target"
_W7900 = {
    "linear": [({"dtype": HALF}, "hk", "published (W7900): hk's GEMM 1.28-1.39x hipBLASLt on Qwen3-8B's linear "
                "shapes; decode GEMV 1.93-2.03x hipBLASLt at 1-32 tokens")],
    "awq_gemm": [({"dtype": HALF, "m": [256, None]}, "hk", "published (W7900): Qwen3-8B-AWQ 1.07-3.80x per request "
                  "against stock vLLM 0.31")],
    "rms_norm": [({"dtype": FLOATS}, "hk", "published (W7900): RMSNorm 1.02-1.12x, fused add + RMSNorm a tie "
                  "(0.83-1.11x), against the fastest of autotuned Triton, FlyDSL and Inductor")],
    "rotary": [({}, "engine", NONE_PUBLISHED + " (RoPE's published ratio is MI355X's, against torch)")],
    "silu_and_mul": [({}, "engine", NONE_PUBLISHED + " (SiLU-mul's published ratio is MI355X's, against torch)")],
    "kv_cache_write": [({"dtype": ["bfloat16"]}, "hk", "published (W7900): KV cache write 1.18-3.00x a Triton "
                        "row kernel")],
}
_MI355X = {
    "linear": [({}, "engine", "published (MI355X): hk's own GEMM 0.41x hipBLASLt")],
    "rms_norm": [({"dtype": HALF, "form": ["fused_add"]}, "hk", "published (MI355X): fused add + RMSNorm "
                  "1.06-1.44x torch"),
                 ({}, "engine", "published (MI355X): hk's plain norm and elementwise kernels 0.59-1.05x torch")],
    "rotary": [({"dtype": HALF}, "hk", "published (MI355X): RoPE 8.85x torch")],
    "silu_and_mul": [({"dtype": HALF}, "hk", "published (MI355X): SiLU-mul 1.28-1.82x torch")],
}
PUBLISHED = {"gfx1100": _W7900, "gfx950": _MI355X}


# Where the system's record measured hk against the same engine kernel on the target's GPU, the
# measurement decides the buckets it covers: the model's stated error was fitted on GEMM
# throughput, and at these latency- and memory-bound shapes its prediction disagrees with the
# measurement by more than that error. The prediction stays in the rule beside it.
MEASURED = {
    "gfx1100": {
        "awq_gemm": [([1, 255], "hk", "measured (W7900): the W4A16 decode GEMM 1.40-2.61x vLLM 0.31's Triton AWQ "
                      "kernel")],
        "moe": [([1, 256], "hk", "measured (W7900): the MoE GEMM 1.00-2.77x vLLM 0.31's Triton fused_moe at 1-256 "
                 "tokens"),
                ([257, None], "engine", "measured (W7900): the MoE GEMM slower than Triton's above 256 tokens")],
        "attention_prefill": [([1, None], "hk", "measured (W7900): paged prefill 3.6-7.9x vLLM's Triton "
                               "unified_attention, cached prefixes and chunks included")],
        "attention_decode": [([1, 64], "engine", "measured (W7900): paged decode 0.83-0.95x vLLM 0.31's Triton "
                              "attention per layer at 16-64 requests (up to 8, Triton's kernel on hk's cache)")],
    },
}


def measured(arch, op, lo, hi):
    """(route, basis) of a published measurement covering tokens lo..hi (hi None: open), or None."""
    for (mlo, mhi), route, basis in MEASURED.get(arch, {}).get(op, []):
        if mlo <= lo and (mhi is None or (hi is not None and hi <= mhi)):
            return route, basis
    return None


def measured_engine_within(arch, op, lo, hi):
    """The basis of a published measurement that finds the engine faster somewhere in lo..hi."""
    for (mlo, mhi), route, basis in MEASURED.get(arch, {}).get(op, []):
        if route == routing.ENGINE and (hi is None or mlo <= hi) and (mhi is None or lo <= mhi):
            return basis
    return None


def published_rules(arch, op):
    """The rules of an op the model cannot predict on `arch`, each with its basis."""
    why = NO_CODE_OBJECT[op]
    rules = [{"when": when, "route": route, "basis": "%s; %s" % (why, basis)}
             for when, route, basis in PUBLISHED.get(arch, {}).get(op, [])]
    if not rules or rules[-1]["when"]:
        rest = "%s; %s" % (why, NONE_PUBLISHED) if not rules else "%s; the other calls: no published measurement " \
            "of hk ahead" % why
        rules.append({"when": {}, "route": routing.ENGINE, "basis": rest})
    return rules


# ---------------------------------------------------------------------------------------------
# Predictions and the rules they give.

def margin_for(arch, margin):
    """The margin hk must be predicted faster by: a number, or the stated error for `arch`."""
    if margin == "stated":
        from hk.perf import device as devices
        from hk.perf.model import stated_error

        return stated_error(devices.get(None, arch=arch))
    return float(margin)


def decide(hk_seconds, engine_seconds, margin):
    """(route, ratio): hk when the engine's predicted time is at least (1 + margin) times hk's."""
    ratio = engine_seconds / hk_seconds
    return (routing.HK if ratio >= 1.0 + margin else routing.ENGINE), ratio


def ranges(tokens, upper=None):
    """[lo, hi] per bucket: above the previous bucket up to this one, the last open (or `upper`)."""
    out, lo = [], 1
    for i, t in enumerate(tokens):
        hi = t if i < len(tokens) - 1 else upper
        out.append([lo, hi])
        lo = t + 1
    return out


def predicted_rules(op, tokens, outcomes, margin, previous, arch=None):
    """The rules of a predicted op from its buckets' outcomes ((hk s, engine s) or an error text);
    a bucket that could not be predicted keeps the previous table's route and says why; a bucket
    a measurement on `arch` covers takes the measured route (MEASURED)."""
    rules = []
    for (lo, hi), t, outcome in zip(ranges(tokens, op.upper), tokens, outcomes):
        when = {"dtype": list(op.dtypes), op.fact: [lo, hi]}
        known = measured(arch, op.name, lo, hi)
        if known and isinstance(outcome, str):
            rules.append({"when": when, "route": known[0], "basis": "%s; not predicted (%s)" % (known[1], outcome)})
            continue
        if known:
            mine, theirs = outcome
            rules.append({"when": when, "route": known[0], "basis": "%s; decides over the prediction at %s %d"
                          % (known[1], op.fact, t), "ratio": round(theirs / mine, 3),
                          "hk_us": round(mine * 1e6, 2), "engine_us": round(theirs * 1e6, 2)})
            continue
        if isinstance(outcome, str):
            route = previous.route(op.name, **{"dtype": op.dtypes[0], op.fact: t}) if previous else routing.ENGINE
            rules.append({"when": when, "route": route, "basis": "not predicted (%s); the previous table's route"
                          % outcome})
            continue
        mine, theirs = outcome
        route, ratio = decide(mine, theirs, margin)
        basis = "predicted at %s %d" % (op.fact, t)
        against = measured_engine_within(arch, op.name, lo, hi) if route == routing.HK else None
        if against:  # a measurement finds the engine faster in part of the bucket: it stays there
            route, basis = routing.ENGINE, "%s, but %s, within this bucket" % (basis, against)
        rules.append({"when": when, "route": route, "basis": basis, "ratio": round(ratio, 3),
                      "hk_us": round(mine * 1e6, 2), "engine_us": round(theirs * 1e6, 2)})
    return rules


def _predict_bucket(job):
    """(hk seconds, engine seconds) summed over the op's shapes at one bucket, or the reason."""
    import warnings

    from hk.errors import HKError, HKWarning

    op, kernels, arch, tokens, shapes = job
    mine = theirs = 0.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HKWarning)
            for shape in shapes:
                a, b = op.predict(kernels, arch, tokens, shape)
                mine, theirs = mine + a, theirs + b
    except HKError as e:
        return (getattr(e, "message", None) or str(e)).strip().splitlines()[0][:300]
    return mine, theirs


_JOBS = []


def _in_worker(i):
    return _predict_bucket(_JOBS[i])


def run_jobs(jobs, workers, progress=None):
    """Each job's outcome, in order (workers > 1: forked processes)."""
    import concurrent.futures
    import multiprocessing

    _JOBS[:] = jobs
    out = [None] * len(jobs)
    try:
        if workers > 1 and len(jobs) > 1:
            ctx = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx) as pool:
                futures = {pool.submit(_in_worker, i): i for i in range(len(jobs))}
                for f in concurrent.futures.as_completed(futures):
                    out[futures[f]] = f.result()
                    if progress:
                        progress()
        else:
            for i in range(len(jobs)):
                out[i] = _in_worker(i)
                if progress:
                    progress()
    finally:
        _JOBS.clear()
    return out


def load_kernels(ops, roots, directory):
    """{op name: {kernel name: its JITFunction}} lifted from each op's engine package."""
    out = {}
    for op in ops:
        names = [op.kernel] + list(op.kernels)
        source = ek.lift(roots[op.engine], op.engine, op.module, names, op.given)
        module = ek.load(source, directory, "%s_%s" % (op.engine, op.name))
        out[op.name] = {name: getattr(module, name) for name in names}
    return out


def kept_rules(previous, ops, model, versions, margin):
    """{op name: (rules, provenance line)} of the predicted ops not among `ops` in the previous
    Table, which must be of this model, these packages and this margin (so that its rules of the
    other ops stand beside the new ones as if predicted with them)."""
    names = [n for n in PREDICTED if n not in {op.name for op in ops} and n in previous.ops]
    if not names:
        return {}
    prov = previous.provenance if isinstance(previous.provenance, dict) else {}
    was = (prov.get("model"), prov.get("packages"), prov.get("margin"))
    if was != (model, versions, margin):
        raise ek.EngineKernelError(
            "%s was predicted by model %s with %s at margin %s, not model %s with %s at margin %s: its rules of "
            "the other ops cannot stand beside new ones; predict every op again (no --ops)"
            % ((previous.source,) + was + (model, versions, margin)))
    return {n: (previous.ops[n], prov.get("predicted", {}).get(n)) for n in names}


def _in_order(d):
    """`d` (keyed by op) in the order of PREDICTED, then NO_CODE_OBJECT."""
    order = list(PREDICTED) + list(NO_CODE_OBJECT)
    return dict(sorted(d.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def build_tables(archs, ops, roots, margin="stated", tokens=None, shapes=None, jobs=1, previous=None,
                 directory=None, progress=None, keep=False):
    """{arch: table} predicted for `ops` (Op objects) at `tokens` (or each op's buckets), the
    engines' packages under roots[engine]; `previous` maps an arch to its previous Table. `keep`:
    the previous table's rules of the other predicted ops stay (kept_rules)."""
    import triton

    from hk.autotune import fingerprint
    from hk.perf import device as devices
    from hk.perf.model import stated_error

    directory = directory or ek.scratch()
    ek.triton_cache(directory)
    kernels = load_kernels(ops, roots, directory)
    plan, work = [], []
    for arch in archs:
        for op in ops:
            buckets = tuple(int(t) for t in tokens) if tokens else op.tokens
            if op.upper:
                buckets = tuple(t for t in buckets if t <= op.upper)
            plan.append((arch, op, buckets))
            work += [(op, kernels[op.name], arch, t, op.shapes(shapes)) for t in buckets]
    versions = {engine: ek.installed_version(root, engine) for engine, root in sorted(roots.items())}
    versions["triton"] = triton.__version__
    model = fingerprint.model_version()
    kept = {arch: kept_rules(previous[arch], ops, model, versions, margin_for(arch, margin))
            if keep and (previous or {}).get(arch) else {} for arch in archs}
    if progress:
        progress(len(work))
    outcomes = iter(run_jobs(work, jobs, progress and (lambda: progress(None))))
    today = datetime.date.today().isoformat()
    tables = {}
    for arch in archs:
        chosen = margin_for(arch, margin)
        table_ops = {name: rules for name, (rules, _) in kept[arch].items()}
        for a, op, buckets in plan:
            if a == arch:
                table_ops[op.name] = predicted_rules(op, buckets, [next(outcomes) for _ in buckets], chosen,
                                                     (previous or {}).get(arch), arch)
                if op.upper:
                    table_ops[op.name] += published_rules(arch, op.name)
        for name in NO_CODE_OBJECT:
            if name not in table_ops:
                table_ops[name] = published_rules(arch, name)
        tables[arch] = {
            "target": arch,
            "provenance": {
                "kind": "model",
                "model": model,
                "error": stated_error(devices.get(None, arch=arch)),
                "margin": chosen,
                "date": today,
                "packages": versions,
                "predicted": _in_order({**{name: line for name, (_, line) in kept[arch].items() if line},
                                        **{op.name: "%s %s's %s on %s's shapes" % (
                                            op.engine, versions[op.engine], op.kernel, op.model) for op in ops}}),
                "rule": "a predicted rule routes to hk when the engine's predicted time is at least (1 + margin) "
                        "times hk's (ratio = engine / hk), unless a published measurement of the same kernels "
                        "on the target's GPU covers it (its basis starts with 'measured'); every other rule "
                        "names its basis",
                "not predicted": "SGLang 0.5.23's own Triton kernels (its fused_moe_kernel, decode and extend "
                                 "attention): the rules compare hk with vLLM's, for both engines",
                "command": "bazel run //integration/engine:hk-routes -- --jobs=2 --out=<tables directory>",
            },
            "ops": _in_order(table_ops),
        }
        routing.Table(tables[arch], "<generated %s>" % arch)  # the form routing.py reads
    return tables


def write(tables, out):
    os.makedirs(out, exist_ok=True)
    for arch, data in tables.items():
        with open(os.path.join(out, "%s.json" % arch), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")


def _runfile(path):
    """A runfile of this binary (an engine's interpreter: "vllm_env/python"), or None."""
    from hk.runtime import toolchain

    for root in toolchain._runfiles_roots():
        if os.path.exists(os.path.join(root, path)):
            return os.path.join(root, path)
    return None


def main(argv):
    if len(argv) > 1:
        raise app.UsageError("unexpected arguments: %s" % " ".join(argv[1:]))
    names = FLAGS.ops or list(PREDICTED)
    unknown = [n for n in names if n not in PREDICTED]
    bad_archs = [a for a in FLAGS.archs if a not in ARCHS]
    if unknown or bad_archs or not FLAGS.out:
        print("hk-routes: %s" % ("unknown ops %s (predicted: %s)" % (unknown, ", ".join(PREDICTED)) if unknown else
                                  "unknown targets %s (%s)" % (bad_archs, ", ".join(ARCHS)) if bad_archs else
                                  "--out names the directory to write the tables into"), file=sys.stderr)
        return 2
    try:
        if FLAGS.margin != "stated":
            float(FLAGS.margin)
    except ValueError:
        print("hk-routes: --margin is a number or \"stated\", not %r" % FLAGS.margin, file=sys.stderr)
        return 2
    ops = [PREDICTED[n] for n in names]
    try:
        root = ek.package_root(FLAGS.vllm_python or _runfile("vllm_env/python"), FLAGS.vllm_root)
    except ek.EngineKernelError as e:
        print("hk-routes: %s" % e, file=sys.stderr)
        return 2
    previous = {a: routing.table(a) for a in FLAGS.archs}
    from tqdm import tqdm

    bar = tqdm(unit="bucket", desc="predicting")

    def progress(total):
        if total is not None:
            bar.total = total
            bar.refresh()
        else:
            bar.update(1)

    try:
        tables = build_tables(FLAGS.archs, ops, {"vllm": root}, FLAGS.margin, FLAGS.tokens, FLAGS.shapes, FLAGS.jobs,
                              previous, progress=progress, keep=bool(FLAGS.ops))
    except ek.EngineKernelError as e:
        print("hk-routes: %s" % e, file=sys.stderr)
        return 2
    bar.close()
    write(tables, FLAGS.out)
    failed = 0
    for arch, data in tables.items():
        for name, rules in data["ops"].items():
            if name not in names:  # kept from the shipped table, or not predicted
                continue
            for r in rules:
                if "ratio" in r:
                    fact = PREDICTED[name].fact
                    print("%-8s %-18s %s %-14s %-6s engine/hk %.2f (hk %.1f us, engine %.1f us)"
                          % (arch, name, fact, r["when"][fact], r["route"], r["ratio"], r["hk_us"], r["engine_us"]))
                elif r["basis"].startswith("not predicted ("):
                    failed += 1
                    print("%-8s %-18s %-6s %s" % (arch, name, r["route"], r["basis"]))
    print("hk-routes: wrote %s" % ", ".join(os.path.join(FLAGS.out, "%s.json" % a) for a in tables))
    return 1 if failed else 0


def run():
    define_flags()
    app.run(main)


if __name__ == "__main__":
    run()
