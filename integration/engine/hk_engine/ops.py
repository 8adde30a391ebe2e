"""The hk side of a patch, whatever the engine: for an op, the facts its routing rules read, what
hk's kernel covers, and its call. A patch adds what only its engine knows (a batch-invariant mode,
a repacked weight) as `uncovered`, and the engine's own call."""

import torch

from hk_engine.plugin import current_arch, dispatch
from hk_engine.routing import dtype_name

HALF = (torch.bfloat16, torch.float16)
FLOATS = HALF + (torch.float32,)


def rows(x):
    """The number of rows of x as [..., K]."""
    return x.numel() // x.shape[-1] if x.shape[-1] else 0


def moe_facts(x, w1, w2, top_k):
    """The routing facts of an MoE experts call on tokens x [m, k] (w1 [E, 2n, k], w2 [E, k, n])."""
    return {"dtype": dtype_name(x.dtype), "m": x.shape[0], "experts": w1.shape[0], "top_k": top_k,
            "n": w2.shape[-1], "k": x.shape[-1]}


def norm_facts(x, fused_add):
    """The routing facts of an RMSNorm call over x's last dimension, plain or with a residual added."""
    return {"dtype": dtype_name(x.dtype), "rows": rows(x), "cols": x.shape[-1],
            "form": "fused_add" if fused_add else "plain"}


def attention_facts(dtype, head_size, heads, kv_heads, seqs, tokens):
    """The routing facts of a paged attention call (prefill or decode)."""
    return {"dtype": dtype_name(dtype), "head_size": head_size, "heads": heads, "kv_heads": kv_heads,
            "seqs": seqs, "tokens": tokens}


def _token_rows(t, tokens):
    """Whether t has a [tokens, C] view whose rows are contiguous (hk's in-place rotary needs one)."""
    try:
        flat = t.view(tokens, -1)
    except RuntimeError:
        return False
    return flat.numel() == 0 or flat.stride(-1) == 1


def rotary_embedding(name, positions, query, key, head_size, cos_sin_cache, is_neox, engine_call, uncovered=None):
    """vLLM's rotary_embedding in place on query and key by hk.ops.rotary_embedding: float q and k
    of one dtype with contiguous heads, a rotated width (cos_sin_cache's) a multiple of 32 and at
    most the head size; neox with a cache in q's dtype or fp32, interleaved on 16-bit q and k with
    a cache of their dtype."""
    import hk.ops

    tokens, rot = positions.numel(), cos_sin_cache.shape[-1]
    step = 32 if not is_neox or rot % 64 == 0 else 16
    if (query.dtype not in FLOATS or (key is not None and key.dtype != query.dtype)
            or cos_sin_cache.dtype not in ((query.dtype, torch.float32) if is_neox else (query.dtype,))
            or (not is_neox and query.dtype not in HALF)):
        uncovered = uncovered or "dtype"
    elif cos_sin_cache.dim() != 2 or rot % 32 or rot > head_size or head_size % step:
        uncovered = uncovered or "shape"
    elif not all(_token_rows(t, tokens) for t in (query, key) if t is not None):
        uncovered = uncovered or "layout"
    facts = {"dtype": dtype_name(query.dtype), "tokens": tokens, "head_size": head_size, "rot": rot,
             "form": "neox" if is_neox else "interleaved"}
    return dispatch(name, "rotary", facts,
                    lambda: hk.ops.rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox),
                    engine_call, uncovered=uncovered)


