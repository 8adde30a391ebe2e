"""An SDPA drop-in: `hk.ops.sdpa` takes torch.nn.functional.scaled_dot_product_attention's
arguments, runs hk's flash attention on the shapes it covers, and torch's SDPA on the rest.

    out = hk.ops.sdpa(q, k, v, is_causal=True)        # as F.scaled_dot_product_attention

`route(...)` (hk.ops.sdpa_route) says which runs and why, for a call's arguments.
"""

import math

import torch
import torch.nn.functional as F

from hk.ops import attention


def route(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """None when hk's kernel serves the call, else why torch's SDPA does."""
    if scale is not None and not scale > 0:
        return "scale %r (the kernel takes a positive scale)" % (scale,)
    if attn_mask is not None:
        return "an explicit attn_mask"
    if dropout_p:
        return "dropout"
    if not all(t.dtype == torch.bfloat16 for t in (query, key, value)):
        return "dtype %s (the kernel is bf16)" % query.dtype
    if query.dim() != 4 or key.dim() != 4 or tuple(key.shape) != tuple(value.shape):
        return "shapes other than [batch, heads, tokens, D] with equal k and v"
    b, h, n, d = query.shape
    if d not in attention.KEY_BLOCK or key.shape[0] != b or key.shape[3] != d:
        return "head size %d" % d
    if key.shape[1] != h and not (enable_gqa and key.shape[1] and h % key.shape[1] == 0):
        return "%d query heads and %d K/V heads" % (h, key.shape[1])
    if is_causal and key.shape[2] != n:
        return "a causal mask with %d queries and %d keys" % (n, key.shape[2])
    if query.requires_grad or key.requires_grad or value.requires_grad:
        return "autograd (the kernel is forward only)"
    return None


def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention, through hk where route() allows."""
    if route(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa) is not None:
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                              is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    return torch.ops.hk.flash_attention(query, key, value, float(scale), bool(is_causal))
