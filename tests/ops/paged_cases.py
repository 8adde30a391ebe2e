"""Paged attention's test cases: prefill batches in vLLM's paged cache, their reference in torch,
and K and V laid out as vLLM 0.33 lays out a layer's cache."""

import torch


def prefill_case(new, cached, heads, kv_heads, d, bs, blocks=40, seed=1):
    """Sequences of `new[s]` new tokens after `cached[s]` cached ones: the queries, the cache
    (holding every token), block tables, seq_lens and query_start_loc."""
    g = torch.Generator().manual_seed(seed)
    lens = [n + c for n, c in zip(new, cached)]
    q = torch.randn(sum(new), heads, d, generator=g).to(torch.bfloat16)
    kc = torch.randn(blocks, bs, kv_heads, d, generator=g).to(torch.bfloat16)
    vc = torch.randn(blocks, bs, kv_heads, d, generator=g).to(torch.bfloat16)
    most = max(max(-(-n // bs) for n in lens), 1)
    order = torch.randperm(blocks, generator=g)  # each sequence its own blocks, in any order
    tables = torch.stack([order[most * s:most * (s + 1)] for s in range(len(new))]).to(torch.int32)
    starts = torch.tensor([0] + list(torch.tensor(new).cumsum(0)), dtype=torch.int32)
    return q, kc, vc, tables, torch.tensor(lens, dtype=torch.int32), starts, max(new)


def prefill_reference(q, kc, vc, tables, lens, starts, scale):
    _, heads, d = q.shape
    _, bs, kv_heads, _ = kc.shape
    out = torch.zeros(q.shape)
    for s in range(len(lens)):
        a, b, n = int(starts[s]), int(starts[s + 1]), int(lens[s])
        if a == b:
            continue
        blocks = tables[s, :(n + bs - 1) // bs].long()
        k = kc[blocks].reshape(-1, kv_heads, d)[:n].float().repeat_interleave(heads // kv_heads, 1)
        v = vc[blocks].reshape(-1, kv_heads, d)[:n].float().repeat_interleave(heads // kv_heads, 1)
        mask = torch.ones(b - a, n, dtype=torch.bool).tril(n - (b - a))  # token i sees keys up to its own
        out[a:b] = torch.nn.functional.scaled_dot_product_attention(
            q[a:b].float().transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=mask,
            scale=scale).transpose(0, 1)
    return out.to(q.dtype)


def vllm_halves(kc, vc):
    """K and V laid out as vLLM 0.33 lays out a layer's cache: one tensor whose rows hold each
    head's K then its V (stored [blocks, block_size, kv_heads, 2 * head_size], seen by a layer as
    [blocks, kv_heads, block_size, 2 * head_size]), split the way its backends split it."""
    d = kc.shape[-1]
    kv_cache = torch.cat([kc, vc], -1).permute(0, 2, 1, 3)
    key_cache, value_cache = kv_cache.transpose(1, 2).split(d, dim=-1)
    return key_cache, value_cache
