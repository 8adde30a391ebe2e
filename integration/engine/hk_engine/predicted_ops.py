"""The predicted ops of hk-routes (routes_from_model): each an engine's own Triton kernel, the
model whose shapes it is predicted at, its buckets, and the two predictions at one bucket (hk's
kernel for the call and the engine's, lifted from its pinned package by engine_kernels and
compiled for the target)."""

import dataclasses
import itertools

from hk_engine import engine_kernels as ek


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
    per_engine: bool = False  # the engines' kernels differ: the rules are the engine's own

    @property
    def key(self):
        """Its name in PREDICTED (and --ops): "<engine>.<op>" for an engine's own rules."""
        return "%s.%s" % (self.engine, self.name) if self.per_engine else self.name

    @property
    def described(self):
        """The engine's kernel as the provenance names it."""
        return self.kernel

    def against(self, arch, tokens):
        """What a rule's basis adds about the engine's launch at a bucket (None: its one kernel)."""
        return None

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


class Fp8BlockScaledMM(Op):
    """vLLM's Triton block-scaled fp8 GEMM (_w8a8_triton_block_scaled_mm, which its
    TritonFp8BlockScaledMMKernel launches on ROCm without AITER) at the config
    w8a8_triton_block_scaled_mm takes (its tuned json for the device and shape, of which it ships
    none for an AMD device at Qwen3-8B's shapes: its default 64 x 128 x 128, GROUP_SIZE_M 32, 4
    warps, 2 stages), against hk.ops.scaled_mm with 128 x 128 block scales: activations fp8 with
    scales per token per 128 columns, the weight fp8 [N, K] with one scale per 128 x 128 block, in
    the platform's fp8 (FNUZ on gfx942, as vLLM converts it there; OCP elsewhere), out bf16, on
    Qwen3-8B's linear layers. The activations' quantization (a kernel before either GEMM) is not
    counted."""

    GROUP = 128
    CONFIG = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 32}
    WARPS, STAGES = 4, 2

    def shapes(self, limit=None):
        return linear_shapes(self.model)[:limit]

    @staticmethod
    def fp8_dtype(arch):
        """The fp8 the engine's platform quantizes to on arch's GPU (vLLM's current_platform.fp8_dtype(),
        SGLang's fp8_dtype: FNUZ on gfx94x, whose OCP checkpoints both convert)."""
        import torch

        from hk_engine import ops

        return torch.float8_e4m3fnuz if ops.fnuz_target(arch) else torch.float8_e4m3fn

    def constexprs(self, k):
        """The kernel's constants beyond the config's at a K."""
        return {}

    def hk_seconds(self, arch, m, shape):
        """hk.ops.scaled_mm's block-scaled launch at m rows of one (N, K)."""
        import torch

        from hk import perf
        from hk.ops import mm8

        n, k = shape
        g = self.GROUP
        fp8 = self.fp8_dtype(arch)
        meta = dict(device="meta")
        a = torch.empty(m, k, dtype=fp8, **meta)
        b = torch.empty(n, k, dtype=fp8, **meta).t()  # the weight [N, K] as hk reads it: b = weightᵀ
        scale_a = torch.empty(m, k // g, dtype=torch.float32, **meta)
        scale_b = torch.empty(k // g, n // g, dtype=torch.float32, **meta)
        out = torch.empty(m, n, dtype=torch.bfloat16, **meta)
        return sum(p.seconds for p in perf.predict_call(mm8.launch_fp8, a, b, scale_a, scale_b, None, out, arch=arch))

    def predict(self, kernels, arch, m, shape):
        n, k = shape
        g = self.GROUP
        mine = self.hk_seconds(arch, m, shape)
        cfg = self.CONFIG
        P = ek.Ptr
        name = str(self.fp8_dtype(arch)).replace("torch.", "")
        # The engine's strides: A [M, K], B [N, K] (stride_bk 1), As [M, K/128], Bs [N/128, K/128].
        args = dict(A=P(name, m * k), B=P(name, n * k), C=P("bfloat16", m * n * 2), As=P("float32", m * k // g * 4),
                    Bs=P("float32", n // g * k // g * 4), M=m, N=n, K=k, group_n=g, group_k=g, stride_am=k,
                    stride_ak=1, stride_bk=1, stride_bn=k, stride_cm=n, stride_cn=1, stride_As_m=k // g,
                    stride_As_k=1, stride_Bs_k=1, stride_Bs_n=k // g)
        grid = (-(-m // cfg["BLOCK_SIZE_M"]) * -(-n // cfg["BLOCK_SIZE_N"]),)
        return mine, _engine_seconds(kernels[self.kernel], arch, args, dict(cfg, **self.constexprs(k)), grid,
                                     self.WARPS, self.STAGES)


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

    # The two GEMMs: (N, K, weighted, rows per a-row) of a layer's shape.
    @staticmethod
    def gemms(shape):
        experts, top_k, hidden, inter = shape
        return [(2 * inter, hidden, False, top_k), (hidden, inter, True, 1)]

    @staticmethod
    def routing(m, shape):
        import torch

        experts, top_k = shape[:2]
        return (torch.arange(m * top_k, dtype=torch.int32) % experts).view(m, top_k)

    def hk_seconds(self, arch, m, shape):
        """hk's two grouped GEMMs (hk.ops.fused_moe's launches) at m tokens."""
        import torch

        import hk
        from hk import perf, tuned
        from hk.ops import moe

        experts, top_k, hidden, inter = shape
        topk_ids = self.routing(m, shape)
        # hk: the block hk.ops.fused_moe launches with (the tuned one for the layer's bucket, else
        # block_for's), its align.
        knobs = tuned.lookup(moe.FUSED_MOE, (m, experts, top_k, hidden, inter, "bf16"), arch)
        block = moe.block_of(knobs, m * top_k, experts)
        ids, blocks, padded = moe.align(topk_ids, block, experts)
        mine = 0.0
        for n, k, weighted, per_row in self.gemms(shape):
            rows_a = m * top_k // per_row
            a = torch.empty(rows_a, k, dtype=torch.bfloat16, device="meta")
            w = torch.empty(experts, 1, n, k, dtype=torch.bfloat16, device="meta")
            weights = torch.empty(m * top_k, 1, dtype=torch.float32, device="meta")
            out = torch.empty(m * top_k, n, dtype=torch.bfloat16, device="meta")
            kernel = moe.moe_gemm_kernel(hk.bf16, per_row, weighted, block)
            mine += perf.predict(kernel, a, w, ids.view(-1, 1), blocks.view(-1, 1), padded.view(1, 1), weights, out,
                                 arch=arch).seconds
        return mine

    def predict(self, kernels, arch, m, shape):
        import torch
        import triton.language as tl

        from hk.ops import moe

        mine = self.hk_seconds(arch, m, shape)
        experts, top_k = shape[:2]
        topk_ids = self.routing(m, shape)
        gemms = self.gemms(shape)
        # vLLM: its tile, its assignment.
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
    reduce_segments) as its TritonAttention backend launches it, against hk's paged decode (split
    as tuned) or prefill kernel (its waves per workgroup as tuned; hk.ops.paged), bf16, on
    Qwen3-8B's heads, 16-slot blocks, K and V each a [blocks, 16, K/V heads, head size] cache.
    Decode: `seqs` sequences of CONTEXT keys, one query each; prefill: one causal sequence of
    `tokens` tokens, nothing cached."""

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

    def hk_seconds(self, arch, count, shape):
        """hk's paged decode (the launches of its bucket's tuned parts) or prefill kernel
        (hk.ops.paged) on the bucket's batch."""
        import torch

        from hk import perf, tuned
        from hk.ops import paged

        heads, kvh, d = shape
        qlens, klens = self.batch(count)
        seqs, tokens, bs = len(qlens), sum(qlens), self.BS
        used = -(-max(klens) // bs)
        tables = torch.zeros(seqs, used + self.SPARE_BLOCKS, dtype=torch.int32)  # as wide as the engine's
        tables[:, :used] = torch.arange(seqs * used, dtype=torch.int32).view(seqs, used)
        lens = torch.tensor(klens, dtype=torch.int32)
        starts = torch.tensor([0] + list(itertools.accumulate(qlens)), dtype=torch.int32)
        meta = dict(dtype=torch.bfloat16, device="meta")
        q = torch.empty(tokens, heads * d, **meta).view(-1, d)
        k = torch.empty(seqs * used, 1, bs, kvh * d, **meta)
        o = torch.empty(tokens, heads * d, **meta).view(-1, d)
        scale = d ** -0.5
        if self.fact == "seqs":  # the launches hk.ops makes: the parts are the bucket's tuned choice
            knobs = tuned.lookup(paged.PAGED_DECODE, (seqs, max(klens), heads, kvh, d, bs), arch)
            launches = paged.decode_launches(d, heads // kvh, bs, 1, None, (q, k, k, tables, lens), o, scale, (),
                                             paged.decode_parts(knobs))
            return sum(perf.predict(launch.kernel, *launch.args, arch=arch, **launch.constants).seconds
                       for launch in launches)
        # The waves per workgroup hk.ops launches: the bucket's tuned choice.
        knobs = tuned.lookup(paged.PAGED_PREFILL, (seqs, max(qlens), heads, kvh, d, bs), arch)
        kernel = paged.prefill_of(d, heads // kvh, bs, 1, knobs)
        return perf.predict(kernel, q, k, k, tables, lens, starts, o, scale, max(qlens), arch=arch).seconds

    def predict(self, kernels, arch, count, shape):
        import numpy as np
        import torch

        heads, kvh, d = shape
        mine = self.hk_seconds(arch, count, shape)
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


def _engine_seconds(fn, arch, args, consts, grid, warps, stages=2, options=None):
    from hk import perf

    co, name, lds, values = ek.compile_kernel(fn, arch, args, consts, warps, stages, options)
    from hk.emu import runner

    explicit = len(runner.load(co)[0].kernel(name).explicit_args)
    values = values + [None] * (explicit - len(values))  # Triton's scratch pointers
    return perf.predict_code_object(co, name, grid, (warps * ek.WAVE[arch],), values, arch=arch,
                                    shared_mem=lds).seconds


# ---------------------------------------------------------------------------------------------
# SGLang's own Triton kernels, as its ROCm build launches them (no AITER), against the same hk
# launches as vLLM's: the SGLang plugin routes by these.

# The compiler options SGLang's attention launches pass on ROCm (waves_per_eu as each launch sets it).
_SGLANG_HIP = {"matrix_instr_nonkdim": 16, "kpack": 2}


class SglangFusedMoe(FusedMoe):
    """SGLang's Triton fused_moe_kernel (its fused_experts, which the plugin wraps), both GEMMs
    at the tile its get_default_config picks for bf16 (it ships no tuned file for OLMoE's experts
    on an AMD device) and Triton's default 4 warps and 2 stages, its sorted ids as its
    moe_align_block_size lays them out (always sorted, EM its whole padded buffer), against the
    same hk launches as FusedMoe on the same routing. The align, the activation and the sum are
    not counted."""

    @staticmethod
    def sglang_config(m, experts):
        """The tile SGLang 0.5.23's get_default_config picks for a bf16 MoE of m tokens."""
        if m <= experts:
            return {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}
        return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}

    @staticmethod
    def padded(numel, experts, block_m):
        """The length of SGLang's sorted-ids buffer (its moe_align_block_size's, 4-aligned)."""
        n = numel * block_m if numel < experts + 1 else numel + (experts + 1) * (block_m - 1)
        return (n + 3) // 4 * 4

    def predict(self, kernels, arch, m, shape):
        import numpy as np
        import triton.language as tl

        from hk.ops import moe

        mine = self.hk_seconds(arch, m, shape)
        experts, top_k = shape[:2]
        cfg = self.sglang_config(m, experts)
        bm, bn, bk = cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"], cfg["BLOCK_SIZE_K"]
        numel = m * top_k
        em = self.padded(numel, experts, bm)
        s, e, post = moe.align(self.routing(m, shape), bm, experts)
        # The runs of each expert first (they fit: SGLang sizes its buffer for them), then pads.
        sorted_ids = np.full(em, numel, np.int32)
        sorted_ids[:min(em, s.numel())] = s.numpy()[:em]
        expert_ids = np.full(-(-em // bm), -1, np.int32)
        expert_ids[:min(len(expert_ids), e.numel())] = e.numpy()[:len(expert_ids)]
        P = ek.Ptr
        theirs = 0.0
        for n, k, weighted, per_row in self.gemms(shape):
            args = dict(a_ptr=P("bfloat16", numel // per_row * k * 2), a_desc=None,
                        b_ptr=P("bfloat16", experts * n * k * 2), b_desc=None, bias_ptr=None,
                        c_ptr=P("bfloat16", numel * n * 2), a_scale_ptr=None, b_scale_ptr=None,
                        topk_weights_ptr=P("float32", numel * 4), sorted_token_ids_ptr=P("int32", array=sorted_ids),
                        expert_ids_ptr=P("int32", array=expert_ids),
                        num_tokens_post_padded_ptr=P("int32", array=post.numpy()), add_mask_ptr=None,
                        N=n, K=k, EM=em, num_valid_tokens=numel, stride_am=k, stride_ak=1, stride_be=n * k,
                        stride_bk=1, stride_bn=k, stride_bias_e=0, stride_bias_n=0, stride_cm=n, stride_cn=1,
                        stride_asm=0, stride_ask=0, stride_bse=0, stride_bsk=0, stride_bsn=0)
            consts = dict(group_n=0, group_k=0, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                          GROUP_SIZE_M=cfg["GROUP_SIZE_M"], MUL_ROUTED_WEIGHT=weighted, top_k=per_row,
                          compute_type=tl.bfloat16, use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False,
                          per_channel_quant=False, even_Ks=k % bk == 0, c_sorted=False, swap_ab=False,
                          FUSE_ADD_TO_OUTPUT=False, MASK_OUTPUT=False, FUSE_SUM_ALL_REDUCE=False,
                          ROUTER_TOPK=1 if not weighted else top_k)
            grid = (-(-em // bm) * -(-n // bn),)
            theirs += _engine_seconds(kernels[self.kernel], arch, args, consts, grid, 4, 2)
        return mine, theirs


class SglangFp8BlockScaledMM(Fp8BlockScaledMM):
    """SGLang's Triton block-scaled fp8 GEMM (_w8a8_block_fp8_matmul, which its
    triton_w8a8_block_fp8_linear launches through w8a8_block_fp8_matmul_triton on ROCm without
    AITER) at the config that takes (its tuned json for the device and shape, of which it ships
    none for the four targets at Qwen3-8B's shapes: its default 64 x 128 x 128, GROUP_SIZE_M 32, 4
    warps, 3 stages; its ROCm selector's unrolled-by-4 variant is never chosen), needs_masking as
    it computes it (K not a multiple of BLOCK_SIZE_K: never at these shapes), in the platform's
    fp8; against the same hk launch as Fp8BlockScaledMM's. Its arguments are named as vLLM's
    kernel's. The activations' quantization is not counted."""

    STAGES = 3

    def constexprs(self, k):
        return {"needs_masking": k % self.CONFIG["BLOCK_SIZE_K"] != 0}


class SglangDecodeAttention(PagedAttention):
    """SGLang's Triton decode attention as `sglang serve` runs it on ROCm, bf16, page size 1 (its
    token-slot K and V pools [slots, K/V heads, head size], one index per key), `seqs` sequences
    of CONTEXT keys; against the same hk decode kernel as PagedAttention's. At each bucket the
    kernel SGLang chooses there (runs_lean):

    - its split-K decode (decode_attention_fwd_grouped, its triton backend's path for a GQA
      model: _fwd_grouped_kernel_stage1 over (sequences, head tiles, MAX_SPLITS) with the splits
      per sequence its get_num_kv_splits computes from the device's compute units, then
      _fwd_kernel_stage2 merging them), with the options its ROCm launches pass;
    - or its Lean decode (_lean_attention_decode_kernel: a persistent grid of one program per
      compute unit, each a run of 128-key tiles across the rows of (sequence, K/V head), the
      program that starts a row merging the partial results of the ones that continue it).

    The Lean kernel's programs wait on the locks of the programs whose partial results they
    merge; the emulator runs a few programs alone, so the locks are given as released: the
    wait, which on the GPU overlaps the other programs' equal share of tiles, is not counted."""

    MAX_SPLITS = 16     # triton_attention_num_kv_splits as SGLang sets it on AMD
    MIN_BLOCK_KV = 32   # its _MIN_BLOCK_KV
    BLOCK_H = 16        # its _GROUPED_BLOCK_H

    # When SGLang 0.5.23 runs the Lean kernel instead of split-K, for a GQA layer of head size
    # at most 128 without logit cap, sinks or score mods, on ROCm: its TritonAttnBackend's
    # forward_decode asks sglang.kernels.ops.attention.decode_attention's lean_capture_policy
    # while a decode graph is captured (so a graph replays the kernel chosen for its batch), and
    # lean_decode_seqlen_gate for an eager step. Both judge by the split-K kernel's head tiles,
    # ceil(heads / min(16, group)) (_lean_head_tiles).
    LEAN_CAPTURED = {"min_tiles": 4, "min_batch": 16}
    # Eagerly: Lean when the average context is at least max(floor, base // max(1, batch // relax)),
    # base and relax by the head tiles (the first row whose min_tiles they reach).
    LEAN_EAGER = {"floor": 4096, "tiers": ({"min_tiles": 16, "base": 16384, "relax": 2},
                                           {"min_tiles": 4, "base": 65536, "relax": 2},
                                           {"min_tiles": 0, "base": 131072, "relax": 4})}
    # The batch sizes SGLang captures decode graphs at up to its largest (cuda_graph_hook's
    # generate_decode_cuda_graph_batch_sizes, no speculative decoding, padding on): a batch
    # replays the graph of the smallest one it fits, the largest captured in any case.
    CAPTURE_BS = ((1, 2, 4, 8, 12) + tuple(range(16, 257, 8)) + tuple(range(272, 512, 16)) +
                  tuple(range(512, 4097, 32)))
    # The Lean launch on ROCm (_decode_lean_attention_fwd, _lean_decode_launch_params): 16 query
    # heads a row, 128-key tiles (_lean_decode_block_n up to head size 256), a grid of one
    # program per compute unit (SGLANG_FORCE_LEAN_GRID_CU_MULT's default 1.0), spread over 8
    # XCDs when the rows are one per K/V head and their count a multiple of 8, 4 warps, 2 stages.
    LEAN_BLOCK_M, LEAN_BLOCK_N, LEAN_XCDS = 16, 128, 8
    LEAN_WARPS, LEAN_STAGES = 4, 2

    @property
    def described(self):
        return "%s (split-K) or _lean_attention_decode_kernel (Lean), the one `sglang serve` runs at the bucket" \
            % self.kernel

    @classmethod
    def kv_splits(cls, lens, heads, kvh, cores):
        """SGLang 0.5.23's get_num_kv_splits_triton for one token per sequence."""
        import math

        hi, lo = max(lens), min(lens)
        if hi * 8 < lo * 10:
            lo = hi
        splits_1 = min(-(-hi // lo), cls.MAX_SPLITS)
        chunk_1 = -(-hi // splits_1)
        ext_cores = int(cores * max(math.log2(hi / 64.0), 1.0))
        group = heads // kvh
        grid = len(lens) * (heads if group == 1 else -(-heads // min(cls.BLOCK_H, group)))
        chunk_2 = -(-hi // min(-(-ext_cores // grid), cls.MAX_SPLITS))
        return [max(-(-n // chunk_1), -(-n // chunk_2)) for n in lens]

    @classmethod
    def head_tiles(cls, heads, group):
        return -(-heads // min(cls.BLOCK_H, max(1, group)))

    @classmethod
    def lean_captured(cls, heads, group, batch):
        """lean_capture_policy for a graph captured at `batch` requests."""
        rule = cls.LEAN_CAPTURED
        return batch > 0 and cls.head_tiles(heads, group) >= rule["min_tiles"] and batch >= rule["min_batch"]

    @classmethod
    def lean_eager(cls, heads, group, batch, keys):
        """lean_decode_seqlen_gate for an eager step of `batch` requests of `keys` keys in all."""
        if batch <= 0:
            return False
        tiles = cls.head_tiles(heads, group)
        tier = next(t for t in cls.LEAN_EAGER["tiers"] if tiles >= t["min_tiles"])
        threshold = max(cls.LEAN_EAGER["floor"], tier["base"] // max(1, batch // tier["relax"]))
        return keys / batch >= threshold

    @classmethod
    def graph_batch(cls, seqs, decode_max):
        """The batch of the decode graph a step of `seqs` requests replays (None: it runs
        eagerly, above the largest graph)."""
        if seqs > decode_max:
            return None
        return min([b for b in cls.CAPTURE_BS if seqs <= b <= decode_max] + [decode_max])

    @staticmethod
    def decode_max(arch):
        """The largest batch SGLang's decode graphs capture on arch by default (models.json)."""
        from hk.autotune import cli

        return cli.engines()["sglang"]["decode_max"][arch]

    def runs_lean(self, arch, seqs, shape):
        """Whether `sglang serve` runs the Lean kernel for a decode step of `seqs` sequences of
        CONTEXT keys on arch: a graph's captured choice up to its largest graph, the eager gate's
        above."""
        heads, kvh, d = shape
        if d > 128:  # _lean_head_dim_ok
            return False
        batch = self.graph_batch(seqs, self.decode_max(arch))
        if batch is not None:
            return self.lean_captured(heads, heads // kvh, batch)
        return self.lean_eager(heads, heads // kvh, seqs, seqs * self.CONTEXT)

    def against(self, arch, seqs):
        shape = self.shapes(1)[0]
        batch = self.graph_batch(seqs, self.decode_max(arch))
        kernel = "Lean" if self.runs_lean(arch, seqs, shape) else "split-K"
        if batch is None:
            return "SGLang's %s decode (an eager step: above its largest decode graph, %d)" % (
                kernel, self.decode_max(arch))
        return "SGLang's %s decode (its decode graph of %d request%s)" % (kernel, batch, "s" if batch > 1 else "")

    @classmethod
    def lean_launch(cls, cores, kvh, group):
        """(programs, XCD remap, XCDs) of _lean_decode_launch_params on ROCm."""
        remap = kvh % cls.LEAN_XCDS == 0 and -(-group // cls.LEAN_BLOCK_M) == 1
        programs = max(1, cores)
        if remap:
            return max(programs // cls.LEAN_XCDS * cls.LEAN_XCDS, cls.LEAN_XCDS), True, cls.LEAN_XCDS
        return programs, False, 1

    def predict(self, kernels, arch, count, shape):
        mine = self.hk_seconds(arch, count, shape)
        engine = self.lean_seconds if self.runs_lean(arch, count, shape) else self.split_k_seconds
        return mine, engine(kernels, arch, count, shape)

    @staticmethod
    def cores(arch):
        # get_device_core_count and _lean_num_cus: the device's compute units as ROCm counts
        # them (multi_processor_count; RDNA: its WGPs).
        from hk.perf import device as devices

        return devices.get(None, arch=arch).units

    def _pools(self, count, shape):
        """(key lengths, kv_indptr, kv_indices, the K/V pool) of a bucket, page size 1."""
        import numpy as np

        heads, kvh, d = shape
        _, klens = self.batch(count)
        indptr = np.concatenate([[0], np.cumsum(klens)]).astype(np.int32)
        cache = ek.Ptr("bfloat16", int(indptr[-1]) * kvh * d * 2)
        return klens, indptr, np.arange(indptr[-1], dtype=np.int32), cache

    def lean_launch_of(self, arch, count, shape):
        """(grid, constexprs) of SGLang's Lean launch at a bucket."""
        heads, kvh, d = shape
        group = heads // kvh
        programs, remap, xcds = self.lean_launch(self.cores(arch), kvh, group)
        head_blocks = -(-group // self.LEAN_BLOCK_M)
        rows = kvh * head_blocks
        width = 1 << (d - 1).bit_length()
        consts = dict(kv_group_num=group, NUM_HEAD_BLOCKS=head_blocks, ROWS_PER_XCD=rows // xcds,
                      BLOCK_DMODEL=width, BLOCK_DPE=0, BLOCK_DV=width, BLOCK_M=self.LEAN_BLOCK_M,
                      BLOCK_N=self.LEAN_BLOCK_N, PAGE_SIZE=1, XCD_REMAP=remap, NUM_XCDS=xcds, batch_size=count,
                      total_programs=programs, num_query_heads=heads, num_rows=rows,
                      xcd_programs=programs // xcds, max_output_tile_cnt=-(-heads * count // programs) + 4,
                      Lk=d, Lv=d)
        return (programs,), consts

    def lean_seconds(self, kernels, arch, count, shape):
        """SGLang's Lean decode kernel at a bucket."""
        import numpy as np

        heads, kvh, d = shape
        klens, indptr, indices, cache = self._pools(count, shape)
        grid, consts = self.lean_launch_of(arch, count, shape)
        programs, m, dv = grid[0], self.LEAN_BLOCK_M, consts["BLOCK_DV"]
        tiles = np.cumsum([-(-n // self.LEAN_BLOCK_N) for n in klens]).astype(np.int32)
        P = ek.Ptr
        args = dict(Q=P("bfloat16", count * heads * d * 2), K_Buffer=cache, V_Buffer=cache,
                    Mp=P("float32", programs * m * 4), Lp=P("float32", programs * m * 4),
                    Op=P("float32", programs * m * dv * 4), O=P("bfloat16", count * heads * d * 2),
                    batch_num_block_n=P("int32", array=tiles),
                    locks=P("int32", array=np.ones(programs, np.int32)),  # released (the class's note)
                    kv_indptr=P("int32", array=indptr), kv_indices=P("int32", array=indices), sm_scale=d ** -0.5,
                    v_scale=1.0, stride_qbs=heads * d, stride_qh=d, stride_buf_kbs=kvh * d, stride_buf_kh=d,
                    stride_buf_kpage=kvh * d, stride_buf_ktok=kvh * d, stride_buf_vbs=kvh * d, stride_buf_vh=d,
                    stride_buf_vpage=kvh * d, stride_buf_vtok=kvh * d, stride_obs=heads * d, stride_oh=d)
        return _engine_seconds(kernels["_lean_attention_decode_kernel"], arch, args, consts, grid, self.LEAN_WARPS,
                               self.LEAN_STAGES)

    def split_k_seconds(self, kernels, arch, count, shape):
        """SGLang's split-K decode (both launches) at a bucket."""
        import numpy as np

        heads, kvh, d = shape
        klens, indptr, indices, cache = self._pools(count, shape)
        seqs, splits = len(klens), self.MAX_SPLITS
        nsplits = np.array(self.kv_splits(klens, heads, kvh, self.cores(arch)), np.int32)
        P = ek.Ptr
        logits = P("float32", seqs * heads * splits * d * 4)
        lse = P("float32", seqs * heads * splits * 4)
        rotate = seqs % 2 == 0  # its _rotate_batch on ROCm (an even batch)
        args = dict(Q=P("bfloat16", seqs * heads * d * 2), K_Buffer=cache, V_Buffer=cache, sm_scale_withk=d ** -0.5,
                    kv_indptr=P("int32", array=indptr), kv_indices=P("int32", array=indices),
                    Att_Out=logits, Att_Lse=lse, num_kv_splits=P("int32", array=nsplits), stride_qbs=heads * d,
                    stride_qh=d, stride_buf_kbs=kvh * d, stride_buf_kh=d, stride_buf_vbs=kvh * d, stride_buf_vh=d,
                    stride_buf_kpage=kvh * d, stride_buf_ktok=kvh * d, stride_buf_vpage=kvh * d,
                    stride_buf_vtok=kvh * d, stride_mid_ob=heads * splits * d, stride_mid_oh=splits * d,
                    stride_mid_os=d, Aux0=None, aux0_stride_t=0, aux0_stride_h=0, aux0_len=0, forced_kv_splits=0,
                    uneven_batch=P("int32", array=np.zeros(1, np.int32)) if rotate else None)
        consts = dict(kv_group_num=heads // kvh, q_head_num=heads, BLOCK_DMODEL=d, BLOCK_DPE=0, BLOCK_DV=d,
                      BLOCK_N=32, BLOCK_H=self.BLOCK_H, MIN_BLOCK_KV=self.MIN_BLOCK_KV, logit_cap=0.0,
                      xai_temperature_len=-1, Lk=d, Lv=d, HAS_MLA=False, USE_PDL=False, IS_GFX1250=False, PAGE_SIZE=1,
                      SCORE_MOD=None, USE_FORCED=False, ROTATE_BATCH=rotate)
        tiles = self.head_tiles(heads, heads // kvh)
        theirs = _engine_seconds(kernels["_fwd_grouped_kernel_stage1"], arch, args, consts, (seqs, tiles, splits), 4,
                                 1, dict(_SGLANG_HIP, waves_per_eu=1))
        args = dict(Mid_O=logits, Mid_O_1=lse, O=P("bfloat16", seqs * heads * d * 2), v_scale=1.0,
                    kv_indptr=args["kv_indptr"], num_kv_splits=args["num_kv_splits"], sink_ptr=None,
                    stride_mid_ob=heads * splits * d, stride_mid_oh=splits * d, stride_mid_os=d, stride_obs=heads * d,
                    stride_oh=d)
        consts = dict(MAX_KV_SPLITS=splits, MIN_BLOCK_KV=self.MIN_BLOCK_KV, BLOCK_DV=d, Lv=d, HAS_SINK=False,
                      USE_PDL=False, FORCED_KV_SPLITS=0)
        theirs += _engine_seconds(kernels["_fwd_kernel_stage2"], arch, args, consts, (seqs, heads), 4, 2,
                                  dict(_SGLANG_HIP, waves_per_eu=4))
        return theirs


class SglangExtendAttention(PagedAttention):
    """SGLang's Triton extend attention (extend_attention_fwd's _fwd_kernel, its triton backend's
    prefill) on one causal sequence of `tokens` new tokens, nothing cached (the prefix loop runs
    over no keys), at the tile its ROCm launch picks (gfx950: 128x64, 8 warps; else 64x64, 4
    warps), bf16; against the same hk prefill kernel as PagedAttention's."""

    def predict(self, kernels, arch, count, shape):
        import numpy as np

        heads, kvh, d = shape
        mine = self.hk_seconds(arch, count, shape)
        (tokens,), _ = self.batch(count)
        block_m, block_n, warps = (128, 64, 8) if arch == "gfx950" else (64, 64, 4)
        P = ek.Ptr
        q = P("bfloat16", tokens * heads * d * 2)
        kv = P("bfloat16", tokens * kvh * d * 2)
        zeros = P("int32", array=np.zeros(2, np.int32))
        args = dict(Q_Extend=q, K_Extend=kv, V_Extend=kv, O_Extend=P("bfloat16", tokens * heads * d * 2),
                    LSE_Extend=None, K_Buffer=kv, V_Buffer=kv,
                    qo_indptr=P("int32", array=np.array([0, tokens], np.int32)), kv_indptr=zeros,
                    kv_indices=P("int32", array=np.zeros(1, np.int32)), mask_ptr=None, mask_indptr=zeros,
                    sink_ptr=None, window_kv_offset_ptr=None, sm_scale=d ** -0.5, k_scale=1.0, v_scale=1.0,
                    kv_group_num=heads // kvh, stride_qbs=heads * d, stride_qh=d, stride_kbs=kvh * d, stride_kh=d,
                    stride_vbs=kvh * d, stride_vh=d, stride_obs=heads * d, stride_oh=d, stride_lse_bs=0,
                    stride_lse_h=0, stride_buf_kbs=kvh * d, stride_buf_kh=d, stride_buf_vbs=kvh * d, stride_buf_vh=d,
                    stride_buf_kpage=kvh * d, stride_buf_ktok=kvh * d, stride_buf_vpage=kvh * d,
                    stride_buf_vtok=kvh * d, compact_batch_size=1, Aux0=None, aux0_stride_t=0, aux0_stride_h=0,
                    aux0_len=0)
        consts = dict(SLIDING_WINDOW_SIZE=-1, logit_cap=0.0, xai_temperature_len=-1, Lq=d, Lv=d, BLOCK_DMODEL=d,
                      BLOCK_DPE=0, BLOCK_DV=d, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_N_PREFIX=block_n,
                      USE_CUSTOM_MASK=False, IS_CAUSAL=True, SKIP_PREFIX_CUSTOM_MASK=True, STORE_LSE=False,
                      SKIP_PREFIX=False, SKIP_EXTEND=False, STORE_TRANSPOSE=True, HAS_SINK=False,
                      USE_COMPACT_TILE_GRID=False, USE_EXP2=False, USE_FP8_PREFIX=False, USE_FP8_EXTEND=False,
                      FP8_MAX=1.0, IS_GFX1250=False, PAGE_SIZE=1, IDENTITY_KV_INDICES=False, SCORE_MOD=None)
        theirs = _engine_seconds(kernels[self.kernel], arch, args, consts, (1, heads, -(-tokens // block_m)), warps,
                                 1, dict(_SGLANG_HIP, waves_per_eu=1))
        return mine, theirs
