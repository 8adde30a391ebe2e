"""The library's kernels at reference shapes, as hk.perf predicts them on each target's device:
the GEMM at 4096^3 and 8192^3, flash attention at B16 H64 HKV8 d128 N8192 on the CDNA targets and
B1 H32 HKV8 d128 N4096 on the RDNA ones, the norm family at 8192 x 4096, paged decode over 32
sequences of 2048 tokens, the 8-bit GEMMs (hk.ops.int8_scaled_mm, hk.ops.scaled_mm) at 4096^3,
the fp8 ones also on FNUZ e4m3 where the target's fp8 is FNUZ (ARCHS: a launch's targets, when
not every one).
Big tensors are meta tensors (zeros that cost no memory); what a kernel reads values of (block
tables, sequence lengths) is real."""

import torch

import hk
import hk.perf
from hk.ops import attention, gemm, mm8, norms, paged
from hk.target import facts

BF16 = torch.bfloat16


def meta(*shape, dtype=BF16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def _gemm(n):
    def call(arch):
        return [hk.perf.predict(gemm.gemm_kernel(hk.bf16, hk.bf16, "ABt"), meta(n, n), meta(n, n), meta(n, n),
                                arch=arch)]
    return call


def _attention(arch):
    b, h, hkv, n = (16, 64, 8, 8192) if arch.startswith("gfx9") else (1, 32, 8, 4096)
    q, k, v, o = meta(b, h, n, 128), meta(b, hkv, n, 128), meta(b, hkv, n, 128), meta(b, h, n, 128)
    return hk.perf.predict_call(attention.launch_attention, q, k, v, 128 ** -0.5, False, o, arch=arch)


def _norm(kind):
    def call(arch):
        x, w, out = meta(8192, 4096), meta(4096), meta(8192, 4096)
        return hk.perf.predict_call(norms.launch, kind, x, None, w, None, 1e-6, out, None, arch=arch)
    return call


def _paged_decode(arch):
    seqs, tokens, block, heads, kv_heads, d = 32, 2048, 16, 32, 8, 128
    blocks = seqs * tokens // block
    query = torch.zeros(seqs, heads, d, dtype=BF16)
    cache = torch.zeros(blocks, block, kv_heads, d, dtype=BF16)
    tables = torch.arange(blocks, dtype=torch.int32).reshape(seqs, tokens // block)
    lens = torch.full((seqs,), tokens, dtype=torch.int32)
    return hk.perf.predict_call(paged.launch_decode, query, cache, cache.clone(), tables, lens, d ** -0.5,
                                torch.zeros_like(query), arch=arch)


def _mm8(kind, n=4096, fp8=torch.float8_e4m3fn):
    """The 8-bit GEMMs as vLLM calls them: a [M, K], b the weight [N, K] transposed (b.t()), bf16
    out. int8: W8A8 with per-token and per-channel scales; fp8 (e4m3, or `fp8`) with per-token and
    per-column scales (row) or 128 x 128 block scales (block); W8A16: bf16 a, e4m3 b, per-column
    scales."""
    def call(arch):
        f32 = torch.float32
        if kind == "int8":
            a, b = meta(n, n, dtype=torch.int8), meta(n, n, dtype=torch.int8).t()
            return hk.perf.predict_call(mm8.launch_int8, a, b, meta(n, 1, dtype=f32), meta(1, n, dtype=f32),
                                        None, None, None, meta(n, n), arch=arch)
        a, b = meta(n, n, dtype=fp8), meta(n, n, dtype=fp8).t()
        if kind == "w8a16":
            return hk.perf.predict_call(mm8.launch_fp8, meta(n, n), b, None, meta(1, n, dtype=f32), None,
                                        meta(n, n), arch=arch)
        if kind == "block":
            scales = meta(n, n // 128, dtype=f32), meta(n // 128, n // 128, dtype=f32)
        else:
            scales = meta(n, 1, dtype=f32), meta(1, n, dtype=f32)
        return hk.perf.predict_call(mm8.launch_fp8, a, b, *scales, None, meta(n, n), arch=arch)
    return call


REFERENCES = {
    "gemm_4096": _gemm(4096),
    "gemm_8192": _gemm(8192),
    "attention_d128": _attention,
    "rms_norm_8192x4096": _norm("rms"),
    "layer_norm_8192x4096": _norm("layer"),
    "softmax_8192x4096": _norm("softmax"),
    "paged_decode_32x2048": _paged_decode,
    "int8_scaled_mm_4096": _mm8("int8"),
    "scaled_mm_fp8_rowwise_4096": _mm8("row"),
    "scaled_mm_fp8_block_4096": _mm8("block"),
    "scaled_mm_w8a16_4096": _mm8("w8a16"),
    "scaled_mm_fnuz_rowwise_4096": _mm8("row", fp8=torch.float8_e4m3fnuz),
    "scaled_mm_fnuz_block_4096": _mm8("block", fp8=torch.float8_e4m3fnuz),
}
# The targets of the launches not on every one: FNUZ where the target's fp8 is FNUZ (hk.ops
# refuses it elsewhere).
_FNUZ = tuple(arch for arch in facts.archs() if facts.target(arch).fp8_format == "fnuz")
ARCHS = {"scaled_mm_fnuz_rowwise_4096": _FNUZ, "scaled_mm_fnuz_block_4096": _FNUZ}


def archs(name):
    """The targets reference launch `name` is predicted on."""
    return ARCHS.get(name, tuple(facts.archs()))


def predicted(name, arch):
    """(percent of the peak, bound) of a reference launch: the slowest of its launches decides."""
    predictions = REFERENCES[name](arch)
    seconds = sum(p.seconds for p in predictions)
    main = max(predictions, key=lambda p: p.seconds)
    return main.percent_of_peak * main.seconds / seconds, main.bound, predictions
