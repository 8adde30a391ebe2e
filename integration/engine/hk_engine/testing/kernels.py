"""Engine kernels in torch, for the CPU modes of the plugins (hk_vllm.cpu, hk_sglang.cpu): what
the engines' CPU builds reach but their PyPI wheels lack. Simple, not fast."""

import torch


def rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox, rope_dim_offset=0, inverse=False):
    """vLLM's rotary embedding in place: the `rot` columns from rope_dim_offset of each head rotate by
    the position's angles (cos_sin_cache [max_position, rot]: cos then sin); inverse rotates back."""
    cos, sin = cos_sin_cache[positions.view(-1).long()].float().chunk(2, dim=-1)  # [tokens, rot / 2]
    if inverse:
        sin = -sin
    rot = cos_sin_cache.shape[-1]
    for t in (query, key):
        if t is None:
            continue
        x = t.view(positions.numel(), -1, head_size)
        part = x[..., rope_dim_offset:rope_dim_offset + rot].float()
        c, s = cos[:, None, :], sin[:, None, :]
        if is_neox:
            x1, x2 = part.chunk(2, dim=-1)
            rotated = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
        else:
            x1, x2 = part[..., 0::2], part[..., 1::2]
            rotated = torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)
        x[..., rope_dim_offset:rope_dim_offset + rot] = rotated.to(t.dtype)
