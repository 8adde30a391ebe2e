"""Stand-ins, in torch, for the kernels vLLM's CPU build calls but its PyPI wheel lacks (HK_VLLM_CPU
only; hk_vllm.cpu).

torch.ops._C, which vLLM's CPU platform reaches while serving a model (the others it only probes
with hasattr, and takes another path when they are absent):

    init_cpu_memory_env               CPUWorker.__init__ (binds memory to a NUMA node): nothing to do
    compute_slot_mapping_kernel_impl  the slot of each scheduled token in the paged cache
    greedy_argmax                     the greedy sampler
    fused_gumbel_argmax               the random sampler (Gumbel-max, one seeded stream per request)
    rotary_embedding                  rotary calls hk does not cover (vllm._custom_ops.rotary_embedding)
    silu_and_mul                      SiLU-and-mul calls hk does not cover (SiluAndMul's ROCm forward)
    static_scaled_int8_quant          vllm._custom_ops.scaled_int8_quant: int8 activations with a zero
    dynamic_scaled_int8_quant         point (hk's W8A8 kernel quantizes symmetric ones itself), and
                                      the calls of W8A8 layers hk's kernel does not serve
    static_scaled_fp8_quant           vllm._custom_ops.scaled_fp8_quant with a per-tensor scale (fp8
                                      layers requantize their fused weights with it when loaded)

and the engine's own Triton kernels (which this build cannot run) that the calls hk does not
cover reach: attention's unified_attention and triton_reshape_and_cache_flash, and the
block-scaled fp8 GEMM w8a8_triton_block_scaled_mm.
They compute what the kernels compute, simply; none is meant to be fast.
"""

import torch
import torch.nn.functional as F

from hk_engine.testing.kernels import rotary_embedding

_defined = []


def define():
    """Defines the torch.ops._C stand-ins (once per process)."""
    if _defined:
        return
    lib = torch.library.Library("_C", "FRAGMENT")
    for schema, fn in [
        ("init_cpu_memory_env(int[] nodes) -> ()", init_cpu_memory_env),
        ("compute_slot_mapping_kernel_impl(Tensor query_start_loc, Tensor positions, Tensor block_table, "
         "Tensor(a!) slot_mapping, int block_size) -> ()", compute_slot_mapping),
        ("greedy_argmax(Tensor logits) -> Tensor", greedy_argmax),
        ("fused_gumbel_argmax(Tensor logits, Tensor seeds) -> Tensor", fused_gumbel_argmax),
        ("rotary_embedding(Tensor positions, Tensor(a!) query, Tensor(b!)? key, int head_size, "
         "Tensor cos_sin_cache, bool is_neox, int rope_dim_offset=0, bool inverse=False) -> ()", rotary_embedding),
        ("silu_and_mul(Tensor(a!) out, Tensor input) -> ()", silu_and_mul),
        ("static_scaled_int8_quant(Tensor(a!) out, Tensor input, Tensor scale, Tensor? azp) -> ()",
         static_scaled_int8_quant),
        ("dynamic_scaled_int8_quant(Tensor(a!) out, Tensor input, Tensor(b!) scale, Tensor(c!)? azp) -> ()",
         dynamic_scaled_int8_quant),
        ("static_scaled_fp8_quant(Tensor(a!) out, Tensor input, Tensor scale, int[]? group_shape=None) -> ()",
         static_scaled_fp8_quant),
    ]:
        lib.define(schema)
        lib.impl(schema.split("(")[0], fn, "CompositeExplicitAutograd")
    _defined.append(lib)


def init_cpu_memory_env(nodes):
    return None