def silu_and_mul(name, x, engine_call, uncovered=None):
    """silu(x[..., :d]) * x[..., d:] by hk.ops.silu_and_mul, for bf16, fp16 or fp32 x."""
    import hk.ops

    if x.dtype not in FLOATS:
        uncovered = uncovered or "dtype"
    elif x.dim() == 0 or x.shape[-1] % 2:
        uncovered = uncovered or "shape"
    return dispatch(name, "silu_and_mul", {"dtype": dtype_name(x.dtype), "rows": rows(x), "cols": x.shape[-1] // 2},
                    lambda: hk.ops.silu_and_mul(x), engine_call, uncovered=uncovered)


def linear(name, x, weight, bias, engine_call, uncovered=None):
    """x @ weightᵀ (+ bias) by hk.ops.linear, which reads row-strided weights as they are: bf16
    and fp16 x with a weight (and bias) of its dtype."""
    import hk.ops

    if x.dtype not in HALF or weight.dtype != x.dtype or (bias is not None and bias.dtype != x.dtype):
        uncovered = uncovered or "dtype"
    elif weight.dim() != 2 or weight.stride(-1) != 1:
        uncovered = uncovered or "layout"
    return dispatch(name, "linear", {"dtype": dtype_name(x.dtype), "m": rows(x), "n": weight.shape[0],
                                     "k": weight.shape[-1]},
                    lambda: hk.ops.linear(x, weight, bias), engine_call, uncovered=uncovered)


def awq_gemm(name, x, qweight, scales, qzeros, bias, engine_call, uncovered=None):
    """x @ W (+ bias) by hk.ops.awq_gemm from AWQ's tensors as checkpoints hold them: qweight
    [K, N/8] int32 in AWQ's nibble order, qzeros [K/G, N/8], scales [K/G, N]; bf16 or fp16 x with
    scales (and bias) of its dtype, groups a multiple of 16 rows."""
    import hk.ops

    k, groups = qweight.shape[0], scales.shape[0]
    if x.dtype not in HALF or scales.dtype != x.dtype or (bias is not None and bias.dtype != x.dtype):
        uncovered = uncovered or "dtype"
    elif qweight.shape[-1] * 8 != scales.shape[-1] or not groups or k % groups or (k // groups) % 16:
        uncovered = uncovered or "group"

    def hk_call():
        out = hk.ops.awq_gemm(x, qweight, scales, qzeros)
        return out.add_(bias) if bias is not None else out

    return dispatch(name, "awq_gemm", {"dtype": dtype_name(x.dtype), "m": rows(x), "n": scales.shape[-1], "k": k,
                                       "group": k // groups if groups else 0},
                    hk_call, engine_call, uncovered=uncovered)


def scaled_mm_facts(x, n):
    """The routing facts of an 8-bit GEMM of 16-bit activations x [..., k] into n columns."""
    return {"dtype": dtype_name(x.dtype), "m": rows(x), "n": n, "k": x.shape[-1]}


def _scale_b(weight_scale, n):
    """A weight scale per tensor (one element) or per column, as [1, n]; None for another shape."""
    count = weight_scale.numel()
    return weight_scale.reshape(1, n) if count == n else weight_scale.reshape(1) if count == 1 else None


def int8_linear(name, x, weight, weight_scale, bias, engine_call, *, input_scale=None, azp_adj=None,
                quant_azp=None, uncovered=None):
    """x @ weight (+ bias) by hk.ops.int8_scaled_mm, weight int8 [K, N] (column-major, as vLLM's
    cutlass layout keeps it), weight_scale per tensor or per column, activations bf16 or fp16
    quantized to int8 per token (input_scale None) or by the static input_scale. Symmetric
    activations are quantized by hk's quantizers; with a zero point (azp_adj given, the per-tensor
    zero point folded into it when static) by quant_azp(x2d) -> (q, scale, azp or None), the
    engine's own, which hk has no kernel for."""
    import hk.ops

    n, k = weight.shape[-1], x.shape[-1]
    if x.dtype not in HALF or weight.dtype != torch.int8 or (bias is not None and bias.dtype != x.dtype):
        uncovered = uncovered or "dtype"
    elif weight.dim() != 2 or weight.shape[0] != k or _scale_b(weight_scale, n) is None:
        uncovered = uncovered or "shape"
    elif input_scale is not None and input_scale.numel() != 1:
        uncovered = uncovered or "input scale"

    def hk_call():
        x2 = x.reshape(-1, k).contiguous()
        azp = None
        if azp_adj is not None:
            q, scale, azp = quant_azp(x2)
        elif input_scale is None:
            q, scale = hk.ops.quant_per_row(x2, torch.int8)
        else:
            scale = input_scale.reshape(1).float()
            q = hk.ops.quant(x2, scale, torch.int8)
        out = hk.ops.int8_scaled_mm(q, weight, scale, _scale_b(weight_scale, n).float(), x.dtype, bias,
                                    None if azp_adj is None else azp_adj.reshape(1, n), azp)
        return out.view(*x.shape[:-1], n)

    return dispatch(name, "int8_scaled_mm", scaled_mm_facts(x, n), hk_call, engine_call, uncovered=uncovered)


FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)
# The FNUZ formats (vLLM's and SGLang's fp8 on MI300): only the matrix instructions of targets
# whose fp8 format is FNUZ (gfx942) read them.
FNUZ = (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)


def fnuz_target(arch):
    """Whether arch's fp8 is FNUZ (the target facts' fp8_format, which hk.ops.mm8 plans by)."""
    from hk.errors import HKError
    from hk.target import facts

    try:
        return arch is not None and facts.target(arch).fp8_format == "fnuz"
    except HKError:
        return False  # an unknown target: its launch says why


def fnuz_targets():
    """The targets whose fp8 is FNUZ, sorted."""
    from hk.target import facts

    return tuple(a for a in facts.archs() if fnuz_target(a))


def launch_arch():
    """The target hk's launches run for, or None when there is no runner."""
    from hk.errors import LaunchError

    try:
        return current_arch()
    except LaunchError:
        return None  # no runner: the launch says why


def fp8_formats_refusal(weight_dtype, act_dtype, arch=None, fnuz=False):
    """Why hk.ops.scaled_mm cannot multiply fp8 activations of act_dtype by a weight of
    weight_dtype on `arch` (the launch target when None), as (the counter's reason, a sentence
    for a kernel class's can_implement), or None: OCP on every target, FNUZ on the targets whose
    fp8 is FNUZ only, never one of each. `fnuz`: the layer is FNUZ whatever its dtypes say (vLLM
    on a platform whose fp8 is FNUZ converts it so)."""
    if weight_dtype not in FP8 + FNUZ or act_dtype not in FP8 + FNUZ:
        return "dtype", "takes fp8 activations and weights (%s), not %s and %s" % (
            ", ".join(str(d).replace("torch.", "") for d in FP8 + FNUZ), act_dtype, weight_dtype)
    if (weight_dtype in FNUZ) != (act_dtype in FNUZ):
        return "dtype", "takes activations and weights of one fp8 family (OCP or FNUZ), not %s and %s" % (
            act_dtype, weight_dtype)
    arch = arch or launch_arch()
    if (fnuz or weight_dtype in FNUZ) and not fnuz_target(arch):
        return "target", "takes FNUZ fp8 on %s only (their matrix instructions'), not on %s" % (
            " and ".join(fnuz_targets()), arch)
    return None


def fp8_formats_uncovered(weight_dtype, act_dtype, arch=None):
    """fp8_formats_refusal's counter reason, or None."""
    why = fp8_formats_refusal(weight_dtype, act_dtype, arch)
    return why[0] if why else None


def fp8_linear(name, x, weight, weight_scale, bias, out_dtype, quant, engine_call, uncovered=None, act_dtype=None):
    """x @ weight (+ bias) by hk.ops.scaled_mm, weight fp8 [K, N] (column-major, as
    torch._scaled_mm takes it), weight_scale per tensor or per column, x bf16 or fp16 quantized by
    quant(x2d) -> (q, scale), the engine's own quantizer (per tensor or per token, static or
    dynamic, as the layer's scheme says) to act_dtype (the weight's dtype when None), out_dtype
    bf16 or fp16. OCP fp8 on every target; FNUZ (float8_e4m3fnuz, float8_e5m2fnuz) on the
    targets whose fp8 is FNUZ (gfx942), elsewhere the engine's; OCP with FNUZ always the engine's."""
    import hk.ops

    n, k = weight.shape[-1], x.shape[-1]
    if x.dtype not in HALF or out_dtype not in HALF or (bias is not None and bias.dtype != out_dtype):
        uncovered = uncovered or "dtype"
    elif weight.dtype not in FP8 + FNUZ:
        uncovered = uncovered or "dtype"
    elif weight.dim() != 2 or weight.shape[0] != k or _scale_b(weight_scale, n) is None:
        uncovered = uncovered or "shape"
    else:
        uncovered = uncovered or fp8_formats_uncovered(weight.dtype, act_dtype or weight.dtype)

    def hk_call():
        q, scale = quant(x.reshape(-1, k))
        out = hk.ops.scaled_mm(q, weight, scale.float(), _scale_b(weight_scale, n).float(), out_dtype, bias)
        return out.view(*x.shape[:-1], n)

    return dispatch(name, "fp8_scaled_mm", scaled_mm_facts(x, n), hk_call, engine_call, uncovered=uncovered)


BLOCK = (128, 128)  # the weight blocks (N, K) hk.ops.scaled_mm's block scales are of


def fp8_block_linear(name, x, weight, weight_scale, bias, out_dtype, quant, engine_call, uncovered=None,
                     act_dtype=None, block=BLOCK):
    """x @ weightᵀ (+ bias) by hk.ops.scaled_mm with DeepSeek-style block scales: weight fp8
    [N, K] (row-major, as vLLM's block-scaled kernels keep it) with fp32 scales [N/128, K/128],
    one per 128 x 128 block (`block` the layer's), x bf16 or fp16 quantized by quant(x2d) ->
    (q, scale [M, K/128]), the engine's own per-token-per-128-group quantizer, to act_dtype (the
    weight's dtype when None); out_dtype bf16 or fp16. N and K multiples of 128. hk takes the
    scales transposed ([K/128, N/128], b = weightᵀ's shape / 128)."""
    import hk.ops

    n, k = weight.shape[0], weight.shape[-1]
    if x.dtype not in HALF or out_dtype not in HALF or (bias is not None and bias.dtype != out_dtype):
        uncovered = uncovered or "dtype"
    elif weight.dtype not in FP8 + FNUZ or weight_scale.dtype != torch.float32:
        uncovered = uncovered or "dtype"
    elif tuple(block) != BLOCK:
        uncovered = uncovered or "block"
    elif (weight.dim() != 2 or x.shape[-1] != k or n % BLOCK[0] or k % BLOCK[1]
          or tuple(weight_scale.shape) != (n // BLOCK[0], k // BLOCK[1])):
        uncovered = uncovered or "shape"
    else:
        uncovered = uncovered or fp8_formats_uncovered(weight.dtype, act_dtype or weight.dtype)

    def hk_call():
        q, scale = quant(x.reshape(-1, k))
        out = hk.ops.scaled_mm(q, weight.t(), scale.float(), weight_scale.t(), out_dtype, bias)
        return out.view(*x.shape[:-1], n)

    return dispatch(name, "fp8_block_scaled_mm", scaled_mm_facts(x, n), hk_call, engine_call, uncovered=uncovered)
