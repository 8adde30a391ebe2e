"""hk.ops: the kernel library as torch operators (torch.ops.hk.*).

Each op is a torch.library custom op in the `hk` namespace with a fake implementation, so that
torch.compile(fullgraph=True) traces through it, and runs its hk kernels on the runner HK_DEVICE
chooses (a GPU; `interp` or `emu` without one).

Norms (over the last dimension, any leading shape; bf16, fp16 or fp32):

    rms_norm(x, weight=None, eps=1e-6)                 x / sqrt(mean(x^2) + eps) [* weight]
    layer_norm(x, weight=None, bias=None, eps=1e-5)    (x - mean) / sqrt(var + eps) [* weight] [+ bias]
    softmax(x, weight=None)                            exp(x - max) / sum [* weight]

and for each NAME of those: NAME_out(out, x, ...) writes into out; fused_add_NAME(x, residual,
...) returns (NAME(x + residual), x + residual); fused_add_NAME_(x, residual, ...) does the same
in place (x becomes the result, residual the sum), as vLLM's fused_add_rms_norm.

Elementwise (any shape; bf16, fp16 or fp32; computed in fp32), each also as NAME_out(out, ...):

    silu(x), gelu_tanh(x), relu(x)
    silu_and_mul(x), gelu_tanh_and_mul(x)    f(x[..., :d]) * x[..., d:] (vLLM's, out= as its)
    add(x, y), mul(x, y)                      same shapes

GEMM (bf16 or fp16, fp32 accumulation), also as linear_out(out, ...):

    linear(x, weight, bias=None)              x @ weightᵀ (+ bias); weight [N, K], rows may be padded;
                                              up to 32 rows of x: split-K, the parts summed in one order

W4A16 GEMM for AWQ checkpoints (fp16 or bf16 x), also as awq_gemm_out(out, ...):

    awq_gemm(x, qweight, scales, qzeros)      x [..., K] @ W, W = (q - z) * s from qweight [K, N/8]
                                              (AWQ's nibble order), qzeros [K/G, N/8], scales [K/G, N]

W4A16 GEMM for GPTQ checkpoints (fp16 or bf16 x), also as gptq_gemm_out(out, ...):

    gptq_gemm(x, qweight, qzeros, scales, g_idx, use_v2_format=False)
                                              x [..., K] @ W, W = (q - z) * s from qweight [K/8, N]
                                              (packed along K), qzeros [G, N/8], scales [G, N];
                                              g_idx [K] (act-order) or empty (consecutive groups);
                                              v1 zero points are stored minus one. On gfx942 and
                                              gfx950: consecutive groups of a multiple of 128 rows

Mixture of experts (vLLM's fused_moe; bf16 or fp16):

    moe_align_block_size(topk_ids, block_size, num_experts, expert_map=None)
                                              -> (sorted_ids, expert_ids, num_tokens_post_pad)
    moe_gemm_out(out, a, w, topk_weights, sorted_ids, expert_ids, num_tokens_post_pad, top_k,
                 block_size, mul_routed_weight)
                                              out[i] = a[i // top_k] @ w[e]ᵀ (* topk_weights[i])
    fused_moe(x, w1, w2, topk_weights, topk_ids, expert_map=None)
                                              sum_j topk_weights[t, j] * down(silu_and_mul(up(x[t])))

Rotary position embedding, in place (vLLM's rotary_embedding):

    rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox)
                                              q, k [tokens, heads * head_size] (rows may be padded),
                                              cos_sin_cache [max_position, rot], neox or interleaved

Indexed rows (indices int32 or int64, read with no copy):

    embedding(weight, indices)                weight [vocab, dim] -> [*indices.shape, dim]; an index
                                              outside the vocabulary reads zeros (also embedding_out)
    reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="auto",
                            k_scale=None, v_scale=None)
                                              vLLM's flash-layout KV cache write, slot -1 dropped;
                                              kv_cache_dtype "fp8" / "fp8_e4m3": uint8 or float8_e4m3fn
                                              caches of x / scale saturated to e4m3 (k_scale, v_scale
                                              float32 of one element), on every target

Quantization (int8; fp8 e4m3 and e5m2, OCP and FNUZ: torch's clamp-then-cast, QMAX the format's
largest value, 240 for float8_e4m3fnuz; OCP fp8 not on gfx942, whose fp8 is FNUZ), each also _out:

    quant_per_row(x, qdtype) -> (q, scale)    scale = max|row| / QMAX per row ([..., 1] fp32)
    quant(x, scale, qdtype) -> q              one scale for the tensor
    dequant(q, scale, dtype) -> x             per row or per tensor
    rms_norm_dynamic_per_token_quant(x, weight, epsilon, quant_dtype, scale_ub=None, residual=None)
                                              -> (q, scale): vLLM's, one kernel: rms_norm(x (+ residual))
                                              * weight quantized per row (scale [..., 1], at most
                                              scale_ub / QMAX for fp8); the sum written over residual

8-bit GEMMs (hk.ops.mm8; out bf16 or fp16, bias [N] in it), each also NAME_out(out, ...):

    int8_scaled_mm(a, b, scale_a, scale_b, out_dtype, bias=None, azp_adj=None, azp=None)
                                              vLLM's cutlass_scaled_mm(_azp): a int8 [..., K], b int8
                                              [K, N] (the weight transposed, read in place); scale_a
                                              fp32 per tensor or per token [M, 1], scale_b per tensor or
                                              per channel; scale_a * scale_b * (a @ b - azp * azp_adj) + bias,
                                              the product and the zero-point term exact in int32
    scaled_mm(a, b, scale_a, scale_b, out_dtype, bias=None)
                                              torch._scaled_mm: a, b fp8 (e4m3 or e5m2), fp32
                                              accumulation; scales None, per tensor, rowwise ([M, 1],
                                              [1, N]) or 128 x 128 blocks (scale_a [M, K/128], scale_b
                                              [K/128, N/128]); a bf16 or fp16 with fp8 b (W8A16); out
                                              bf16, fp16 or fp32. fp8 formats per target:
                                                OCP (float8_e4m3fn, float8_e5m2): every target; the
                                                  fp8 instruction on gfx1201 and gfx950, else
                                                  converted to 16 bits (on gfx942 decoded from bytes)
                                                FNUZ (float8_e4m3fnuz, float8_e5m2fnuz: vLLM's on
                                                  MI300X): gfx942 only, on its fp8 instruction;
                                                  refused elsewhere, and OCP with FNUZ nowhere

Training:

    dropout(x, p, seed)                       hk.rand's draws (Triton's tl.rand); no mask kept
    layer_norm_backward(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)

Attention (bf16), also as flash_attention_out(out, ...):

    flash_attention(q, k, v, scale, causal=False)   q [B, H, Nq, D], k, v [B, Hkv, Nk, D], D 64 or 128,
                                              scale > 0; causal: query i sees keys up to Nk - Nq + i

Paged attention on vLLM's flash-layout KV cache (bf16 queries and out; the caches bf16, or e4m3
bytes, uint8 or float8_e4m3fn, with k_scale and v_scale), also as _out:

    paged_attention_decode(query, key_cache, value_cache, block_tables, seq_lens, scale, k_scale=None,
                           v_scale=None)
                                              query [seqs, heads, D], caches [blocks, block_size, kv_heads, D]
    paged_attention_prefill(query, key_cache, value_cache, block_tables, seq_lens, query_start_loc,
                            max_query_len, scale, k_scale=None, v_scale=None)
                                              query [tokens, heads, D]: each sequence's new tokens (causal),
                                              from query_start_loc[s] to query_start_loc[s + 1]

and hk.ops.sdpa, a drop-in for torch.nn.functional.scaled_dot_product_attention that runs
flash_attention on the calls it covers and torch's SDPA on the others (hk.ops.sdpa_route says
which and why).
"""