def compute_slot_mapping(query_start_loc, positions, block_table, slot_mapping, block_size):
    """slot_mapping[t] = block_table[r, p // block_size] * block_size + p % block_size for each
    token t of request r at position p; the rest of slot_mapping -1 (padding)."""
    starts = query_start_loc.long()
    tokens = int(starts[-1])
    reqs = torch.repeat_interleave(torch.arange(starts.numel() - 1), starts[1:] - starts[:-1])
    pos = positions[:tokens].long()
    blocks = block_table[reqs, pos // block_size].long()
    slot_mapping[:tokens] = blocks * block_size + pos % block_size
    slot_mapping[tokens:] = -1


def greedy_argmax(logits):
    return logits.argmax(dim=-1).view(-1)


def fused_gumbel_argmax(logits, seeds):
    """argmax(logits + Gumbel noise), row i's noise drawn from a generator seeded with seeds[i]."""
    out = torch.empty(logits.shape[0], dtype=torch.long)
    for i in range(logits.shape[0]):
        g = torch.Generator().manual_seed(int(seeds[i]))
        u = torch.rand(logits.shape[1], generator=g, dtype=torch.float64).clamp_(min=1e-300)
        out[i] = torch.argmax(logits[i].double() - torch.log(-torch.log(u)))
    return out


def silu_and_mul(out, x):
    d = x.shape[-1] // 2
    out.copy_(F.silu(x[..., :d].float()) * x[..., d:].float())


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    """Triton's triton_reshape_and_cache_flash for 16-bit and fp32 caches: token t's K and V rows
    at slot slot_mapping[t] (block slot // block_size, row slot % block_size); slot -1 dropped.
    And for an fp8 cache (kv_cache_dtype "fp8" or "fp8_e4m3", the caches viewed as
    float8_e4m3fn): each element x / scale in fp32, saturated to the format's range, as
    Triton's saturating store of it."""
    fp8 = kv_cache_dtype in ("fp8", "fp8_e4m3") and key_cache.dtype == torch.float8_e4m3fn
    if not fp8 and (kv_cache_dtype not in ("auto", "bfloat16", "float16", "float32") or key_cache.dtype != key.dtype):
        raise NotImplementedError("the CPU stand-in of reshape_and_cache_flash writes unquantized and e4m3 caches "
                                  "only, not %s" % kv_cache_dtype)
    slots = slot_mapping[:key.shape[0]].long()
    keep = slots >= 0
    block_size = key_cache.shape[1]
    blocks, rows = slots[keep] // block_size, slots[keep] % block_size
    for cache, x, scale in ((key_cache, key, k_scale), (value_cache, value, v_scale)):
        x = x[:slots.numel()][keep]
        if fp8:
            top = torch.finfo(torch.float8_e4m3fn).max
            x = (x.float() / scale.float()).clamp(-top, top).to(torch.float8_e4m3fn)
        cache[blocks, rows] = x


def unified_attention(q, k, v, out, cu_seqlens_q, max_seqlen_q, seqused_k, max_seqlen_k, softmax_scale, causal,
                      window_size, block_table, softcap, q_descale, k_descale, v_descale, alibi_slopes=None,
                      sinks=None, output_scale=None, mm_prefix_range=None, rswa_prefix_lens=None, **rest):
    """Triton's unified_attention on the paged cache, for unquantized caches and per-tensor e4m3
    ones (each K and V element as Triton's kernel dequantizes it: value * descale rounded to the
    queries' dtype): each sequence's new queries (cu_seqlens_q) against its seqused_k keys, causal
    (the queries are the last of the sequence), with a sliding window (window_size: keys at most
    left behind, right ahead; -1: no limit) and a soft cap. Other variants raise
    NotImplementedError."""
    fp8 = k.dtype == torch.float8_e4m3fn and k_descale is not None and v_descale is not None
    if (alibi_slopes is not None or sinks is not None or output_scale is not None or mm_prefix_range is not None
            or rswa_prefix_lens is not None or q_descale is not None or (k.dtype != q.dtype and not fp8)):
        raise NotImplementedError("the CPU stand-in of unified_attention covers unquantized and e4m3 causal "
                                  "attention with sliding windows and soft caps only")
    if fp8:  # (the descales are one scale, expanded per sequence and head)
        k = (k.float() * k_descale.reshape(-1)[0]).to(q.dtype)
        v = (v.float() * v_descale.reshape(-1)[0]).to(q.dtype)
    heads, kv_heads, block_size = q.shape[1], k.shape[2], k.shape[1]
    left, right = window_size
    starts = cu_seqlens_q.tolist()
    for s in range(len(starts) - 1):
        nq, nk = starts[s + 1] - starts[s], int(seqused_k[s])
        if nq == 0:
            continue
        blocks = block_table[s, :(nk + block_size - 1) // block_size].long()
        keys = k[blocks].reshape(-1, kv_heads, k.shape[-1])[:nk].float().repeat_interleave(heads // kv_heads, 1)
        values = v[blocks].reshape(-1, kv_heads, v.shape[-1])[:nk].float().repeat_interleave(heads // kv_heads, 1)
        query = q[starts[s]:starts[s + 1]].float()
        scores = torch.einsum("qhd,khd->hqk", query, keys) * softmax_scale
        if softcap:
            scores = softcap * torch.tanh(scores / softcap)
        qpos = torch.arange(nk - nq, nk)[:, None]
        kpos = torch.arange(nk)[None, :]
        allowed = torch.ones(nq, nk, dtype=torch.bool)
        if causal:
            allowed &= kpos <= qpos
        if left >= 0:
            allowed &= qpos - kpos <= left
        if right >= 0:
            allowed &= kpos - qpos <= right
        scores = scores.masked_fill(~allowed, float("-inf"))
        out[starts[s]:starts[s + 1]] = torch.einsum("hqk,khd->qhd", scores.softmax(-1), values).to(out.dtype)
    return out


def _to_int8(v, azp=None):
    """fp32 values already divided by their scale: rounded to nearest even, the zero point added,
    saturated to int8 (vLLM's float_to_int32_rn then int32_to_int8)."""
    v = torch.round(v)
    if azp is not None:
        v = v + azp
    return v.clamp(-128, 127).to(torch.int8)


def static_scaled_int8_quant(out, x, scale, azp):
    out.copy_(_to_int8(x.float() / scale.float().reshape(()), None if azp is None else azp.float().reshape(())))


def dynamic_scaled_int8_quant(out, x, scale, azp):
    x2 = x.reshape(-1, x.shape[-1]).float()
    if azp is None:
        s = x2.abs().amax(-1, keepdim=True) / 127.0
        q = _to_int8(x2 / s)
    else:
        hi, lo = x2.amax(-1, keepdim=True), x2.amin(-1, keepdim=True)
        s = (hi - lo) / 255.0
        zp = torch.round(-128.0 - lo / s)
        q = _to_int8(x2 / s, zp)
        azp.copy_(zp.to(torch.int32).reshape(azp.shape))
    scale.copy_(s.reshape(scale.shape))
    out.copy_(q.reshape(out.shape))


def static_scaled_fp8_quant(out, x, scale, group_shape=None):
    if scale.numel() != 1:
        raise NotImplementedError("the CPU stand-in of static_scaled_fp8_quant takes one scale per tensor")
    top = torch.finfo(out.dtype).max
    out.copy_((x.float() / scale.float().reshape(())).clamp(-top, top).to(out.dtype))


def w8a8_block_scaled_mm(A, B, As, Bs, block_size, output_dtype=torch.float16):
    """vLLM's w8a8_triton_block_scaled_mm: A fp8 [..., K] with scales As [..., K/bk], B fp8 [N, K]
    with scales Bs [N/bn, K/bk], each group's product scaled by its two scales, summed in fp32."""
    bn, bk = block_size
    k, n = A.shape[-1], B.shape[0]
    a = A.reshape(-1, k).float() * As.reshape(-1, As.shape[-1]).float().repeat_interleave(bk, 1)[:, :k]
    b = B.float() * Bs.float().repeat_interleave(bn, 0).repeat_interleave(bk, 1)[:n, :k]
    return (a @ b.t()).to(output_dtype).reshape(*A.shape[:-1], n)