from hk.ops import attention, awq, elementwise, gemm, gptq, indexed, mm8, moe, norms, paged, quantize, rotary, training
from hk.ops import registry
from hk.ops.sdpa import route as sdpa_route, sdpa

OPS = dict(norms.OPS)
OPS.update(elementwise.OPS)
OPS.update(gemm.OPS)
OPS.update(attention.OPS)
for _module in (rotary, indexed, training, quantize, mm8, paged, awq, gptq, moe):
    OPS.update(_module.OPS)

for _name, _op in OPS.items():
    # An op named like a module of this package would hide the module (hk.ops.NAME).
    assert not isinstance(globals().get(_name), type(registry)), "op %s hides the module hk.ops.%s" % (_name, _name)
    globals()[_name] = _op

# The ops whose schedule a search chooses (hk-tune; hk/tuned/<arch>.json), by op name.
TUNABLES = {t.name: t for t in (gemm.LINEAR, gemm.SPLIT_K, attention.ATTENTION, moe.FUSED_MOE,
                                mm8.INT8_SCALED_MM, mm8.SCALED_MM, awq.AWQ_GEMM, paged.PAGED_DECODE,
                                paged.PAGED_PREFILL)}

__all__ = sorted(list(OPS) + ["sdpa", "sdpa_route", "TUNABLES"])
